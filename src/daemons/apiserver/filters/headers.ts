/**
 * Response headers every API server response carries (upstream's WithCacheControl and WithHSTS
 * filters): `Cache-Control: no-cache, private` unless the handler sets its own, and
 * `Strict-Transport-Security` from --strict-transport-security-directives.
 */
import type {Filter} from '../../shared/http/http-types.js';

export function cacheControlFilter(): Filter {
  return (_req, res, next) => {
    // Set first; a handler that wants another policy overwrites it, as upstream's "if not set".
    res.setHeader('Cache-Control', 'no-cache, private');
    next();
  };
}

/** Directives are joined with "; " (e.g. `max-age=31536000; includeSubDomains`); none: no header. */
export function hstsFilter(directives: readonly string[]): Filter {
  const value = directives.join('; ');
  return (_req, res, next) => {
    if (value !== '') res.setHeader('Strict-Transport-Security', value);
    next();
  };
}
