/**
 * Two places where Node's HTTP/1 server and Go's (upstream's) differ in what a client sees, and
 * what the secure servers do to behave like Go:
 *
 * - Pipelined requests: Node starts the handler of every request it has parsed at once and only
 *   orders the responses; Go serves one request of a connection at a time. A client that pipelines
 *   a create and a get of the same object must see the object, so a connection's requests run one
 *   after the other (oneRequestAtATime). HTTP/2 streams are independent, as in Go.
 *
 * - `Expect: 100-continue`: Node answers `100 Continue` as soon as the head arrives; Go answers it
 *   when the handler first reads the body, so a request refused before that (401, 403, 404, or 413
 *   for a declared length over the limit) never makes the client send its body; the connection is
 *   then closed after the response, since the unsent body would otherwise be read as the next
 *   request (Go's closeAfterReply). deferContinue installs that; readers call sendContinue(req)
 *   before reading a body.
 */
import type {IncomingMessage, ServerResponse} from 'node:http';
import type {Server as NetServer, Socket} from 'node:net';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

const isHttp2 = (req: IncomingMessage) => req.httpVersion === '2.0';

/** Wraps `handler` so that requests of one HTTP/1 connection run one at a time, in order. */
export function oneRequestAtATime(handler: Handler): Handler {
  // The last request of each connection that has not finished yet; the next one waits for it.
  const tails = new WeakMap<Socket, Promise<void>>();
  return (req, res) => {
    const socket = req.socket;
    if (isHttp2(req) || !socket) return handler(req, res);
    const previous = tails.get(socket);
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    const finish = () => {
      res.off('close', finish);
      socket.off('close', finish);
      if (tails.get(socket) === done) tails.delete(socket);
      release();
    };
    // 'close' on the response: finished or aborted; on the socket: a queued response may never start.
    res.once('close', finish);
    socket.once('close', finish);
    tails.set(socket, done);
    if (!previous) handler(req, res);
    else void previous.then(() => (socket.destroyed ? undefined : handler(req, res)));
  };
}

const CONTINUE = Symbol('orch.sendContinue');
type Continuable = {[CONTINUE]?: () => void};

/**
 * Answers `Expect: 100-continue` the way Go does (see the module comment). Install on the server
 * (https or HTTP/2 with allowHTTP1); `handler` is the server's request handler.
 */
export function deferContinue<S extends NetServer>(server: S, handler: Handler): S {
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    if (isHttp2(req)) {
      // An HTTP/2 stream that is refused is reset or ended on its own; nothing is left to misread.
      res.writeContinue();
      handler(req, res);
      return;
    }
    let sent = false;
    (req as Continuable)[CONTINUE] = () => {
      if (sent || res.headersSent) return;
      sent = true;
      res.writeContinue();
    };
    const writeHead = res.writeHead;
    res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
      if (!sent && !req.complete) res.setHeader('Connection', 'close');
      return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
    } as typeof res.writeHead;
    handler(req, res);
  });
  return server;
}

/** Sends the deferred `100 Continue` of a request, if it is waiting for one (call before reading the body). */
export function sendContinue(req: object): void {
  (req as Continuable)[CONTINUE]?.();
}
