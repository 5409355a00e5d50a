/**
 * Cross-origin resource sharing (upstream's WithCORS, --cors-allowed-origins): a request whose
 * Origin matches one of the patterns gets the Access-Control-Allow-* headers, and a preflight
 * OPTIONS is answered here with 204 before authentication (browsers send no credentials with it).
 * An origin that matches none gets no CORS header and is served as if CORS were off, so the
 * browser, not the server, refuses the page's access to the answer.
 */
import type {Filter} from '../../shared/http/http-types.js';
import {headerValue} from '../../shared/http/http-types.js';

export {corsPatternProblems} from '../../../options/value-cors.js';

// Upstream's defaults when the API server passes nil for methods, headers and exposed headers.
const ALLOW_METHODS = ['POST', 'GET', 'OPTIONS', 'PUT', 'DELETE', 'PATCH'].join(', ');
const ALLOW_HEADERS = ['Content-Type', 'Content-Length', 'Accept-Encoding', 'X-CSRF-Token', 'Authorization', 'X-Requested-With', 'If-Modified-Since'].join(', ');
const EXPOSE_HEADERS = 'Date';

/** The CORS filter; undefined without patterns (CORS off, as upstream installs nothing then). */
export function corsFilter(patterns: readonly string[]): Filter | undefined {
  if (patterns.length === 0) return undefined;
  // Unanchored matching as Go's MatchString: the pinning is the pattern's job (checked at start).
  const regexps = patterns.map((p) => new RegExp(p));
  return (req, res, next) => {
    const origin = headerValue(req, 'origin');
    if (origin !== '' && regexps.some((re) => re.test(origin))) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Methods', ALLOW_METHODS);
      res.setHeader('Access-Control-Allow-Headers', ALLOW_HEADERS);
      res.setHeader('Access-Control-Expose-Headers', EXPOSE_HEADERS);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      if (req.method === 'OPTIONS') {
        res.statusCode = 204;
        res.end();
        return;
      }
    }
    next();
  };
}
