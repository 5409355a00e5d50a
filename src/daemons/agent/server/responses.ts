/** The few response shapes of the agent's servers, as upstream's handlers write them. */
import type {ServerResponse} from 'node:http';

/** go-restful's WriteErrorString / WriteError: the text as is (Go sniffs it as plain text). */
export function writeText(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res.writeHead(status, {'Content-Type': 'text/plain; charset=utf-8', ...headers});
  res.end(text);
}

/** Go's http.Error: plain text with a newline, never sniffed. */
export function writeHttpError(res: ServerResponse, status: number, text: string): void {
  writeText(res, status, text + '\n', {'X-Content-Type-Options': 'nosniff'});
}

export function writeNotFound(res: ServerResponse): void {
  writeHttpError(res, 404, '404 page not found');
}

export function writeJson(res: ServerResponse, body: string): void {
  res.writeHead(200, {'Content-Type': 'application/json'});
  res.end(body);
}
