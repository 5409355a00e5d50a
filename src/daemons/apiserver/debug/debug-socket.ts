/**
 * --debug-socket-path: the profiling paths (and /debug/flags/v) on a unix socket with no
 * authentication or authorization, as upstream's UnprotectedDebugSocket: whoever may open the
 * socket file may profile. It is served whether or not --profiling is on, a stale socket file from
 * a crashed run is replaced, and the file is removed when the server stops.
 */
import {createServer, type Server} from 'node:http';
import {rmSync} from 'node:fs';
import type {Profiling} from './profiling.js';

export interface DebugSocket {
  close(): Promise<void>;
}

export async function listenDebugSocket(path: string, profiling: Profiling, onError: (error: Error) => void): Promise<DebugSocket> {
  rmSync(path, {force: true});
  const server: Server = createServer((req, res) => {
    const pathname = (req.url ?? '/').split('?')[0]!;
    if (!profiling.serves(pathname)) {
      res.writeHead(404, {'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff'});
      return void res.end('404 page not found\n');
    }
    profiling.handle(req, res).catch((error: Error) => {
      onError(error);
      if (!res.headersSent) res.writeHead(500, {'Content-Type': 'text/plain; charset=utf-8'});
      res.end(`${error.message}\n`);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: Error) => reject(new Error(`--debug-socket-path ${path}: ${error.message}`)));
    server.listen(path, () => resolve());
  });
  return {
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          rmSync(path, {force: true});
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
