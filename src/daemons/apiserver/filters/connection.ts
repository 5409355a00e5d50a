/**
 * "Close this connection after the response", for both protocols. Go's server does this when a
 * handler sets `Connection: close`: HTTP/1 closes the socket after the response, HTTP/2 sends a
 * GOAWAY and tears the connection down once idle. Node forbids the Connection header on HTTP/2
 * responses, so there the session is closed gracefully (GOAWAY, in-flight streams finish) once
 * this response is done.
 */
import {isHttp2, type RequestLike, type ResponseLike} from '../../shared/http/http-types.js';

export function tearDownConnection(req: RequestLike, res: ResponseLike): void {
  if (!isHttp2(req)) {
    res.setHeader('Connection', 'close');
    return;
  }
  const session = req.stream?.session;
  if (!session) return;
  res.on('finish', () => session.close());
}
