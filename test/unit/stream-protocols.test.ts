/**
 * The pure parts of exec, attach and port-forward: the WebSocket channel codec of each subprotocol,
 * protocol negotiation in the client's order, the stream options of a request, the resize stream's
 * JSON sequence, the error stream's Status for each outcome, and the query the API server sends
 * on to the agent.
 */
import {describe, expect, it} from '@jest/globals';
import {CHANNEL_PROTOCOLS, channelProtocol, chooseProtocol, decodeChannelMessage, encodeChannelMessage} from '../../src/daemons/agent/streaming/channels.js';
import {ResizeDecoder, outcomeStatus, streamOptions} from '../../src/daemons/agent/streaming/remote-command.js';
import {agentQuery} from '../../src/daemons/apiserver/pod-streams.js';

describe('channel messages', () => {
  it('binary protocols prefix the channel byte', () => {
    const v5 = channelProtocol('v5.channel.k8s.io');
    expect(encodeChannelMessage(v5, 1, Buffer.from('out'))).toEqual(Buffer.from([1, ...Buffer.from('out')]));
    expect(decodeChannelMessage(v5, Buffer.from([0, 104, 105]))).toEqual({kind: 'data', channel: 0, data: Buffer.from('hi')});
  });
  it('v5 closes a channel with 255 then its number; older protocols treat 255 as data', () => {
    expect(decodeChannelMessage(channelProtocol('v5.channel.k8s.io'), Buffer.from([255, 0]))).toEqual({kind: 'close', channel: 0});
    expect(decodeChannelMessage(channelProtocol('v4.channel.k8s.io'), Buffer.from([255, 0]))).toEqual({kind: 'data', channel: 255, data: Buffer.from([0])});
  });
  it('base64 protocols use an ASCII digit and base64', () => {
    const b64 = channelProtocol('v4.base64.channel.k8s.io');
    expect(encodeChannelMessage(b64, 1, Buffer.from('hi\n'))).toBe('1aGkK');
    expect(decodeChannelMessage(b64, Buffer.from('0aGkK'))).toEqual({kind: 'data', channel: 0, data: Buffer.from('hi\n')});
  });
  it('v4 and later carry a Status on the error channel, older ones text', () => {
    expect(channelProtocol('v4.channel.k8s.io').statusErrors).toBe(true);
    expect(channelProtocol('channel.k8s.io').statusErrors).toBe(false);
    expect(channelProtocol('').statusErrors).toBe(false);
  });
  it('an empty message is ignored', () => {
    expect(decodeChannelMessage(channelProtocol('v5.channel.k8s.io'), Buffer.alloc(0))).toEqual({kind: 'ignore'});
  });
});

describe('protocol negotiation', () => {
  it('takes the first of the client\'s protocols the server has', () => {
    expect(chooseProtocol(['v5.channel.k8s.io', 'v4.channel.k8s.io'], CHANNEL_PROTOCOLS)).toBe('v5.channel.k8s.io');
    expect(chooseProtocol(['v9.channel.k8s.io', 'channel.k8s.io'], CHANNEL_PROTOCOLS)).toBe('channel.k8s.io');
    expect(chooseProtocol([], CHANNEL_PROTOCOLS)).toBe('');
    expect(chooseProtocol(['nope'], CHANNEL_PROTOCOLS)).toBeUndefined();
  });
});

describe('stream options', () => {
  it('reads "1" and "true", and carries stderr on the terminal with a TTY', () => {
    expect(streamOptions(new URLSearchParams('stdin=1&stdout=true&stderr=1&tty=1'))).toEqual({stdin: true, stdout: true, stderr: false, tty: true});
    expect(streamOptions(new URLSearchParams('stdout=1&stderr=1'))).toEqual({stdin: false, stdout: true, stderr: true, tty: false});
  });
  it('refuses a request for no stream at all, in upstream\'s words', () => {
    expect(streamOptions(new URLSearchParams('tty=1'))).toEqual({error: 'you must specify at least 1 of stdin, stdout, stderr'});
  });
});

describe('resize stream', () => {
  it('decodes a sequence of sizes split anywhere', () => {
    const d = new ResizeDecoder();
    expect(d.push('{"Width":80,"Heig')).toEqual([]);
    expect(d.push('ht":24}{"Width":100,"Height":30}')).toEqual([{width: 80, height: 24}, {width: 100, height: 30}]);
  });
});

describe('error stream Status', () => {
  it('success, a non-zero exit with its ExitCode cause, an internal error', () => {
    expect(outcomeStatus({kind: 'success'})).toEqual({metadata: {}, status: 'Success'});
    expect(outcomeStatus({kind: 'exit', code: 3, command: ['sh', '-c', 'exit 3']})).toEqual({
      metadata: {},
      status: 'Failure',
      message: 'command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3',
      reason: 'NonZeroExitCode',
      details: {causes: [{reason: 'ExitCode', message: '3'}]},
    });
    expect(outcomeStatus({kind: 'error', message: 'boom'})).toMatchObject({status: 'Failure', reason: 'InternalError', code: 500, message: 'Internal error occurred: boom'});
  });
});

describe('the query the API server sends to the agent', () => {
  it('exec: flags as "1", every command word in order, nothing else', () => {
    const q = agentQuery('exec', new URLSearchParams('command=sh&command=-c&command=echo%20hi&stdin=true&stdout=true&stderr=false&tty=false&container=app&foo=bar'));
    expect(q.toString()).toBe('stdin=1&stdout=1&command=sh&command=-c&command=echo+hi');
  });
  it('attach drops a command; portforward passes the ports', () => {
    expect(agentQuery('attach', new URLSearchParams('command=x&stdin=1&tty=1')).toString()).toBe('stdin=1&tty=1');
    expect(agentQuery('portforward', new URLSearchParams('ports=80&ports=443')).toString()).toBe('port=80&port=443');
  });
});
