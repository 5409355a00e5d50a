/**
 * Request header authentication for a front proxy (upstream's authentication/request/headerrequest
 * behind its x509 verifier, the `--requestheader-*` options): a request whose client certificate
 * chains to `--requestheader-client-ca-file` (and, when `--requestheader-allowed-names` is set, has
 * one of those CommonNames) is the user its identity headers name: the first non-empty username
 * header, the first non-empty uid header, every value of the group headers, and `extra` from headers
 * with an extra prefix (the key lower-cased and percent-decoded). Without a username header it is
 * not this authenticator's request. The server drops these headers from every request, so nothing
 * further down trusts them.
 */
import type {X509Certificate} from 'node:crypto';
import {headerValues, type AuthenticationRequest} from './request.js';
import type {UserInfo} from './user.js';
import {ClientCertificateAuthenticator} from './x509.js';

export interface RequestHeaderOptions {
  cas: X509Certificate[];
  allowedNames: string[];
  usernameHeaders: string[];
  groupHeaders: string[];
  extraHeaderPrefixes: string[];
  uidHeaders: string[];
  now?: () => Date;
}

const lower = (names: string[]) => names.map((n) => n.toLowerCase());

/** Percent-decodes an extra key as upstream's unescapeExtraKey (kept as is when malformed). */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

/** The user the identity headers name (undefined without a username). Pure. */
export function userFromHeaders(request: Pick<AuthenticationRequest, 'headers' | 'headersDistinct'>, o: Omit<RequestHeaderOptions, 'cas' | 'allowedNames'>): UserInfo | undefined {
  const first = (names: string[]) => {
    for (const name of lower(names)) {
      const value = headerValues(request, name).find((v) => v !== '');
      if (value) return value;
    }
    return undefined;
  };
  const name = first(o.usernameHeaders);
  if (!name) return undefined;
  const user: UserInfo = {name, groups: lower(o.groupHeaders).flatMap((h) => headerValues(request, h).filter((v) => v !== ''))};
  const uid = first(o.uidHeaders);
  if (uid) user.uid = uid;
  const extra: Record<string, string[]> = {};
  const present = Object.keys(request.headersDistinct ?? request.headers);
  for (const prefix of lower(o.extraHeaderPrefixes)) {
    for (const header of present.filter((h) => h.startsWith(prefix)).sort()) {
      const key = unescapeExtraKey(header.slice(prefix.length).toLowerCase());
      if (key) (extra[key] ??= []).push(...headerValues(request, header));
    }
  }
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}

export class RequestHeaderAuthenticator {
  private readonly verifier: ClientCertificateAuthenticator;

  constructor(private readonly o: RequestHeaderOptions) {
    this.verifier = new ClientCertificateAuthenticator(o.cas, o.now);
  }

  /** The proxy's user, an error (a certificate the proxy CA does not vouch for), or undefined. */
  authenticate(request: AuthenticationRequest): {user: UserInfo} | {error: string} | undefined {
    const proxy = this.verifier.authenticate(request.socket);
    if (!proxy) return undefined;
    if ('error' in proxy) return {error: `request header: ${proxy.error}`};
    if (this.o.allowedNames.length > 0 && !this.o.allowedNames.includes(proxy.user.name)) {
      return {error: `request header: x509: subject with cn=${proxy.user.name} is not in the allowed list`};
    }
    const user = userFromHeaders(request, this.o);
    return user ? {user} : undefined;
  }

  /** Whether a header is one the proxy speaks with (dropped from every request). */
  isIdentityHeader(name: string): boolean {
    const n = name.toLowerCase();
    return [...lower(this.o.usernameHeaders), ...lower(this.o.groupHeaders), ...lower(this.o.uidHeaders)].includes(n) || lower(this.o.extraHeaderPrefixes).some((p) => n.startsWith(p));
  }
}
