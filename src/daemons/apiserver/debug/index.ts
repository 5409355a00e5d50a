/**
 * The API server's debugging paths installed by options: /debug/pprof/ and /debug/flags/v
 * (--profiling, --contention-profiling), the same on an unprotected unix socket
 * (--debug-socket-path), and /logs/ (--enable-logs-handler). The server authorizes a request to
 * these paths (a non-resource request) before it calls the route; the socket is not authorized.
 */
import {mkdir} from 'node:fs/promises';
import type {IncomingMessage, ServerResponse} from 'node:http';
import {createProfiling, type Profiling} from './profiling.js';
import {listenDebugSocket, type DebugSocket} from './debug-socket.js';
import {isLogsPath, serveLogs} from './logs.js';

export interface DebugOptions {
  profiling: boolean;
  contentionProfiling: boolean;
  debugSocketPath?: string;
  /** The directory /logs/ serves; undefined: no /logs/ (--enable-logs-handler off). */
  logsDir?: string;
  onError: (error: Error) => void;
}

export interface DebugRoutes {
  /** The handler of a debugging path, or undefined when no option installed one for it. */
  route(path: string): ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
  close(): Promise<void>;
}

export async function startDebugRoutes(o: DebugOptions): Promise<DebugRoutes> {
  const profiling: Profiling | undefined = o.profiling || o.debugSocketPath ? createProfiling({contention: o.contentionProfiling}) : undefined;
  let socket: DebugSocket | undefined;
  try {
    if (o.logsDir) await mkdir(o.logsDir, {recursive: true, mode: 0o700});
    if (o.debugSocketPath && profiling) socket = await listenDebugSocket(o.debugSocketPath, profiling, o.onError);
  } catch (error) {
    profiling?.stop();
    throw error;
  }
  const logsDir = o.logsDir;
  return {
    route(path) {
      if (o.profiling && profiling?.serves(path)) return (req, res) => profiling.handle(req, res);
      if (logsDir && isLogsPath(path)) return async (req, res) => serveLogs(logsDir, (req.url ?? '/').split('?')[0]!, res);
      return undefined;
    },
    async close() {
      await socket?.close();
      profiling?.stop();
    },
  };
}
