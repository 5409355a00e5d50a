/**
 * The conversion webhook client (upstream's apiextensions-apiserver/pkg/apiserver/conversion
 * webhook_converter.go): a ConversionReview v1 POSTed over HTTPS, trusting the CRD's caBundle,
 * the response checked (kind, uid, success, one object per object sent, same kind, name,
 * namespace and uid, the desired apiVersion) and the original metadata restored but for labels
 * and annotations. Every failure is an Internal error naming the webhook's target kind, as
 * upstream answers it, and nothing is written.
 */
import { randomUUID } from 'node:crypto';
import { internalError, type ApiError } from '../../../api/status.js';
import { names } from '../../../api/names.js';
import { isJsonObject, type JsonObject } from '../../../patch/types.js';
import { dialError, postJson } from '../webhook-post.js';

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace: string; name: string; path?: string; port?: number };
  /** PEM bundle, base64-encoded (the CRD field's wire form). */
  caBundle?: string;
}

/** Where a Service's traffic goes (one of its endpoints), for webhooks named by a service reference. */
export type ServiceResolver = (namespace: string, name: string, port: number) => Promise<{ host: string; port: number }>;

/** Upstream's default conversion webhook timeout. */
const TIMEOUT_MS = 30_000;

function targetUrl(config: WebhookClientConfig): string {
  if (config.url) return config.url;
  const s = config.service;
  if (!s) throw new Error('webhook clientConfig has neither url nor service');
  return `https://${s.name}.${s.namespace}.svc:${s.port ?? 443}${s.path ?? ''}`;
}

function failure(gvk: string, text: string): ApiError {
  return internalError(new Error(`conversion webhook for ${gvk} failed: ${text}`));
}

/** Sends objects to the webhook for `desiredAPIVersion`; returns them converted, in order. */
export async function convertWithWebhook(
  config: WebhookClientConfig, objects: JsonObject[], desiredAPIVersion: string, gvk: string, timeoutMs = TIMEOUT_MS, resolveService?: ServiceResolver,
): Promise<JsonObject[]> {
  const uid = randomUUID();
  const reviewApiVersion = `${names().groups.apiextensions}/v1`;
  const review = { kind: 'ConversionReview', apiVersion: reviewApiVersion, request: { uid, desiredAPIVersion, objects } };
  let url: URL;
  try {
    url = new URL(targetUrl(config));
    url.searchParams.set('timeout', `${Math.round(timeoutMs / 1000)}s`);
  } catch (error) {
    throw failure(gvk, (error as Error).message);
  }
  const ca = config.caBundle ? Buffer.from(config.caBundle, 'base64').toString('utf8') : undefined;
  // Go keeps the service port in the URL it prints (`https://name.ns.svc:443/path`); URL drops a default port.
  const shown = config.service && !config.url && !url.port ? url.toString().replace(url.host, `${url.hostname}:443`) : url.toString();
  let response: { status: number; text: string };
  let connectTo: { host: string; port: number } | undefined;
  if (config.service && !config.url) {
    if (!resolveService) throw failure(gvk, `Post "${shown}": service references are not supported here`);
    try {
      connectTo = await resolveService(config.service.namespace, config.service.name, config.service.port ?? 443);
    } catch (error) {
      throw failure(gvk, `Post "${shown}": ${(error as Error).message}`);
    }
  }
  try {
    response = await postJson(url, JSON.stringify(review), { ca, timeoutMs, connectTo });
  } catch (error) {
    throw failure(gvk, `Post "${shown}": ${dialError(error as NodeJS.ErrnoException)}`);
  }
  if (response.status < 200 || response.status >= 300) {
    throw failure(gvk, `the server responded with the status code ${response.status} but did not return more information`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.text);
  } catch (error) {
    throw failure(gvk, `invalid response: ${(error as Error).message}`);
  }
  if (!isJsonObject(parsed) || parsed.kind !== 'ConversionReview' || parsed.apiVersion !== reviewApiVersion) {
    throw failure(gvk, `expected webhook response of ${reviewApiVersion}, Kind=ConversionReview, got ${isJsonObject(parsed) ? `${String(parsed.apiVersion)}, Kind=${String(parsed.kind)}` : 'no object'}`);
  }
  const res = parsed.response;
  if (!isJsonObject(res)) throw failure(gvk, 'no response provided');
  if (res.uid !== uid) throw failure(gvk, `expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(res.uid ?? '')}`);
  const result = isJsonObject(res.result) ? res.result : {};
  if (result.status !== 'Success') {
    throw failure(gvk, typeof result.message === 'string' && result.message ? result.message : `response.result.status was '${String(result.status ?? '')}', not 'Success'`);
  }
  const converted = Array.isArray(res.convertedObjects) ? res.convertedObjects : [];
  if (converted.length !== objects.length) {
    throw internalError(new Error(`conversion webhook for ${gvk} returned ${converted.length} objects, expected ${objects.length}`));
  }
  return converted.map((out, i) => {
    const original = objects[i]!;
    if (!isJsonObject(out)) throw failure(gvk, `invalid converted object at index ${i}`);
    if (out.apiVersion !== desiredAPIVersion) {
      throw internalError(new Error(`conversion webhook for ${gvk} returned invalid converted object at index ${i}: invalid groupVersion (expected ${desiredAPIVersion}, received ${String(out.apiVersion)})`));
    }
    const om = isJsonObject(original.metadata) ? original.metadata : {};
    const cm = isJsonObject(out.metadata) ? out.metadata : {};
    for (const key of ['name', 'namespace', 'uid'] as const) {
      if ((om[key] ?? '') !== (cm[key] ?? '')) {
        throw internalError(new Error(`conversion webhook for ${gvk} returned invalid converted object at index ${i}: must have the same ${key}: ${String(om[key] ?? '')} != ${String(cm[key] ?? '')}`));
      }
    }
    if (out.kind !== original.kind) {
      throw internalError(new Error(`conversion webhook for ${gvk} returned invalid converted object at index ${i}: invalid kind (expected ${String(original.kind)}, received ${String(out.kind)})`));
    }
    // Metadata is the server's: only labels and annotations may change in a conversion.
    const metadata: JsonObject = structuredClone(om);
    for (const key of ['labels', 'annotations']) {
      if (isJsonObject(cm[key])) metadata[key] = cm[key]!;
      else delete metadata[key];
    }
    return { ...out, metadata };
  });
}
