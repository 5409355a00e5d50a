/**
 * The aggregator (upstream's kube-aggregator in front of the API server): APIService objects kept
 * in memory from the store; requests under a non-local APIService's `/apis/<group>/<version>`
 * proxied to its service with the proxy client certificate and the front-proxy identity headers;
 * `/apis` merged with the aggregated groups; and the availability controller keeping each
 * APIService's `Available` condition from a discovery check of its service.
 */
import {connect as tlsConnect, type ConnectionOptions} from 'node:tls';
import {request as httpsRequest} from 'node:https';
import type {Socket} from 'node:net';
import {builtinResource, type ResourceInfo} from '../../../api/resources.js';
import {ApiError, failureStatus} from '../../../api/status.js';
import type {JsonObject} from '../../../patch/types.js';
import {AdmissionChain} from '../admission/chain.js';
import {StoreInformer} from '../store-informer.js';
import type {Store} from '../storage/store.js';
import {resourceKeyPrefix} from '../storage-keys.js';
import {forward} from '../rest/proxy.js';
import {RegistryStore, type WriteContext} from '../rest/registry-store.js';
import {rfc3339} from '../rest/objects.js';
import {systemClock, type ApiRequest, type ApiResponse, type Clock, type UserInfo} from '../rest/types.js';
import {apiServiceForPath, apiServiceView, aggregatedGroup, mergeGroupList, proxyHeaders, resolveTarget, type ApiServiceView, type Target} from './apiservices.js';
import {names} from '../../../api/names.js';

/** Opens a connection to host:port through the configured egress (aggregator/egress.ts); undefined is a direct dial. */
export type EgressDialer = (host: string, port: number) => Promise<Socket> | undefined;

export interface AggregatorOptions {
  store: Store;
  keyPrefix: string;
  /** --enable-aggregator-routing: endpoint addresses instead of the service's cluster IP. */
  routing: boolean;
  /** --proxy-client-cert-file / --proxy-client-key-file, read. */
  proxyClient?: {cert: string; key: string};
  /** --aggregator-reject-forwarding-redirect. */
  rejectForwardingRedirect: boolean;
  /** The `cluster` egress selection. */
  egress?: EgressDialer;
  clock?: Clock;
  /** How often every APIService is checked again (upstream resyncs every 30s). */
  availabilityIntervalMs?: number;
  onError?: (message: string, error: unknown) => void;
}

const WRITER: WriteContext = {user: {name: 'system:apiserver', groups: ['system:masters']}, dryRun: false, fieldManager: 'orch-apiserver'};
/** upstream's discovery check timeout. */
const CHECK_TIMEOUT_MS = 5000;

export class Aggregator {
  private readonly views = new Map<string, ApiServiceView>();
  private readonly informer: StoreInformer;
  private readonly apiservices: RegistryStore;
  private readonly services: RegistryStore;
  private readonly endpoints: RegistryStore;
  private timer?: NodeJS.Timeout;
  private checking?: Promise<void>;
  private stopped = false;

  constructor(private readonly options: AggregatorOptions) {
    const info = builtinResource(names().groups.apiregistration, 'apiservices') as ResourceInfo;
    const deps = {store: options.store, clock: options.clock ?? systemClock, keyPrefix: options.keyPrefix, admission: new AdmissionChain([])};
    this.apiservices = new RegistryStore(info, deps);
    this.services = new RegistryStore(builtinResource('', 'services') as ResourceInfo, deps);
    this.endpoints = new RegistryStore(builtinResource('', 'endpoints') as ResourceInfo, deps);
    const prefix = resourceKeyPrefix(options.keyPrefix, info.group, 'apiservices');
    this.informer = new StoreInformer(
      options.store,
      new Map([[prefix, {
        apply: (o) => {
          const view = apiServiceView(o as JsonObject);
          const before = this.views.get(view.name);
          this.views.set(view.name, view);
          // A new or changed service reference is checked at once, not at the next resync.
          if (view.service && JSON.stringify(before?.service) !== JSON.stringify(view.service)) this.checkSoon();
        },
        remove: (o) => void this.views.delete(apiServiceView(o as JsonObject).name),
      }]]),
      (error) => options.onError?.('APIService informer error', error),
    );
  }

  start(): void {
    void this.informer.start();
    const interval = this.options.availabilityIntervalMs ?? 30_000;
    this.timer = setInterval(() => this.checkSoon(), interval);
    this.timer.unref();
    this.checkSoon();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.informer.stop();
    await this.checking?.catch(() => undefined);
  }

  /** The non-local APIService serving a path, if any. */
  lookup(path: string): ApiServiceView | undefined {
    return apiServiceForPath(path, this.views);
  }

  /** `/apis` with the aggregated groups. */
  groupList(local: JsonObject): JsonObject {
    return mergeGroupList(local, [...this.views.values()]);
  }

  /** `/apis/<group>` for a group only APIServices serve. */
  group(group: string): JsonObject | undefined {
    const doc = aggregatedGroup(group, [...this.views.values()]);
    return doc && {kind: 'APIGroup', apiVersion: 'v1', ...doc};
  }

  private async target(view: ApiServiceView): Promise<Target> {
    const ref = view.service!;
    const service = await this.services.get(ref.namespace, ref.name).catch(() => undefined);
    const endpoints = this.options.routing ? await this.endpoints.get(ref.namespace, ref.name).catch(() => undefined) : undefined;
    return resolveTarget(ref, service, endpoints, this.options.routing);
  }

  private tls(view: ApiServiceView, target: Target): ConnectionOptions {
    return {
      servername: target.serverName,
      ca: view.caBundle,
      rejectUnauthorized: !view.insecureSkipTLSVerify,
      cert: this.options.proxyClient?.cert,
      key: this.options.proxyClient?.key,
    };
  }

  /** A TLS connection factory through the egress, or undefined to dial directly. */
  private async connection(view: ApiServiceView, target: Target): Promise<(() => Socket) | undefined> {
    const tunnel = await this.options.egress?.(target.host, target.port);
    if (!tunnel) return undefined;
    const tls = this.tls(view, target);
    return () => tlsConnect({...tls, socket: tunnel});
  }

  /**
   * Proxies a request to the APIService's service (upstream's proxyHandler): 503 while the
   * APIService is not available or its service cannot be resolved; the user as front-proxy headers.
   */
  async proxy(req: ApiRequest, res: ApiResponse, view: ApiServiceView, user: UserInfo): Promise<void> {
    if (!view.available) throw new ApiError(failureStatus(503, 'ServiceUnavailable', 'service unavailable', {}));
    let target: Target;
    try {
      target = await this.target(view);
    } catch (error) {
      throw new ApiError(failureStatus(503, 'ServiceUnavailable', (error as Error).message, {}));
    }
    const createConnection = await this.connection(view, target).catch((error: Error) => {
      throw new ApiError(failureStatus(503, 'ServiceUnavailable', `error trying to reach service: ${error.message}`, {}));
    });
    await forward(req, res, {scheme: 'https', host: target.host, port: target.port}, req.url ?? '/', undefined, {
      headers: proxyHeaders(req.headers, user),
      tls: this.tls(view, target),
      rejectRedirects: this.options.rejectForwardingRedirect,
      createConnection,
      timeoutMs: 0,
    });
  }

  private checkSoon(): void {
    if (this.stopped) return;
    // One pass at a time; a request for another while one runs is served by the next tick.
    this.checking ??= this.checkAll().finally(() => (this.checking = undefined));
  }

  /** upstream's AvailableConditionController: one discovery GET per non-local APIService. */
  private async checkAll(): Promise<void> {
    for (const view of [...this.views.values()]) {
      if (!view.service || this.stopped) continue;
      const condition = await this.check(view);
      await this.setCondition(view.name, condition).catch((error) => this.options.onError?.(`Cannot update the status of APIService ${view.name}`, error));
    }
  }

  private async check(view: ApiServiceView): Promise<{status: 'True' | 'False'; reason: string; message: string}> {
    const ref = view.service!;
    const service = await this.services.get(ref.namespace, ref.name).catch(() => undefined);
    if (!service) return {status: 'False', reason: 'ServiceNotFound', message: `service/${ref.name} in "${ref.namespace}" is not present`};
    const endpoints = this.options.routing ? await this.endpoints.get(ref.namespace, ref.name).catch(() => undefined) : undefined;
    if (this.options.routing && !endpoints) return {status: 'False', reason: 'EndpointsNotFound', message: `cannot find endpoints for service/${ref.name} in "${ref.namespace}"`};
    let target: Target;
    try {
      target = resolveTarget(ref, service, endpoints, this.options.routing);
    } catch (error) {
      const message = (error as Error).message;
      const reason = /no endpoints|endpoints/.test(message) ? 'MissingEndpoints' : 'ServicePortError';
      return {status: 'False', reason, message};
    }
    const url = `https://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}/apis/${view.group}/${view.version}`;
    try {
      const createConnection = await this.connection(view, target);
      const code = await new Promise<number>((resolve, reject) => {
        // upstream checks as system:kube-aggregator in system:masters, through the front-proxy headers.
        const headers = proxyHeaders({}, {name: 'system:kube-aggregator', groups: ['system:masters']});
        const request = httpsRequest(url, {method: 'GET', headers, timeout: CHECK_TIMEOUT_MS, ...this.tls(view, target), ...(createConnection ? {createConnection, agent: false} : {})}, (reply) => {
          reply.resume();
          resolve(reply.statusCode ?? 0);
        });
        request.on('timeout', () => request.destroy(new Error(`Client.Timeout exceeded while awaiting headers`)));
        request.on('error', reject);
        request.end();
      });
      // upstream wants a 2xx answer to the discovery GET.
      if (code < 200 || code >= 300) throw new Error(`bad status from ${url}: ${code}`);
      return {status: 'True', reason: 'Passed', message: 'all checks passed'};
    } catch (error) {
      return {status: 'False', reason: 'FailedDiscoveryCheck', message: `failing or missing response from ${url}: ${(error as Error).message}`};
    }
  }

  private async setCondition(name: string, condition: {status: string; reason: string; message: string}): Promise<void> {
    const now = rfc3339((this.options.clock ?? systemClock).now());
    const {object} = await this.apiservices.update('', name, {...WRITER, subresource: 'status'}, (current) => {
      const status = (current.status ?? {}) as JsonObject;
      const conditions = Array.isArray(status.conditions) ? (status.conditions as JsonObject[]) : [];
      const existing = conditions.find((c) => c.type === 'Available');
      if (existing && existing.status === condition.status && existing.reason === condition.reason && existing.message === condition.message) return current;
      const lastTransitionTime = existing && existing.status === condition.status ? existing.lastTransitionTime : now;
      current.status = {...status, conditions: [...conditions.filter((c) => c.type !== 'Available'), {type: 'Available', ...condition, lastTransitionTime}]};
      delete (current.metadata as JsonObject).resourceVersion;
      return current;
    });
    this.views.set(name, apiServiceView(object));
  }
}
