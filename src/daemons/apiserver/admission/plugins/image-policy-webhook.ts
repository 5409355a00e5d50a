/**
 * ImagePolicyWebhook: every pod's images (and an ephemeral container's) are sent as an ImageReview
 * (imagepolicy.<domain>/v1alpha1) to the webhook of the configuration's kubeconfig file; the pod is
 * refused unless the answer allows it. Answers are cached by the review's spec (allowTTL, denyTTL);
 * a webhook that cannot be reached is retried with back-off (retryBackoff), then the pod is refused,
 * or admitted with a `failed-open` annotation when defaultAllow is set (upstream's imagepolicy).
 *
 * Configuration (AdmissionConfiguration's ImagePolicyWebhook entry):
 *   imagePolicy: {kubeConfigFile: <path>, allowTTL: <s>, denyTTL: <s>, retryBackoff: <ms>, defaultAllow: <bool>}
 */
import {names} from '../../../../api/names.js';
import {badRequest} from '../../../../api/status.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import {stringAt} from '../../rest/objects.js';
import {sleep, type Clock} from '../../../shared/clock.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin, AdmissionPluginContext} from '../interfaces.js';
import {resolveClientConfig} from '../../../../client/orchconfig.js';
import {RestClient} from '../../../../client/rest-client.js';
import {ApiConnectionError, ApiStatusError} from '../../../../client/errors.js';
import {admissionForbidden} from '../errors.js';
import {containersOf, isCoreResource, specOf} from './pod-helpers.js';

export interface ImagePolicyConfig {
  kubeConfigFile: string;
  allowTtlMs: number;
  denyTtlMs: number;
  retryBackoffMs: number;
  defaultAllow: boolean;
}

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** Go's time.Duration String() for whole milliseconds (`500ms`, `1s`, `30m0s`, `1h0m0s`). */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (Math.abs(ms) < SECOND) return `${ms}ms`;
  const sign = ms < 0 ? '-' : '';
  let rest = Math.abs(ms);
  const hours = Math.floor(rest / (60 * MINUTE));
  rest -= hours * 60 * MINUTE;
  const minutes = Math.floor(rest / MINUTE);
  rest -= minutes * MINUTE;
  const seconds = rest / SECOND;
  const s = `${Number.isInteger(seconds) ? seconds : seconds.toFixed(3).replace(/0+$/, '')}s`;
  if (hours) return `${sign}${hours}h${minutes}m${s}`;
  if (minutes) return `${sign}${minutes}m${s}`;
  return `${sign}${s}`;
}

/**
 * Upstream's normalizeConfigDuration: -1 turns the setting off (0), 0 or absent takes the default,
 * anything else (in `scaleMs` units) must lie within [min, max].
 */
function normalize(name: string, value: unknown, scaleMs: number, minMs: number, maxMs: number, defaultMs: number): number {
  if (value === undefined || value === null || value === 0) return defaultMs;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new Error(`${name}: must be a whole number, got ${JSON.stringify(value)}`);
  if (value === -1) return 0;
  const ms = value * scaleMs;
  if (ms < minMs || ms > maxMs) throw new Error(`${name}: valid value is between ${goDuration(minMs)} and ${goDuration(maxMs)}, got ${goDuration(ms)}`);
  return ms;
}

/** Reads the configuration; throws naming the plugin and the problem (the server does not start). */
export function parseImagePolicyConfig(configuration: JsonObject | undefined, source = 'configuration'): ImagePolicyConfig {
  const fail = (problem: string) => new Error(`ImagePolicyWebhook: ${source}: ${problem}`);
  if (configuration === undefined) throw fail('no config specified');
  const entry = configuration.imagePolicy;
  if (!isJsonObject(entry)) throw fail('imagePolicy: must be an object with kubeConfigFile, allowTTL, denyTTL, retryBackoff and defaultAllow');
  if (typeof entry.kubeConfigFile !== 'string' || entry.kubeConfigFile === '') throw fail('imagePolicy.kubeConfigFile: a kubeconfig file is required');
  if (entry.defaultAllow !== undefined && typeof entry.defaultAllow !== 'boolean') throw fail(`imagePolicy.defaultAllow: must be true or false, got ${JSON.stringify(entry.defaultAllow)}`);
  try {
    return {
      kubeConfigFile: entry.kubeConfigFile,
      retryBackoffMs: normalize('imagePolicy.retryBackoff (backoff)', entry.retryBackoff, 1, 1, 5 * MINUTE, 500),
      allowTtlMs: normalize('imagePolicy.allowTTL (allow cache)', entry.allowTTL, SECOND, SECOND, 30 * MINUTE, 5 * MINUTE),
      denyTtlMs: normalize('imagePolicy.denyTTL (deny cache)', entry.denyTTL, SECOND, SECOND, 30 * MINUTE, 30 * SECOND),
      defaultAllow: entry.defaultAllow === true,
    };
  } catch (error) {
    throw fail((error as Error).message);
  }
}

/** The review of a pod: its images (ephemeral ones for that subresource), its image-policy annotations, its namespace. */
export function imageReview(pod: JsonObject, namespace: string, ephemeral: boolean): JsonObject {
  const spec = specOf(pod);
  const lists = ephemeral ? (['ephemeralContainers'] as const) : (['containers', 'initContainers'] as const);
  const containers = containersOf(spec, [...lists]).map(({container}) => ({image: String(container.image ?? '')}));
  const annotations = isJsonObject(pod.metadata) && isJsonObject(pod.metadata.annotations) ? pod.metadata.annotations : {};
  const infix = names().podAdmission.imagePolicyAnnotationInfix;
  const filtered = Object.fromEntries(Object.entries(annotations).filter(([k]) => k.includes(infix)));
  return {
    apiVersion: `${names().podAdmission.imagePolicyGroup}/v1alpha1`,
    kind: 'ImageReview',
    spec: {containers, annotations: filtered, namespace},
  };
}

interface ReviewStatus {
  allowed: boolean;
  reason?: string;
  auditAnnotations?: Record<string, string>;
}

/** A webhook failure that may be retried (no answer, 429 or 5xx), as upstream's backoff retries. */
export class WebhookCallError extends Error {
  constructor(message: string, readonly retriable: boolean) {
    super(message);
  }
}

export interface ImagePolicyDeps {
  config: ImagePolicyConfig;
  /** Posts the review; resolves with the decoded answer, throws WebhookCallError. */
  post(review: JsonObject): Promise<unknown>;
  clock: Clock;
}

/** Upstream's DefaultRetryBackoffWithInitialDelay: factor 1.5, 5 steps (jitter left out). */
const RETRY_FACTOR = 1.5;
const RETRY_STEPS = 5;

export class ImagePolicyWebhook implements AdmissionPlugin {
  readonly name = 'ImagePolicyWebhook';
  private readonly cache = new Map<string, {expires: number; status: ReviewStatus}>();

  constructor(private readonly deps: ImagePolicyDeps) {}

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!isCoreResource(a, 'pods') || (a.subresource !== '' && a.subresource !== 'ephemeralcontainers')) return;
    const pod = a.object;
    if (!isJsonObject(pod)) throw badRequest('Resource was marked with kind Pod but was unable to be converted');
    const review = imageReview(pod, a.namespace, a.subresource === 'ephemeralcontainers');
    const problem = await this.decide(pod, a, review);
    if (problem) throw admissionForbidden(a, problem);
  }

  /** The reason the pod is refused, or undefined. */
  private async decide(pod: JsonObject, a: AdmissionAttributes, review: JsonObject): Promise<string | undefined> {
    const key = JSON.stringify(review.spec);
    const now = this.deps.clock.now();
    const cached = this.cache.get(key);
    let status = cached && cached.expires > now ? cached.status : undefined;
    if (!status) {
      try {
        status = reviewStatus(await this.postWithRetry(review));
      } catch (error) {
        return this.failed(pod, a, (error as Error).message);
      }
      const ttl = status.allowed ? this.deps.config.allowTtlMs : this.deps.config.denyTtlMs;
      if (ttl > 0) this.cache.set(key, {expires: now + ttl, status});
    }
    const prefix = `imagepolicywebhook.image-policy.${names().domain}/`;
    for (const [k, v] of Object.entries(status.auditAnnotations ?? {})) a.addAnnotation?.(prefix + k, v);
    if (status.allowed) return undefined;
    return status.reason ? `image policy webhook backend denied one or more images: ${status.reason}` : 'one or more images rejected by webhook backend';
  }

  /** Upstream's webhookError: refused, or admitted and marked failed-open when defaultAllow is set. */
  private failed(pod: JsonObject, a: AdmissionAttributes, message: string): string | undefined {
    if (!this.deps.config.defaultAllow) return message;
    a.addAnnotation?.(`imagepolicywebhook.image-policy.${names().domain}/failed-open`, 'true');
    const meta = isJsonObject(pod.metadata) ? pod.metadata : (pod.metadata = {});
    const annotations = isJsonObject(meta.annotations) ? meta.annotations : (meta.annotations = {});
    annotations[names().podAdmission.imagePolicyFailedOpen] = 'true';
    return undefined;
  }

  private async postWithRetry(review: JsonObject): Promise<unknown> {
    let wait = this.deps.config.retryBackoffMs;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.deps.post(review);
      } catch (error) {
        const retriable = error instanceof WebhookCallError ? error.retriable : false;
        if (!retriable || attempt >= RETRY_STEPS) throw error;
        await sleep(this.deps.clock, wait);
        wait *= RETRY_FACTOR;
      }
    }
  }
}

/** The status of an ImageReview answer; throws when the answer is not one. */
export function reviewStatus(answer: unknown): ReviewStatus {
  if (!isJsonObject(answer) || answer.kind !== 'ImageReview') throw new Error(`the webhook's answer is not an ImageReview: ${JSON.stringify(answer)?.slice(0, 200)}`);
  const status = isJsonObject(answer.status) ? answer.status : {};
  const out: ReviewStatus = {allowed: status.allowed === true};
  const reason = stringAt(status, 'reason');
  if (reason) out.reason = reason;
  if (isJsonObject(status.auditAnnotations)) out.auditAnnotations = Object.fromEntries(Object.entries(status.auditAnnotations).map(([k, v]) => [k, String(v)]));
  return out;
}

/** Upstream's webhook client timeout. */
const WEBHOOK_TIMEOUT_MS = 30_000;

/** The factory: the configuration's kubeconfig file names the webhook and its credentials. */
export async function createImagePolicyWebhook(context: AdmissionPluginContext): Promise<ImagePolicyWebhook> {
  const config = parseImagePolicyConfig(context.configuration, context.configurationSource);
  let client: RestClient;
  try {
    client = new RestClient({config: await resolveClientConfig({orchconfig: config.kubeConfigFile}), timeoutMs: WEBHOOK_TIMEOUT_MS, maxRetries: 0, userAgent: 'orch-apiserver/image-policy-webhook'});
  } catch (error) {
    throw new Error(`ImagePolicyWebhook: ${context.configurationSource ?? 'configuration'}: kubeConfigFile ${config.kubeConfigFile}: ${(error as Error).message}`);
  }
  const post = async (review: JsonObject): Promise<unknown> => {
    try {
      return (await client.request({method: 'POST', path: '', body: review})).body;
    } catch (error) {
      if (error instanceof ApiStatusError) throw new WebhookCallError(`Error contacting webhook: ${error.code}`, error.code === 429 || error.code >= 500);
      if (error instanceof ApiConnectionError) throw new WebhookCallError(error.message, true);
      throw error;
    }
  };
  return new ImagePolicyWebhook({config, post, clock: context.clock});
}
