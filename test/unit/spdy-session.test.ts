/**
 * The server side of a SPDY connection over a real loopback socket, driven by a client made of the
 * codec: every SYN_STREAM is answered with a SYN_REPLY before any data, data and FIN reach the
 * stream, the stream's writes come back as DATA frames, RST_STREAM destroys it, client PINGs are
 * echoed, garbage ends the connection with GOAWAY(PROTOCOL_ERROR), and the idle timeout closes a
 * silent connection.
 */
import {afterEach, describe, expect, it} from '@jest/globals';
import net from 'node:net';
import {SpdyDecoder, SpdyEncoder, type SpdyFrame} from '../../src/daemons/agent/streaming/spdy-frames.js';
import {SpdySession, type SpdyStream} from '../../src/daemons/agent/streaming/spdy-session.js';

interface Pair {
  session: SpdySession;
  client: net.Socket;
  frames: SpdyFrame[];
  encoder: SpdyEncoder;
  next(predicate: (f: SpdyFrame) => boolean): Promise<SpdyFrame>;
}

const servers: net.Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

async function pair(idleTimeoutMs = 0): Promise<Pair> {
  let resolveSession!: (s: SpdySession) => void;
  const sessionReady = new Promise<SpdySession>((r) => (resolveSession = r));
  const server = net.createServer((socket) => resolveSession(new SpdySession(socket, {idleTimeoutMs})));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const client = net.connect({host: '127.0.0.1', port: (server.address() as net.AddressInfo).port});
  const decoder = new SpdyDecoder();
  const frames: SpdyFrame[] = [];
  const waiters: {predicate: (f: SpdyFrame) => boolean; resolve: (f: SpdyFrame) => void}[] = [];
  client.on('data', (bytes: Buffer) => {
    for (const frame of decoder.push(bytes)) {
      frames.push(frame);
      for (const w of [...waiters]) if (w.predicate(frame)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(frame);
      }
    }
  });
  const session = await sessionReady;
  return {
    session, client, frames, encoder: new SpdyEncoder(),
    next: (predicate) => {
      const seen = frames.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({predicate, resolve}));
    },
  };
}

describe('SpdySession', () => {
  it('replies to a new stream, delivers its data and FIN, and sends what the stream writes', async () => {
    const p = await pair();
    const opened = new Promise<SpdyStream>((r) => p.session.once('stream', r));
    p.client.write(p.encoder.synStream(1, {streamtype: ['stdin']}));
    const stream = await opened;
    expect(stream.header('streamType')).toBe('stdin');
    expect(await p.next((f) => f.type === 'synReply')).toMatchObject({type: 'synReply', streamId: 1});
    let received = '';
    stream.on('data', (d: Buffer) => (received += d));
    const ended = new Promise((r) => stream.once('end', r));
    p.client.write(Buffer.concat([p.encoder.data(1, Buffer.from('abc')), p.encoder.data(1, Buffer.from('def'), true)]));
    await ended;
    expect(received).toBe('abcdef');
    stream.end(Buffer.alloc(100_000, 120));
    const fin = await p.next((f) => f.type === 'data' && f.fin);
    const payload = p.frames.filter((f): f is Extract<SpdyFrame, {type: 'data'}> => f.type === 'data').reduce((n, f) => n + f.data.length, 0);
    expect(fin).toMatchObject({streamId: 1});
    expect(payload).toBe(100_000);
    expect(p.session.activeStreams).toBe(0);
    p.client.destroy();
  });

  it('destroys a stream on RST_STREAM and echoes client pings', async () => {
    const p = await pair();
    const opened = new Promise<SpdyStream>((r) => p.session.once('stream', r));
    p.client.write(p.encoder.synStream(3, {streamtype: ['data']}));
    const stream = await opened;
    const closed = new Promise((r) => stream.once('close', r));
    p.client.write(p.encoder.rstStream(3, 5));
    await closed;
    p.client.write(p.encoder.ping(7));
    expect(await p.next((f) => f.type === 'ping')).toEqual({type: 'ping', id: 7});
    p.client.destroy();
  });

  it('ends the connection with GOAWAY(PROTOCOL_ERROR) on bytes that are no SPDY/3 frame', async () => {
    const p = await pair();
    const closed = new Promise<void>((r) => p.session.once('close', () => r()));
    p.client.write(Buffer.from([0x80, 0x02, 0, 1, 0, 0, 0, 0]));
    expect(await p.next((f) => f.type === 'goAway')).toMatchObject({type: 'goAway', status: 1});
    await closed;
    p.client.destroy();
  });

  it('closes a connection without frames after the idle timeout', async () => {
    const p = await pair(200);
    const clientClosed = new Promise((r) => p.client.once('close', r));
    await new Promise<void>((r) => p.session.once('close', () => r()));
    await clientClosed;
  });
});
