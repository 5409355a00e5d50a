/**
 * The Webhook authorizer of `--authorization-mode=Webhook`, as upstream's
 * (k8s.io/apiserver/plugin/pkg/authorizer/webhook): each request's attributes become a
 * SubjectAccessReview (`--authorization-webhook-version` v1 or v1beta1) posted to the service of
 * `--authorization-webhook-config-file` (client-configuration file format). `status.allowed`
 * allows, `status.denied` denies, anything else is no opinion. Answers are cached by the review's
 * spec: allowed ones for `--authorization-webhook-cache-authorized-ttl`, the others for
 * `--authorization-webhook-cache-unauthorized-ttl`. A webhook that cannot be reached or answers
 * garbage is retried with upstream's back-off, then yields no opinion with the error, which the
 * server turns into a 500 unless a later authorizer allows (nothing is allowed by accident).
 */
import type {AuthorizationAttributes, AuthorizationResult, Authorizer} from './attributes.js';
import {names} from '../../../api/names.js';

export type SubjectAccessReviewVersion = 'v1' | 'v1beta1';

export interface WebhookAuthorizerOptions {
  version: SubjectAccessReviewVersion;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  /** Posts one review and returns the decoded answer; throws when the webhook fails. */
  post(review: Record<string, unknown>): Promise<unknown>;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Upstream's DefaultRetryBackoff: 500 ms, factor 1.5, 5 steps (jitter left out: tests need exact waits). */
  retry?: {initialMs: number; factor: number; steps: number};
  /** The decision when the webhook fails (structured configuration's failurePolicy; NoOpinion otherwise). */
  failurePolicy?: 'NoOpinion' | 'Deny';
  /** Whether allowed / other answers are cached at all (structured configuration; default both). */
  cacheAuthorized?: boolean;
  cacheUnauthorized?: boolean;
  /** Match conditions over the v1 SubjectAccessReview spec: false skips the webhook (no opinion). */
  matches?: (request: Record<string, unknown>) => boolean;
}

const DEFAULT_RETRY = {initialMs: 500, factor: 1.5, steps: 5};

/** The review's spec for the attributes, in the wire form of the version (v1beta1 says `group`). */
export function subjectAccessReviewSpec(a: AuthorizationAttributes, version: SubjectAccessReviewVersion): Record<string, unknown> {
  const spec: Record<string, unknown> = {};
  if (a.resourceRequest) {
    spec.resourceAttributes = {
      namespace: a.namespace ?? '',
      verb: a.verb,
      group: a.apiGroup ?? '',
      version: a.apiVersion ?? '',
      resource: a.resource ?? '',
      subresource: a.subresource ?? '',
      name: a.name ?? '',
    };
  } else {
    spec.nonResourceAttributes = {path: a.path ?? '', verb: a.verb};
  }
  spec.user = a.user.name;
  spec[version === 'v1' ? 'groups' : 'group'] = a.user.groups;
  if (a.user.extra && Object.keys(a.user.extra).length > 0) spec.extra = a.user.extra;
  if (a.user.uid) spec.uid = a.user.uid;
  return spec;
}

export function subjectAccessReview(a: AuthorizationAttributes, version: SubjectAccessReviewVersion): Record<string, unknown> {
  return {apiVersion: `${names().groups.authorization}/${version}`, kind: 'SubjectAccessReview', spec: subjectAccessReviewSpec(a, version)};
}

interface ReviewStatus {
  allowed: boolean;
  denied: boolean;
  reason: string;
  evaluationError: string;
}

/** The status of a webhook's answer, or an error naming what is wrong with it. */
export function reviewStatus(answer: unknown, version: SubjectAccessReviewVersion): ReviewStatus {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) throw new Error('the webhook answered with something that is not a SubjectAccessReview object');
  const review = answer as Record<string, unknown>;
  const expected = `${names().groups.authorization}/${version}`;
  if (review.apiVersion !== undefined && review.apiVersion !== expected) {
    throw new Error(`the webhook answered with apiVersion ${JSON.stringify(review.apiVersion)}, expected ${JSON.stringify(expected)}`);
  }
  if (review.kind !== undefined && review.kind !== 'SubjectAccessReview') throw new Error(`the webhook answered with kind ${JSON.stringify(review.kind)}, expected "SubjectAccessReview"`);
  const status = review.status;
  if (typeof status !== 'object' || status === null) throw new Error('the webhook answered without a status');
  const s = status as Record<string, unknown>;
  if (typeof s.allowed !== 'boolean') throw new Error('the webhook answered without status.allowed');
  return {
    allowed: s.allowed,
    denied: s.denied === true,
    reason: typeof s.reason === 'string' ? s.reason : '',
    evaluationError: typeof s.evaluationError === 'string' ? s.evaluationError : '',
  };
}

export class WebhookAuthorizer implements Authorizer {
  private readonly cache = new Map<string, {expires: number; result: AuthorizationResult}>();
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;

  constructor(private readonly o: WebhookAuthorizerOptions) {
    this.now = o.now ?? Date.now;
    this.sleep = o.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
  }

  async authorize(attributes: AuthorizationAttributes): Promise<AuthorizationResult> {
    const review = subjectAccessReview(attributes, this.o.version);
    const onError = this.o.failurePolicy ?? 'NoOpinion';
    if (this.o.matches) {
      try {
        if (!this.o.matches(subjectAccessReviewSpec(attributes, 'v1'))) return {decision: 'NoOpinion', reason: ''};
      } catch (error) {
        return {decision: onError, reason: '', error: error as Error};
      }
    }
    const key = JSON.stringify(review.spec);
    const cached = this.cache.get(key);
    if (cached && cached.expires > this.now()) return cached.result;
    if (cached) this.cache.delete(key);

    let status: ReviewStatus;
    try {
      status = await this.postWithRetry(review);
    } catch (error) {
      // Errors are not cached: the next request asks again.
      return {decision: onError, reason: '', error: error as Error};
    }
    const decision = status.allowed ? 'Allow' : status.denied ? 'Deny' : 'NoOpinion';
    const result: AuthorizationResult = {decision, reason: status.reason};
    if (status.evaluationError && decision !== 'Allow') result.error = new Error(status.evaluationError);
    const ttl = status.allowed ? this.o.authorizedTtlMs : this.o.unauthorizedTtlMs;
    const caching = status.allowed ? this.o.cacheAuthorized !== false : this.o.cacheUnauthorized !== false;
    if (caching && ttl > 0 && !result.error) this.cache.set(key, {expires: this.now() + ttl, result});
    return result;
  }

  private async postWithRetry(review: Record<string, unknown>): Promise<ReviewStatus> {
    const retry = this.o.retry ?? DEFAULT_RETRY;
    let wait = retry.initialMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return reviewStatus(await this.o.post(review), this.o.version);
      } catch (error) {
        if (attempt >= retry.steps) throw error;
        await this.sleep(wait);
        wait *= retry.factor;
      }
    }
  }
}
