/**
 * exec and attach streams, as the kubelet's remotecommand server sets them up for either
 * transport: over SPDY the client opens one stream per part (error, stdin, stdout, stderr,
 * resize) named by its `streamType` header, and the server waits for all it expects; over
 * WebSocket the parts are channels of one connection. The end of a command is written on the error
 * stream: a Status object from v4 on (NonZeroExitCode with an ExitCode cause, which kubectl turns into
 * `command terminated with exit code N`), plain text before.
 */
import {PassThrough, Writable, type Readable} from 'node:stream';
import type {WebSocket} from 'ws';
import {Channel, channelProtocol, decodeChannelMessage, encodeChannelMessage} from './channels.js';
import type {SpdySession, SpdyStream} from './spdy-session.js';
import {BufferPool, RELAY_LIMIT} from '../../shared/serving/relay.js';

/**
 * Binary channel messages (the channel byte, then up to a pipe read of output) are assembled in
 * reused buffers, each taken back once ws has written it: a new buffer per message kept V8 in
 * back-to-back mark-compacts on large output (`kubectl cp` from a pod, see the relay's notes).
 */
const MESSAGE_BUFFERS = new BufferPool(1 + 64 * 1024, (2 * RELAY_LIMIT) / (64 * 1024));

/** The SPDY stream protocols of exec and attach, newest first (upstream's SupportedStreamingProtocols). */
export const SPDY_COMMAND_PROTOCOLS = ['v4.channel.k8s.io', 'v3.channel.k8s.io', 'v2.channel.k8s.io', 'channel.k8s.io'];

/** The shortest time from a WebSocket handshake to the end of its command (see finish). */
const MIN_WEBSOCKET_LIFETIME_MS = 250;

/** How long the client gets to open the streams it announced (upstream's streamCreationTimeout). */
export const STREAM_CREATION_TIMEOUT_MS = 30_000;

export interface StreamOptions {
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

const truthy = (v: string | null) => v === '1' || v === 'true';

/** upstream's remotecommand NewOptions: the parts asked for; a TTY carries stderr on stdout. */
export function streamOptions(query: URLSearchParams): StreamOptions | {error: string} {
  const tty = truthy(query.get('tty'));
  const stdin = truthy(query.get('stdin'));
  const stdout = truthy(query.get('stdout'));
  const stderr = truthy(query.get('stderr')) && !tty;
  if (!stdin && !stdout && !truthy(query.get('stderr'))) return {error: 'you must specify at least 1 of stdin, stdout, stderr'};
  return {stdin, stdout, stderr, tty};
}

export type CommandOutcome = {kind: 'success'} | {kind: 'exit'; code: number; command: string[]} | {kind: 'error'; message: string};

/** The error stream's Status for an outcome (v4+), as the kubelet marshals it (no kind or apiVersion). */
export function outcomeStatus(outcome: CommandOutcome): Record<string, unknown> {
  switch (outcome.kind) {
    case 'success':
      return {metadata: {}, status: 'Success'};
    case 'exit':
      return {
        metadata: {},
        status: 'Failure',
        message: `command terminated with non-zero exit code: error executing command [${outcome.command.join(' ')}], exit code ${outcome.code}`,
        reason: 'NonZeroExitCode',
        details: {causes: [{reason: 'ExitCode', message: String(outcome.code)}]},
      };
    case 'error':
      return {
        metadata: {},
        status: 'Failure',
        message: `Internal error occurred: ${outcome.message}`,
        reason: 'InternalError',
        details: {causes: [{message: outcome.message}]},
        code: 500,
      };
  }
}

/** What protocols before v4 write on the error stream: the message alone, nothing on success. */
function outcomeText(outcome: CommandOutcome): string {
  if (outcome.kind === 'success') return '';
  return String(outcomeStatus(outcome).message);
}

export interface TerminalSize {
  width: number;
  height: number;
}

export interface CommandStreams {
  stdin: Readable | null;
  stdout: Writable | null;
  stderr: Writable | null;
  onResize(listener: (size: TerminalSize) => void): void;
  /** Writes the outcome on the error stream and closes the connection, once stdout and stderr are flushed. */
  finish(outcome: CommandOutcome): Promise<void>;
  /** Resolves when the connection ends (the client went away, or after finish). */
  readonly closed: Promise<void>;
}

/** Decodes the resize stream: a sequence of `{"Width":W,"Height":H}` objects. */
export class ResizeDecoder {
  private buffer = '';
  push(chunk: Buffer | string): TerminalSize[] {
    this.buffer += chunk.toString();
    const sizes: TerminalSize[] = [];
    for (;;) {
      const end = this.buffer.indexOf('}');
      if (end < 0) break;
      const text = this.buffer.slice(this.buffer.indexOf('{'), end + 1);
      this.buffer = this.buffer.slice(end + 1);
      try {
        const size = JSON.parse(text) as {Width?: number; Height?: number};
        sizes.push({width: Number(size.Width ?? 0), height: Number(size.Height ?? 0)});
      } catch {
        // A malformed size is dropped, as upstream logs and ignores it.
      }
    }
    return sizes;
  }
}

function endWritable(stream: Writable | null): Promise<void> {
  if (!stream || stream.writableFinished || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('finish', resolve);
    stream.once('close', resolve);
    stream.end();
  });
}

/**
 * Waits for the streams the options announce on a SPDY connection; rejects after the creation
 * timeout with upstream's message.
 */
export function spdyCommandStreams(session: SpdySession, protocol: string, options: StreamOptions, timeoutMs = STREAM_CREATION_TIMEOUT_MS): Promise<CommandStreams> {
  const expected = new Set<string>(['error']);
  if (protocol === '') expected.delete('error');
  if (options.stdin) expected.add('stdin');
  if (options.stdout) expected.add('stdout');
  if (options.stderr) expected.add('stderr');
  if (options.tty && (protocol === 'v3.channel.k8s.io' || protocol === 'v4.channel.k8s.io')) expected.add('resize');
  const got = new Map<string, SpdyStream>();
  const closed = new Promise<void>((resolve) => session.once('close', resolve));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      session.off('stream', onStream);
      reject(new Error('timed out waiting for client to create streams'));
    }, timeoutMs);
    timer.unref();
    const onStream = (stream: SpdyStream) => {
      const type = stream.header('streamtype') ?? '';
      if (!expected.has(type) || got.has(type)) {
        stream.reset();
        return;
      }
      got.set(type, stream);
      if (got.size < expected.size) return;
      clearTimeout(timer);
      session.off('stream', onStream);
      const error = got.get('error');
      const stdout = got.get('stdout') ?? null;
      const stderr = got.get('stderr') ?? null;
      const resizeListeners: ((size: TerminalSize) => void)[] = [];
      const resize = got.get('resize');
      if (resize) {
        const decoder = new ResizeDecoder();
        resize.on('data', (chunk: Buffer) => decoder.push(chunk).forEach((size) => resizeListeners.forEach((l) => l(size))));
      }
      // Output of a client that stopped reading is dropped rather than crashing the agent.
      for (const s of got.values()) s.on('error', () => {});
      const stdin = got.get('stdin') ?? null;
      // Streams the server only writes to: their readable side is drained so that they can close.
      for (const s of [error, stdout, stderr]) s?.resume();
      resolve({
        stdin,
        stdout,
        stderr,
        onResize: (listener) => resizeListeners.push(listener),
        finish: async (outcome) => {
          await Promise.all([endWritable(stdout), endWritable(stderr)]);
          if (error && session.open) {
            const body = protocol === 'v4.channel.k8s.io' ? JSON.stringify(outcomeStatus(outcome)) : outcomeText(outcome);
            if (body) error.write(body);
            await endWritable(error);
          }
          stdin?.destroy();
          resize?.destroy();
          session.close();
        },
        closed,
      });
    };
    session.on('stream', onStream);
  });
}

/** The channels of a WebSocket connection as exec and attach streams. */
export function webSocketCommandStreams(ws: WebSocket, protocolName: string, options: StreamOptions): CommandStreams {
  const protocol = channelProtocol(protocolName);
  const openedAt = Date.now();
  const send = (channel: number, data: Buffer, callback?: (error?: Error | null) => void) => {
    if (ws.readyState !== ws.OPEN) return callback?.(new Error('connection closed'));
    if (protocol.base64 || data.length >= MESSAGE_BUFFERS.size) {
      ws.send(encodeChannelMessage(protocol, channel, data), {binary: !protocol.base64}, (err) => callback?.(err ?? null));
      return;
    }
    const buffer = MESSAGE_BUFFERS.take();
    buffer[0] = channel;
    data.copy(buffer, 1);
    ws.send(buffer.subarray(0, 1 + data.length), {binary: true}, (err) => {
      MESSAGE_BUFFERS.give(buffer);
      callback?.(err ?? null);
    });
  };
  // Output waits for ws only past the relay allowance (one message in flight at a time stalls a
  // pipe of output at every message); an error after that shows as the connection's close.
  const writer = (channel: number) =>
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        const early = ws.bufferedAmount <= RELAY_LIMIT;
        send(channel, chunk, (err) => {
          if (!early) callback(err && ws.readyState === ws.OPEN ? err : null);
        });
        if (early) callback();
      },
    });
  const stdin = options.stdin ? new PassThrough() : null;
  const stdout = options.stdout ? writer(Channel.stdout) : null;
  const stderr = options.stderr ? writer(Channel.stderr) : null;
  const resizeListeners: ((size: TerminalSize) => void)[] = [];
  const resize = new ResizeDecoder();
  const closed = new Promise<void>((resolve) => ws.once('close', () => resolve()));
  ws.on('error', () => {});
  ws.on('message', (raw: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) => {
    const message = Buffer.isBuffer(raw) ? raw : Array.isArray(raw) ? Buffer.concat(raw) : Buffer.from(raw);
    const decoded = decodeChannelMessage(protocol, isBinary || !protocol.base64 ? message : Buffer.from(message.toString('latin1'), 'latin1'));
    if (decoded.kind === 'close') {
      if (decoded.channel === Channel.stdin) stdin?.end();
      return;
    }
    if (decoded.kind !== 'data') return;
    if (decoded.channel === Channel.stdin && stdin && !stdin.writableEnded) stdin.write(decoded.data);
    if (decoded.channel === Channel.resize) resize.push(decoded.data).forEach((size) => resizeListeners.forEach((l) => l(size)));
  });
  void closed.then(() => {
    if (stdin && !stdin.writableEnded) stdin.end();
  });
  // An empty message on the lowest writable channel tells the client the connection is ready (upstream does the same).
  send(options.stdout ? Channel.stdout : options.stderr ? Channel.stderr : Channel.error, Buffer.alloc(0));
  return {
    stdin,
    stdout,
    stderr,
    onResize: (listener) => resizeListeners.push(listener),
    finish: async (outcome) => {
      // A command that ends at once (one that cannot start) would otherwise send its Status in the
      // same instant as the handshake, and kubectl can read it before it has set up its streams
      // (it then logs "Unknown stream id 3, discarding message" and loses the exit).
      const age = Date.now() - openedAt;
      if (age < MIN_WEBSOCKET_LIFETIME_MS) await new Promise((r) => setTimeout(r, MIN_WEBSOCKET_LIFETIME_MS - age));
      await Promise.all([endWritable(stdout), endWritable(stderr)]);
      const body = protocol.statusErrors ? JSON.stringify(outcomeStatus(outcome)) : outcomeText(outcome);
      if (body) await new Promise<void>((resolve) => send(Channel.error, Buffer.from(body), () => resolve()));
      if (ws.readyState === ws.OPEN) ws.close(1000);
    },
    closed,
  };
}
