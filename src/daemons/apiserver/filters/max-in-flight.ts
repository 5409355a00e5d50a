/**
 * --max-requests-inflight / --max-mutating-requests-inflight: upstream's WithMaxInFlightLimit.
 * Two independent budgets (read-only verbs get/list/watch vs. everything else); 0 disables a
 * budget. Long-running requests (watch, exec, ...) are never counted. A request over budget gets
 * 429 with `Retry-After: 1` and Go's plain-text `Too many requests, please try again later.`
 * (api-conventions.md §5: not a Status object), unless its user is in `system:masters`.
 * A slot is held until the response closes (finished or aborted).
 */
import type {Filter, RequestLike} from '../../shared/http/http-types.js';
import {isLongRunning, isMutating, requestInfoOf, type RequestInfo} from './request-info.js';
import {writeHttpError} from '../../shared/http/status.js';

export interface MaxInFlightOptions {
  maxRequestsInFlight: number;
  maxMutatingRequestsInFlight: number;
  requestInfo?: (req: RequestLike) => RequestInfo;
  /** Groups of the authenticated user, when authentication ran before this filter. */
  userGroups?: (req: RequestLike) => readonly string[] | undefined;
  /** Called for every rejected request (metrics, dashboard). */
  onReject?: (req: RequestLike, mutating: boolean) => void;
}

export interface MaxInFlightFilter extends Filter {
  /** Requests currently holding a slot, per budget (for the dashboard). */
  readonly inFlight: {readOnly: number; mutating: number};
}

const PRIVILEGED_GROUP = 'system:masters';

export function maxInFlightFilter(options: MaxInFlightOptions): MaxInFlightFilter {
  const {maxRequestsInFlight, maxMutatingRequestsInFlight} = options;
  const infoOf = options.requestInfo ?? requestInfoOf;
  const inFlight = {readOnly: 0, mutating: 0};

  const filter: Filter = (req, res, next) => {
    const info = infoOf(req);
    if (isLongRunning(info)) return next();
    const mutating = isMutating(info);
    const limit = mutating ? maxMutatingRequestsInFlight : maxRequestsInFlight;
    if (limit <= 0) return next();
    const budget = mutating ? 'mutating' : 'readOnly';

    if (inFlight[budget] >= limit) {
      if (options.userGroups?.(req)?.includes(PRIVILEGED_GROUP)) return next();
      options.onReject?.(req, mutating);
      res.setHeader('Retry-After', '1');
      writeHttpError(res, 429, 'Too many requests, please try again later.');
      return;
    }
    inFlight[budget]++;
    let released = false;
    res.on('close', () => {
      if (released) return;
      released = true;
      inFlight[budget]--;
    });
    next();
  };
  return Object.assign(filter, {inFlight});
}
