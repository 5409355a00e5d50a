/**
 * --enable-logs-handler: /logs/ serves the files of the API server's log directory, as upstream's
 * routes.Logs serves the host's /var/log (a listing at /logs/, a file at /logs/<path>). orch's
 * equivalent is `<data-dir>/logs`, made at start: the directory where an operator points the
 * server's own logs (e.g. --audit-log-path, or the process's redirected output). The caller
 * authorizes first (a non-resource `get` of the path).
 */
import {createReadStream} from 'node:fs';
import {readdir, stat} from 'node:fs/promises';
import {join, normalize, sep} from 'node:path';
import type {ServerResponse} from 'node:http';

export const LOGS_PREFIX = '/logs';

/** Upstream's logFileNameIsTooLong: a name over 255 bytes is answered "file not found". */
const MAX_NAME_BYTES = 255;

type Response = Pick<ServerResponse, 'writeHead' | 'end'> & NodeJS.WritableStream;

export function isLogsPath(path: string): boolean {
  return path === LOGS_PREFIX || path.startsWith(`${LOGS_PREFIX}/`);
}

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

function plain(res: Response, status: number, text: string): void {
  res.writeHead(status, {'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff'});
  res.end(text);
}

/** Serves `rawPath` (the request path, still percent-encoded) from `dir`, as Go's http.ServeFile. */
export async function serveLogs(dir: string, rawPath: string, res: Response): Promise<void> {
  let relative: string;
  try {
    relative = decodeURIComponent(rawPath.slice(LOGS_PREFIX.length));
  } catch {
    return plain(res, 400, 'invalid URL path\n');
  }
  // Go's ServeFile refuses any ".." element outright rather than resolving it.
  if (relative.split('/').includes('..')) return plain(res, 400, 'invalid URL path\n');
  const target = normalize(join(dir, relative));
  if (target !== dir && !target.startsWith(dir.endsWith(sep) ? dir : dir + sep)) return plain(res, 400, 'invalid URL path\n');
  if (relative.split('/').some((part) => Buffer.byteLength(part) > MAX_NAME_BYTES)) return plain(res, 404, 'file not found\n');
  let info;
  try {
    info = await stat(target);
  } catch {
    return plain(res, 404, '404 page not found\n');
  }
  if (info.isDirectory()) {
    // Go redirects a directory without its trailing slash, so relative links resolve.
    if (!rawPath.endsWith('/')) {
      res.writeHead(301, {Location: `${rawPath}/`});
      return void res.end();
    }
    const entries = (await readdir(target, {withFileTypes: true})).sort((a, b) => a.name.localeCompare(b.name));
    const links = entries.map((e) => {
      const name = e.isDirectory() ? `${e.name}/` : e.name;
      return `<a href="${escapeHtml(encodeURIComponent(e.name) + (e.isDirectory() ? '/' : ''))}">${escapeHtml(name)}</a>\n`;
    });
    res.writeHead(200, {'Content-Type': 'text/html; charset=utf-8'});
    return void res.end(`<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n${links.join('')}</pre>\n`);
  }
  res.writeHead(200, {'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': String(info.size), 'Last-Modified': info.mtime.toUTCString()});
  createReadStream(target).on('error', () => res.end()).pipe(res);
}
