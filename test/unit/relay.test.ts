/**
 * The bulk relays of port-forward, exec and attach over real loopback sockets: reads into reused
 * buffers (relayReads, from a TCP socket as the agent reads a pod's port and from a TLS connection
 * as the API server reads the agent), SPDY DATA frames and WebSocket channel messages (exec output)
 * assembled in reused buffers deliver every byte in order to a reader that keeps stalling, while
 * allocating far fewer buffers than they serve.
 * A buffer handed back too early would show as corrupted bytes here (the data is random).
 */
import {afterEach, describe, expect, it} from '@jest/globals';
import {createHash, randomBytes} from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';
import {SpdyDecoder, SpdyEncoder} from '../../src/daemons/agent/streaming/spdy-frames.js';
import {SpdySession, type SpdyStream} from '../../src/daemons/agent/streaming/spdy-session.js';
import {webSocketCommandStreams} from '../../src/daemons/agent/streaming/remote-command.js';
import {WebSocket, WebSocketServer} from 'ws';
import {BufferPool, relayEnd, relayReads} from '../../src/daemons/shared/serving/relay.js';

const BYTES = 8 * 1024 * 1024;
const cleanup: (() => void)[] = [];
afterEach(() => cleanup.splice(0).forEach((f) => f()));

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function listen<S extends net.Server>(server: S): Promise<number> {
  cleanup.push(() => server.close());
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

/** A TCP server whose reader pauses for a moment after every 256 KiB: the relay must wait, not drop or reuse early. */
async function stallingSink(): Promise<{port: number; received: Promise<Buffer>}> {
  let resolve!: (b: Buffer) => void;
  const received = new Promise<Buffer>((r) => (resolve = r));
  const port = await listen(
    net.createServer((socket) => {
      const chunks: Buffer[] = [];
      let sinceStall = 0;
      socket.on('data', (d: Buffer) => {
        chunks.push(d);
        sinceStall += d.length;
        if (sinceStall > 256 * 1024) {
          sinceStall = 0;
          socket.pause();
          setTimeout(() => socket.resume(), 2);
        }
      });
      socket.on('end', () => resolve(Buffer.concat(chunks)));
    }),
  );
  return {port, received};
}

/** Connects to the sink, then opens the source with `open(onread)` and relays it into the sink. */
async function relayThrough(open: (onread: ReturnType<typeof relayReads>) => net.Socket, buffers: BufferPool): Promise<Buffer> {
  const sink = await stallingSink();
  const to = net.connect({host: '127.0.0.1', port: sink.port});
  await new Promise((r) => to.once('connect', r));
  const from = open(relayReads(() => to, buffers, 64 * 1024));
  relayEnd(from, to);
  cleanup.push(() => from.destroy());
  return sink.received;
}

describe('relayReads', () => {
  it('copies a TCP socket byte for byte into a stalling writer, reusing its read buffers', async () => {
    const data = randomBytes(BYTES);
    const port = await listen(net.createServer((s) => s.end(data)));
    const buffers = new BufferPool(64 * 1024, 32);
    const got = await relayThrough((onread) => net.connect({host: '127.0.0.1', port, onread}), buffers);
    expect(got.length).toBe(BYTES);
    expect(sha(got)).toBe(sha(data));
    // 128 reads of 64 KiB at least; in flight at a time only what the 64 KiB allowance lets through.
    expect(buffers.allocated).toBeLessThan(20);
  });

  it('copies a TLS connection (one record per read) the same way', async () => {
    const ca = await generateCa();
    const serving = await generateServingCertificate(ca, {hosts: [], ips: ['127.0.0.1']});
    const data = randomBytes(BYTES);
    const port = await listen(tls.createServer({cert: serving.certPem, key: serving.keyPem}, (s) => s.end(data)));
    const buffers = new BufferPool(16 * 1024, 128);
    const got = await relayThrough((onread) => tls.connect({host: '127.0.0.1', port, ca: ca.certPem, onread} as tls.ConnectionOptions), buffers);
    expect(sha(got)).toBe(sha(data));
    expect(buffers.allocated).toBeLessThan(BYTES / (16 * 1024) / 4);
  });
});

describe('SpdyStream DATA frames', () => {
  it('carry a large write byte for byte to a client that reads slowly', async () => {
    let session!: SpdySession;
    const port = await listen(net.createServer((socket) => (session = new SpdySession(socket, {idleTimeoutMs: 0}))));
    const client = net.connect({host: '127.0.0.1', port});
    cleanup.push(() => client.destroy());
    const decoder = new SpdyDecoder();
    const payload: Buffer[] = [];
    let finished!: () => void;
    const fin = new Promise<void>((r) => (finished = r));
    client.on('data', (bytes: Buffer) => {
      for (const frame of decoder.push(bytes)) {
        if (frame.type !== 'data') continue;
        payload.push(frame.data);
        if (frame.fin) finished();
      }
      client.pause();
      setTimeout(() => client.resume(), 1);
    });
    await new Promise((r) => client.once('connect', r));
    while (!session) await new Promise((r) => setTimeout(r, 5));
    const opened = new Promise<SpdyStream>((r) => session.once('stream', r));
    client.write(new SpdyEncoder().synStream(1, {streamtype: ['data']}));
    const stream = await opened;
    const data = randomBytes(BYTES);
    // Writes of odd sizes, some above the 64 KiB frame size, without waiting: the stream buffers them.
    for (let at = 0, size = 1000; at < data.length; at += size, size = (size * 7) % 200_000 + 1) stream.write(data.subarray(at, at + size));
    stream.end();
    await fin;
    expect(sha(Buffer.concat(payload))).toBe(sha(data));
    session.destroy();
  });
});

describe('WebSocket channel messages', () => {
  it('carry a large stdout byte for byte, each on the stdout channel, to a client that reads slowly', async () => {
    // More than loopback's socket buffers hold, so that messages wait in the server's writable buffer.
    const data = randomBytes(3 * BYTES);
    const server = new WebSocketServer({port: 0, host: '127.0.0.1', handleProtocols: () => 'v5.channel.k8s.io'});
    cleanup.push(() => server.close());
    await new Promise((r) => server.once('listening', r));
    server.once('connection', (ws) => {
      const streams = webSocketCommandStreams(ws, 'v5.channel.k8s.io', {stdin: false, stdout: true, stderr: false, tty: false});
      // Odd sizes, some above a message buffer (64 KiB), without waiting: the writer buffers them.
      for (let at = 0, size = 1000; at < data.length; at += size, size = (size * 7) % 200_000 + 1) streams.stdout!.write(data.subarray(at, at + size));
      streams.stdout!.end(() => void streams.finish({kind: 'success'}));
    });
    const client = new WebSocket(`ws://127.0.0.1:${(server.address() as net.AddressInfo).port}`, 'v5.channel.k8s.io');
    cleanup.push(() => client.terminate());
    const stdout: Buffer[] = [];
    const channels = new Set<number>();
    client.on('message', (message: Buffer) => {
      channels.add(message[0]);
      if (message[0] === 1) stdout.push(message.subarray(1));
      // Long stalls now and then: the socket's buffers fill and messages wait in the server's writer.
      if (stdout.length % 50 === 1) {
        client.pause();
        setTimeout(() => client.resume(), 100);
      }
    });
    await new Promise((r) => client.once('close', r));
    expect(sha(Buffer.concat(stdout))).toBe(sha(data));
    expect([...channels].sort()).toEqual([1, 3]); // stdout, then the Status on the error channel
  });
});
