/**
 * The readyz-only `informer-sync` check: passes once every informer of the server's shared
 * informer factory has started, else `<n> informers not started yet: [<a> <b>]` (Go's %v of a
 * string slice; sorted here since Go's map order is random anyway).
 */
import type {HealthCheck} from '../../shared/health/check.js';

/** `started` lists each informer's type name and whether it has started. */
export function informerSyncCheck(started: () => Iterable<readonly [string, boolean]>): HealthCheck {
  return {
    name: 'informer-sync',
    check: () => {
      const notStarted = [...started()].filter(([, ok]) => !ok).map(([type]) => type).sort();
      if (notStarted.length > 0) throw new Error(`${notStarted.length} informers not started yet: [${notStarted.join(' ')}]`);
    },
  };
}
