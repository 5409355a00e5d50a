/**
 * Port forwarding over SPDY (`portforward.k8s.io`), as the kubelet's portforward httpStreamHandler
 * serves it: for each connection the client opens an error stream and a data stream with the same
 * `requestID` and `port` headers; once both are there the agent connects to the port (pods share
 * the host's network here, so 127.0.0.1) and copies bytes both ways. A failure is written on the
 * error stream in upstream's words (`error forwarding port P to pod NAME, uid UID: ...`), which
 * kubectl prints as `an error occurred forwarding L -> P: ...`.
 */
import net from 'node:net';
import type {SpdySession, SpdyStream} from './spdy-session.js';
import {TCP_READ_BUFFERS, relay, relayEnd, relayReads} from '../../shared/serving/relay.js';

export const PORT_FORWARD_PROTOCOL = 'portforward.k8s.io';

/** How long the second stream of a pair may take (upstream's streamCreationTimeout). */
const PAIR_TIMEOUT_MS = 30_000;

export interface PortForwardTarget {
  /** `name_namespace`, as upstream names the pod in its messages. */
  podRef: string;
  uid: string;
}

interface Pair {
  error?: SpdyStream;
  data?: SpdyStream;
  timer: NodeJS.Timeout;
}

export function servePortForward(session: SpdySession, target: PortForwardTarget, host = '127.0.0.1'): void {
  const pairs = new Map<string, Pair>();
  const sockets = new Set<net.Socket>();
  session.on('close', () => {
    for (const socket of sockets) socket.destroy();
    for (const pair of pairs.values()) clearTimeout(pair.timer);
    pairs.clear();
  });
  session.on('stream', (stream) => {
    stream.on('error', () => {});
    const type = stream.header('streamtype');
    const port = Number(stream.header('port'));
    // kubectl always sends requestID; old clients without it pair a data stream with the error stream before it.
    const requestId = stream.header('requestid') ?? String(type === 'data' ? stream.id - 2 : stream.id);
    if ((type !== 'error' && type !== 'data') || !Number.isInteger(port) || port <= 0 || port > 65535) {
      stream.reset();
      return;
    }
    let pair = pairs.get(requestId);
    if (!pair) {
      const timer = setTimeout(() => {
        pairs.delete(requestId);
        pair?.error?.reset();
        pair?.data?.reset();
      }, PAIR_TIMEOUT_MS);
      timer.unref();
      pair = {timer};
      pairs.set(requestId, pair);
    }
    if (pair[type]) {
      stream.reset();
      return;
    }
    pair[type] = stream;
    if (!pair.error || !pair.data) return;
    clearTimeout(pair.timer);
    pairs.delete(requestId);
    forward(pair.error, pair.data, port, target, host, sockets);
  });
}

function forward(errorStream: SpdyStream, data: SpdyStream, port: number, target: PortForwardTarget, host: string, sockets: Set<net.Socket>): void {
  errorStream.resume();
  // What the pod sends is the bulk direction: read into reused buffers (SpdyStream copies each into its frame).
  const socket = net.connect({host, port, onread: relayReads(() => (connected ? data : undefined), TCP_READ_BUFFERS)});
  sockets.add(socket);
  let connected = false;
  const done = () => {
    sockets.delete(socket);
    if (!errorStream.writableEnded) errorStream.end();
  };
  socket.once('connect', () => {
    connected = true;
    relay(data, socket);
    relayEnd(socket, data);
  });
  socket.once('error', (err) => {
    if (!connected) {
      const family = net.isIPv6(host) ? 'tcp6' : 'tcp4';
      errorStream.write(`error forwarding port ${port} to pod ${target.podRef}, uid ${target.uid}: failed to connect to localhost:${port} inside the pod's network (the host's): dial ${family} ${host}:${port}: connect: ${describe(err)}`);
      data.end();
    } else if (!data.writableEnded) {
      data.end();
    }
    done();
  });
  socket.once('close', done);
  data.once('close', () => {
    if (!socket.destroyed && socket.writableFinished) socket.destroy();
  });
}

function describe(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused';
    case 'ETIMEDOUT':
      return 'connection timed out';
    default:
      return err.message;
  }
}
