/**
 * The HTTP side of the health endpoints: `GET /healthz|/livez|/readyz` (health.md §2) and
 * `GET /<root>/<check name>` (§3). Any method is answered, as upstream's mux does.
 */
import {requestPath, requestQuery, type RequestLike, type ResponseLike} from '../http/http-types.js';
import {writeHttpError} from '../http/status.js';
import {runCheck} from './check.js';
import type {HealthRegistry, HealthRoot} from './registry.js';
import {parseHealthQuery} from './render.js';

const HEALTH_PATH = /^\/(healthz|livez|readyz)(?:\/(.+))?$/;

/**
 * Returns a handler that serves the registry's health paths and returns true, or returns false
 * (writing nothing) for any other path, including unknown check names, so that the caller's
 * 404 applies.
 */
export function createHealthHandler(registry: HealthRegistry): (req: RequestLike, res: ResponseLike) => boolean {
  return (req, res) => {
    const match = HEALTH_PATH.exec(requestPath(req));
    if (!match) return false;
    const root = match[1] as HealthRoot;
    const checkName = match[2];
    if (checkName === undefined) {
      void serveRoot(registry, root, req, res);
      return true;
    }
    const check = registry.checks(root).find((c) => c.name === checkName);
    if (!check) return false;
    void runCheck(check).then((error) => {
      if (isGone(res)) return;
      if (error !== undefined) {
        writeHttpError(res, 500, `internal server error: ${error}`);
        return;
      }
      // Upstream writes no header; Go's content sniffing of "ok" yields this type.
      res.statusCode = 200;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('ok');
    });
    return true;
  };
}

async function serveRoot(registry: HealthRegistry, root: HealthRoot, req: RequestLike, res: ResponseLike): Promise<void> {
  const result = await registry.evaluate(root, parseHealthQuery(requestQuery(req)));
  for (const line of result.logs) registry.logger(line.verbosity, line.message);
  if (result.statusCode === 500) {
    if (!isGone(res)) writeHttpError(res, 500, result.body.slice(0, -1));
    return;
  }
  if (root === 'readyz') registry.notifyReady();
  if (isGone(res)) return;
  res.statusCode = 200;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.end(result.body);
}

/** The client went away or a filter (the request timeout) already answered. */
function isGone(res: ResponseLike): boolean {
  return res.writableEnded === true;
}
