/**
 * Posts an AdmissionReview to a webhook and decodes its answer (upstream's webhook ClientManager
 * and rest client): the URL, or the service's `https://<name>.<namespace>.svc:<port><path>` dialled
 * at one of its endpoints; the CA bundle trusted; the kubeconfig's credentials for that host; the
 * webhook's timeout as the whole call's deadline, announced to the webhook as `?timeout=<n>s`.
 * Every failure is a CallingWebhookError with upstream's wording.
 */
import {names} from '../../../../../api/names.js';
import {dialError} from '../../../webhook-post.js';
import {WebhookPools} from '../../../webhook-pools.js';
import type {JsonObject} from '../../../../../patch/types.js';
import {credentialHeaders, type CredentialsResolver} from './authentication.js';
import type {WebhookAccessor} from './accessors.js';
import {CallingWebhookError} from './errors.js';

/** Where a Service's traffic goes (src/daemons/apiserver/rest/service-resolver.ts over the store). */
export type ServiceResolver = (namespace: string, name: string, port: number) => Promise<{host: string; port: number}>;

/** A webhook's client configuration, resolved: the URL called, the host its credentials are for, the URL as errors show it, the CA. */
interface ResolvedEndpoint {
  url: URL;
  target: string;
  shown: string;
  ca: string | undefined;
}

export interface WebhookCaller {
  call(hook: WebhookAccessor, review: JsonObject): Promise<unknown>;
  close?(): void;
}

/** client-go's text for an answer that is not 2xx. */
function statusText(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as {kind?: string; message?: string};
    if (body?.kind === 'Status' && typeof body.message === 'string' && body.message) return body.message;
  } catch {
    // not a Status: fall through to the generic texts
  }
  const trimmed = text.trim();
  if (status >= 500 && trimmed) return `an error on the server (${JSON.stringify(trimmed.slice(0, 1024))}) has prevented the request from succeeding`;
  return `the server responded with the status code ${status} but did not return more information`;
}

export class WebhookClient implements WebhookCaller {
  /** Keep-alive connections per endpoint and TLS identity (CA, client certificate, server name). */
  private readonly pools = new WebhookPools();

  constructor(
    private readonly credentials: CredentialsResolver,
    private readonly resolveService: ServiceResolver,
  ) {}

  /**
   * What each webhook's client configuration resolves to, kept per webhook (upstream's client
   * manager caches its REST clients the same way): parsing the URL and decoding the CA bundle on
   * every call cost more than the rest of building the request. Webhooks are made once per
   * configuration revision (source.ts), so a weak map by the webhook drops them with it.
   */
  private readonly endpoints = new WeakMap<WebhookAccessor, ResolvedEndpoint>();

  private endpoint(hook: WebhookAccessor): ResolvedEndpoint {
    const known = this.endpoints.get(hook);
    if (known) return known;
    const {url: configured, service, caBundle} = hook.clientConfig;
    let url: URL;
    let target: string;
    if (configured) {
      url = new URL(configured);
      target = url.host;
    } else if (service) {
      url = new URL(`https://${service.name}.${service.namespace}.svc:${service.port}${service.path ?? ''}`);
      target = `${service.name}.${service.namespace}.svc:${service.port}`;
    } else {
      throw new Error('webhook clientConfig has neither url nor service');
    }
    url.searchParams.set('timeout', `${hook.timeoutSeconds}s`);
    // Go keeps the port it was given in the URL it prints; URL drops a default one.
    const shown = service && !configured && !url.port ? url.toString().replace(url.host, `${url.hostname}:443`) : url.toString();
    const resolved = {url, target, shown, ca: caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined};
    this.endpoints.set(hook, resolved);
    return resolved;
  }

  async call(hook: WebhookAccessor, review: JsonObject): Promise<unknown> {
    const fail = (reason: string) => new CallingWebhookError(hook.name, reason);
    const {url: configured, service} = hook.clientConfig;
    let endpoint: ReturnType<WebhookClient['endpoint']>;
    try {
      endpoint = this.endpoint(hook);
    } catch (error) {
      throw fail(`could not get REST client: ${(error as Error).message}`);
    }
    const {url, target, shown} = endpoint;
    let connectTo: {host: string; port: number} | undefined;
    if (service && !configured) {
      try {
        connectTo = await this.resolveService(service.namespace, service.name, service.port);
      } catch (error) {
        throw fail(`failed to call webhook: Post "${shown}": ${(error as Error).message}`);
      }
    }
    const credentials = this.credentials(target);
    let response: {status: number; text: string};
    try {
      response = await this.pools.post(url, JSON.stringify(review), {
        ca: endpoint.ca,
        cert: credentials.certPem,
        key: credentials.keyPem,
        headers: {...credentialHeaders(credentials), 'User-Agent': `${names().product}-apiserver-admission`},
        timeoutMs: hook.timeoutSeconds * 1000,
        connectTo,
      });
    } catch (error) {
      throw fail(`failed to call webhook: Post "${shown}": ${dialError(error as NodeJS.ErrnoException)}`);
    }
    if (response.status < 200 || response.status >= 300) throw fail(`failed to call webhook: ${statusText(response.status, response.text)}`);
    try {
      return JSON.parse(response.text);
    } catch (error) {
      throw fail(`failed to call webhook: ${(error as Error).message}`);
    }
  }

  close(): void {
    this.pools.close();
  }
}
