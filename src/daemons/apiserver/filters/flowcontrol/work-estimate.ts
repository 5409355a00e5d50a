/**
 * How many seats a request takes (upstream's util/flowcontrol/request work estimator, the list part):
 * a LIST, or a WATCH's initial events, costs one seat per 100 objects the server goes through (at
 * least 1, at most 10). Every list here is served from the watch cache, so that is the resource's
 * stored count, as upstream estimates lists from its cache; a resource without a cache (custom
 * resources read through to the store) counts 1. Everything else takes one seat.
 */
import type {RequestInfo} from '../request-info.js';

const OBJECTS_PER_SEAT = 100;
const MIN_SEATS = 1;
const MAX_SEATS = 10;

export function estimateSeats(info: RequestInfo, storedCount: (group: string, resource: string) => number | undefined): number {
  if (!info.isResourceRequest || (info.verb !== 'list' && info.verb !== 'watch')) return MIN_SEATS;
  const count = storedCount(info.apiGroup, info.resource);
  if (count === undefined) return MIN_SEATS;
  return Math.min(MAX_SEATS, Math.max(MIN_SEATS, Math.ceil(count / OBJECTS_PER_SEAT)));
}
