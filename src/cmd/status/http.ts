/**
 * The HTTP side of `orch status`: one GET with a deadline, answered with the status and the body
 * text whatever the status (a failing readyz answers 500 with the checks in its body, which the
 * REST client would turn into an error). No keep-alive: a round makes a few requests a second at
 * most, and an idle socket must not keep the process alive after the report.
 */
import {request as httpRequest} from 'node:http';
import {request as httpsRequest} from 'node:https';
import type {Endpoint, FetchText, TextResponse} from './collect.js';

const CONNECTION_ERRORS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset by peer',
  EHOSTUNREACH: 'no route to host',
  ENETUNREACH: 'network is unreachable',
  ENOTFOUND: 'no such host',
  EAI_AGAIN: 'temporary failure in name resolution',
};

/** `dial tcp 127.0.0.1:10257: connect: connection refused`, in Go's words as kubectl users know them; Node's message otherwise. */
export function connectionErrorText(url: URL, error: NodeJS.ErrnoException): string {
  const text = error.code ? CONNECTION_ERRORS[error.code] : undefined;
  if (text === undefined) return error.message;
  return error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN' ? `dial tcp: lookup ${url.hostname}: ${text}` : `dial tcp ${url.host}: connect: ${text}`;
}

/** The endpoint's base URL with `path` (which may carry a query) appended to its own path. */
export function endpointUrl(base: string, path: string): URL {
  const url = new URL(base);
  const [pathname, query] = path.split('?', 2) as [string, string | undefined];
  url.pathname = url.pathname.replace(/\/$/, '') + pathname;
  url.search = query !== undefined ? `?${query}` : '';
  return url;
}

/** A FetchText whose every request, connection included, ends within `timeoutMs` (0: no limit). */
export function httpFetcher(timeoutMs: number, timeoutText: string): FetchText {
  return (endpoint: Endpoint, path: string) =>
    new Promise<TextResponse>((resolve, reject) => {
      const url = endpointUrl(endpoint.url, path);
      const secure = url.protocol === 'https:';
      const options = {
        method: 'GET',
        headers: {...endpoint.headers, accept: 'text/plain, application/json;q=0.9, */*;q=0.8'},
        agent: false as const,
        ...(secure
          ? {ca: endpoint.ca, cert: endpoint.cert, key: endpoint.key, rejectUnauthorized: endpoint.verify, servername: endpoint.servername}
          : {}),
      };
      const req = (secure ? httpsRequest : httpRequest)(url, options, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error) => fail(error));
        res.on('end', () => {
          clearTimeout(timer);
          resolve({statusCode: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8')});
        });
      });
      const fail = (error: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        reject(new Error(connectionErrorText(url, error)));
      };
      const timer = timeoutMs > 0 ? setTimeout(() => req.destroy(new Error(`no answer within ${timeoutText} (--request-timeout)`)), timeoutMs) : undefined;
      req.on('error', fail);
      req.end();
    });
}
