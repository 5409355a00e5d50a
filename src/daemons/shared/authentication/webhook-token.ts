/**
 * Webhook token authentication (upstream's plugin/pkg/authenticator/token/webhook and its token
 * cache): a bearer token no other authenticator knows is sent in a TokenReview to the remote
 * service of `--authentication-token-webhook-config-file`; its answer names the user. Answers are
 * cached for `--authentication-token-webhook-cache-ttl` (keyed by a hash of the token and the
 * audiences, so no token is kept); a failed call (down, timed out, garbage) is never cached and
 * never authenticates.
 */
import {createHash} from 'node:crypto';
import {names} from '../../../api/names.js';
import type {TokenAuthenticator, TokenResult} from './token-authenticator.js';
import type {UserInfo} from './user.js';

export type TokenReviewVersion = 'v1' | 'v1beta1';
export const TOKEN_REVIEW_VERSIONS: readonly TokenReviewVersion[] = ['v1', 'v1beta1'];

export interface WebhookTokenOptions {
  version: TokenReviewVersion;
  cacheTtlMs: number;
  /** The server's own audiences (`--api-audiences`). */
  implicitAudiences: string[];
  /** Sends the review and returns the answer's body (throws when the call fails). */
  post(review: Record<string, unknown>): Promise<unknown>;
  now?: () => number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const strings = (v: unknown): string[] | undefined => (Array.isArray(v) && v.every((s) => typeof s === 'string') ? (v as string[]) : undefined);

/** The answer read strictly: anything that is not a TokenReview of the version asked is an error. */
export function readTokenReviewAnswer(answer: unknown, version: TokenReviewVersion): {authenticated: boolean; user?: UserInfo; audiences: string[]; error?: string} {
  const expected = `${names().groups.authentication}/${version}`;
  if (!isObject(answer)) throw new Error('the webhook did not answer with a JSON object');
  if (answer.apiVersion !== undefined && answer.apiVersion !== expected) throw new Error(`the webhook answered with apiVersion ${JSON.stringify(answer.apiVersion)}, expected ${JSON.stringify(expected)}`);
  if (answer.kind !== undefined && answer.kind !== 'TokenReview') throw new Error(`the webhook answered with kind ${JSON.stringify(answer.kind)}, expected "TokenReview"`);
  const status = answer.status;
  if (!isObject(status)) throw new Error('the webhook answer has no status');
  if (status.authenticated !== undefined && typeof status.authenticated !== 'boolean') throw new Error('the webhook answer\'s status.authenticated is not a boolean');
  const audiences = strings(status.audiences ?? []);
  if (!audiences) throw new Error('the webhook answer\'s status.audiences is not a list of strings');
  const error = typeof status.error === 'string' && status.error ? status.error : undefined;
  if (status.authenticated !== true) return {authenticated: false, audiences, error};
  const u = status.user;
  if (!isObject(u) || typeof u.username !== 'string' || u.username === '') throw new Error('the webhook authenticated the token without a user name');
  const user: UserInfo = {name: u.username, groups: strings(u.groups ?? []) ?? []};
  if (typeof u.uid === 'string' && u.uid) user.uid = u.uid;
  if (isObject(u.extra)) {
    const extra: Record<string, string[]> = {};
    for (const [key, value] of Object.entries(u.extra)) extra[key] = strings(value) ?? [];
    if (Object.keys(extra).length > 0) user.extra = extra;
  }
  return {authenticated: true, user, audiences, error};
}

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  private readonly cache = new Map<string, {expires: number; result: TokenResult | undefined}>();
  private readonly now: () => number;

  constructor(private readonly o: WebhookTokenOptions) {
    this.now = o.now ?? Date.now;
  }

  async authenticateToken(token: string, audiences?: string[]): Promise<TokenResult | undefined> {
    const wanted = audiences && audiences.length > 0 ? audiences : this.o.implicitAudiences;
    const key = createHash('sha256').update(token).update('\0').update(wanted.join('\0')).digest('base64url');
    const hit = this.cache.get(key);
    if (hit && hit.expires > this.now()) return hit.result;
    if (hit) this.cache.delete(key);

    const spec: Record<string, unknown> = {token};
    if (wanted.length > 0) spec.audiences = wanted;
    let answer;
    try {
      answer = readTokenReviewAnswer(await this.o.post({apiVersion: `${names().groups.authentication}/${this.o.version}`, kind: 'TokenReview', spec}), this.o.version);
    } catch (error) {
      // Not cached: the next request asks again.
      return {error: `webhook token authentication failed: ${(error as Error).message}`};
    }
    const result = this.resultOf(answer, wanted);
    if (this.o.cacheTtlMs > 0) {
      this.sweep();
      this.cache.set(key, {expires: this.now() + this.o.cacheTtlMs, result});
    }
    return result;
  }

  /** Upstream: a webhook that names audiences must name one asked for; one that names none stands for the server's. */
  private resultOf(answer: ReturnType<typeof readTokenReviewAnswer>, wanted: string[]): TokenResult | undefined {
    if (!answer.authenticated || !answer.user) return answer.error ? {error: answer.error} : undefined;
    let common = wanted;
    if (wanted.length > 0) {
      const granted = answer.audiences.length > 0 ? answer.audiences : this.o.implicitAudiences;
      common = wanted.filter((a) => granted.includes(a));
      if (granted.length > 0 && common.length === 0) return undefined;
    }
    return {user: answer.user, audiences: common};
  }

  /** Drops expired entries now and then, so the cache holds only live answers. */
  private sweep(): void {
    if (this.cache.size < 1024) return;
    const now = this.now();
    for (const [key, entry] of this.cache) if (entry.expires <= now) this.cache.delete(key);
  }
}
