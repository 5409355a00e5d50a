/**
 * The priority and fairness step of the request chain (upstream's WithPriorityAndFairness): after
 * authentication and impersonation (it needs the user), before authorization. A request is
 * classified (FlowSchema, priority level, flow), then runs, waits in its level's queues, or gets 429
 * with `Retry-After` and Go's `Too many requests, please try again later.` (api-conventions.md §5).
 * Responses carry the matched schema's and level's UIDs (not names, as upstream).
 *
 * Long-running requests other than watches (exec, attach, proxy, logs) are not limited. A watch
 * holds its seats only while it starts: they are released when its response begins (upstream
 * releases them once the watch is initialized). A request may wait a quarter of its deadline (at
 * most a minute; 15 s without one, as a watch), as upstream's getRequestWaitContext.
 */
import type {Clock} from '../../../shared/clock.js';
import {requestPath, type RequestLike, type ResponseLike} from '../../../shared/http/http-types.js';
import {writeHttpError} from '../../../shared/http/status.js';
import {isLongRunning, isMutating, requestInfoOf} from '../request-info.js';
import {requestDeadline} from '../timeout.js';
import {DroppedRequestsTracker} from './dropped-requests.js';
import type {FlowControl} from './flow-control.js';
import type {FlowcontrolMetrics} from './metrics.js';
import {estimateSeats} from './work-estimate.js';

export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';
const DEFAULT_WAIT_LIMIT_MS = 15_000;
const MAX_WAIT_LIMIT_MS = 60_000;

export interface PriorityAndFairnessOptions {
  flowControl: FlowControl;
  clock: Clock;
  /** Objects stored for a resource (the list work estimate), when known. */
  storedCount: (group: string, resource: string) => number | undefined;
  metrics?: FlowcontrolMetrics;
}

/**
 * Resolves (or returns) true when the request may go on, false when it was refused (the 429 is
 * written, or the client is gone).
 */
export type PriorityAndFairnessGate = ((req: RequestLike, res: ResponseLike, user: {name: string; groups: readonly string[]}) => boolean | Promise<boolean>) & {
  /** Requests executing now, read-only (get, list, watch) and mutating, as upstream's watermarks count them (the dashboard's "In flight"). */
  readonly executing: {readOnly: number; mutating: number};
};

export function priorityAndFairness(options: PriorityAndFairnessOptions): PriorityAndFairnessGate {
  const {flowControl, clock, metrics} = options;
  const dropped = new DroppedRequestsTracker(() => clock.now());
  const executing = {readOnly: 0, mutating: 0};

  const gate = (req: RequestLike, res: ResponseLike, user: {name: string; groups: readonly string[]}): boolean | Promise<boolean> => {
    const info = requestInfoOf(req);
    const watch = info.verb === 'watch';
    if (isLongRunning(info) && !watch) return true;
    const path = requestPath(req);
    const classification = flowControl.classify({info, path, user});
    if (!classification) return true;
    const schema = classification.schema.metadata.name;
    const level = classification.level.name;
    res.setHeader(FLOW_SCHEMA_UID_HEADER, classification.schema.metadata.uid ?? '');
    res.setHeader(PRIORITY_LEVEL_UID_HEADER, classification.level.config.metadata.uid ?? '');

    const seats = estimateSeats(info, options.storedCount);
    const deadline = requestDeadline(req);
    const waitLimitMs = Math.min(MAX_WAIT_LIMIT_MS, deadline ? Math.max(0, (deadline.deadline - clock.now()) / 4) : DEFAULT_WAIT_LIMIT_MS);

    const kind = isMutating(info) ? 'mutating' : 'readOnly';
    let outcome: boolean | undefined;
    let settle: ((ok: boolean) => void) | undefined;
    let queued = false;
    let released = false;
    const ticket = flowControl.admit(
      classification,
      seats,
      waitLimitMs,
      {
        onDispatch: (waitedMs) => {
          if (queued) metrics?.queued(level, schema, -1);
          metrics?.dispatched(level, schema, waitedMs);
          metrics?.executing(level, schema, 1);
          executing[kind]++;
          outcome = true;
          settle?.(true);
        },
        onReject: (reason) => {
          if (queued) metrics?.queued(level, schema, -1);
          metrics?.rejected(level, schema, reason, 0);
          outcome = false;
          if (reason !== 'cancelled') {
            dropped.recordDropped(level);
            if (!res.headersSent) {
              res.setHeader('Retry-After', String(dropped.retryAfter(level)));
              writeHttpError(res, 429, 'Too many requests, please try again later.');
            }
          }
          settle?.(false);
        },
      },
      {user: user.name, verb: info.verb, path, namespace: info.namespace, name: info.name, apiVersion: info.apiGroup ? `${info.apiGroup}/${info.apiVersion}` : info.apiVersion, resource: info.resource, subresource: info.subresource},
    );
    const release = () => {
      if (released || outcome !== true) return;
      released = true;
      metrics?.executing(level, schema, -1);
      executing[kind]--;
      ticket.finish();
    };
    res.on('close', () => {
      if (outcome === undefined) ticket.cancel();
      else release();
    });
    if (watch) releaseWhenResponseStarts(res, release);
    if (outcome !== undefined) return outcome;
    queued = true;
    metrics?.queued(level, schema, 1);
    return new Promise<boolean>((resolve) => (settle = resolve));
  };
  return Object.assign(gate, {executing});
}

/** A watch is initialized once its response starts: its seats go back then. */
function releaseWhenResponseStarts(res: ResponseLike, release: () => void): void {
  const target = res as unknown as Record<'writeHead' | 'write', ((...args: unknown[]) => unknown) | undefined>;
  for (const method of ['writeHead', 'write'] as const) {
    const original = target[method];
    if (!original) continue;
    target[method] = function (this: unknown, ...args: unknown[]) {
      release();
      return original.apply(this, args);
    };
  }
}
