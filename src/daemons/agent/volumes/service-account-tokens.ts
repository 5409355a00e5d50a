/**
 * The pods' service account tokens, as the kubelet's token manager (pkg/kubelet/token): each token
 * is requested from the API server (TokenRequest, bound to the pod), cached by what it was asked
 * for, and requested again once it is older than 80% of its life (a 20% margin before expiry) or 24
 * hours, minus a jitter of up to 10 s so that many pods do not refresh in the same instant.
 */
import type {Clock} from '../../shared/clock.js';

/** Upstream's bounds: refresh after 24 h whatever the expiry, and up to 10 s early at random. */
const MAX_TTL_MS = 24 * 60 * 60 * 1000;
const MAX_JITTER_MS = 10_000;

export interface IssuedToken {
  token: string;
  /** When the token expires (ms since the epoch), from the TokenRequest status. */
  expiresAt: number;
  /** The lifetime asked for, in seconds (the spec's expirationSeconds). */
  expirationSeconds: number;
}

/**
 * Pure: whether a token must be requested again at `now` (upstream's requiresRefresh). `jitterMs`
 * is drawn by the caller in [0, 10 s).
 */
export function tokenRequiresRefresh(token: IssuedToken, now: number, jitterMs = 0): boolean {
  const issuedAt = token.expiresAt - token.expirationSeconds * 1000;
  if (now > issuedAt + MAX_TTL_MS - jitterMs) return true;
  return now > token.expiresAt - (token.expirationSeconds * 1000 * 20) / 100 - jitterMs;
}

export interface TokenRequestSpec {
  namespace: string;
  serviceAccount: string;
  /** Empty: the API server's own audiences. */
  audiences: string[];
  expirationSeconds: number;
  pod: {name: string; uid: string};
}

/** Sends a TokenRequest (`serviceaccounts/<name>/token`); answers the token and its expiry. */
export type RequestToken = (spec: TokenRequestSpec) => Promise<{token: string; expiresAt: number}>;

export class ServiceAccountTokens {
  private readonly cache = new Map<string, {token: IssuedToken; podUid: string}>();

  constructor(
    private readonly request: RequestToken,
    private readonly clock: Clock,
    private readonly jitter: () => number = () => Math.random() * MAX_JITTER_MS,
  ) {}

  /** The cached token when still fresh, else a new one. */
  async get(spec: TokenRequestSpec): Promise<IssuedToken> {
    const key = JSON.stringify([spec.namespace, spec.serviceAccount, spec.audiences, spec.expirationSeconds, spec.pod.uid]);
    const cached = this.cache.get(key);
    if (cached && !tokenRequiresRefresh(cached.token, this.clock.now(), this.jitter())) return cached.token;
    const issued = await this.request(spec);
    const token = {...issued, expirationSeconds: spec.expirationSeconds};
    this.cache.set(key, {token, podUid: spec.pod.uid});
    return token;
  }

  /** Whether any token of the pod must be refreshed now. */
  podNeedsRefresh(podUid: string): boolean {
    const now = this.clock.now();
    for (const entry of this.cache.values()) if (entry.podUid === podUid && tokenRequiresRefresh(entry.token, now, this.jitter())) return true;
    return false;
  }

  /** Drops the tokens of a pod that is gone. */
  forgetPod(podUid: string): void {
    for (const [key, entry] of this.cache) if (entry.podUid === podUid) this.cache.delete(key);
  }
}
