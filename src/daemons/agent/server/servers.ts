/**
 * The agent's listeners, as upstream's kubelet runs them:
 *
 * | listener                               | protocol | authentication          | paths |
 * |----------------------------------------|----------|-------------------------|-------|
 * | --address:--port (10250)               | HTTPS    | client certificate, anonymous | all; debugging ones with --enable-debugging-handlers |
 * | --address:--read-only-port (10255)     | HTTP     | none                    | /healthz, /pods, /stats/summary, /metrics, /metrics/resource |
 * | --healthz-bind-address:--healthz-port  | HTTP     | none                    | /healthz (always `ok`, upstream's ping-only handler) |
 *
 * --enable-server=false starts neither of the first two; a port of 0 turns the last two off.
 * Authorization is AlwaysAllow (Webhook is refused at start by ./config.ts).
 */
import {createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse} from 'node:http';
import {createServer as createHttpsServer} from 'node:https';
import type {Duplex} from 'node:stream';
import {Registry} from 'prom-client';
import {createLocalAuthentication} from '../../shared/authentication/client-certificates.js';
import type {Authorizer} from '../../shared/authorization/attributes.js';
import {alwaysAllow} from '../../shared/authorization/union.js';
import {delegatedAuthentication, delegatedAuthorizer, type DelegatedAuthentication} from '../../shared/serving/delegated-auth.js';
import type {RestClient} from '../../../client/rest-client.js';
import {agentForbiddenText, agentRequestAttributes} from './request-attributes.js';
import {HealthRegistry, LogCheck, createHealthHandler, namedCheck, pingCheck, type HealthLogger} from '../../shared/health/index.js';
import {serveContainerLogs} from './container-logs.js';
import {unsupportedServerSettings} from './config.js';
import {encodeDocument, podList, runningPodList} from './pod-list.js';
import {writeHttpError, writeJson, writeNotFound, writeText} from './responses.js';
import {routeRequest, type Route} from './routes.js';
import {onlyCpuAndMemory} from './summary.js';
import {resourceMetrics} from '../stats/resource-metrics.js';
import {loadServingCertificate, tlsServerOptions} from './tls.js';
import {MISSING_UPGRADE, serveStreamingUpgrade} from '../streaming/server.js';
import {runCommand} from '../streaming/run.js';
import {parseHttp1FromStream} from '../../shared/serving/secure-serving.js';
import {applyConnectionTimeouts, tlsHandshakeTimeout, UPSTREAM_CONNECTION_TIMEOUTS} from '../../shared/serving/connection-timeouts.js';
import {oneRequestAtATime} from '../../shared/serving/http1-requests.js';
import type {AgentServerConfig, AgentServerProviders} from './types.js';

export type ListenerName = 'main' | 'readOnly' | 'healthz';

export interface AgentServersOptions {
  config: AgentServerConfig;
  providers: AgentServerProviders;
  /** Served at /metrics (e.g. with AgentMetrics registered on it); default: an empty registry. */
  metricsRegistry?: Registry;
  /** Start lines, generated-certificate reasons and failed health checks (klog verbosity, message). */
  logger?: HealthLogger;
  /**
   * The port each listener actually binds, overriding the configured one (0: a free port). Whether a
   * listener runs still follows the configuration; tests use this to run every listener on free ports.
   */
  portOverrides?: Partial<Record<ListenerName, number>>;
  /** How often `follow=true` log requests look for new records (default 250 ms). */
  followPollIntervalMs?: number;
  /** The API server, for delegated authentication and authorization (the Webhook modes). */
  apiClient?: RestClient;
  /** This node's name: the `nodes` object requests are authorized against. */
  nodeName?: string;
}

/** The ports the running listeners are bound to; absent for a listener that is off. */
export type BoundPorts = Partial<Record<ListenerName, number>>;

interface ServeOptions {
  debuggingHandlers: boolean;
  /** Who may call (the secure port); none on the read-only port, which upstream leaves open. */
  access?: RequestAccess;
}

/** The secure port's delegated authentication and authorization. */
interface RequestAccess {
  authentication: DelegatedAuthentication;
  authorizer: Authorizer;
  nodeName: string;
}

/** 401 or 403 with the kubelet's texts, or undefined when the request may go on. */
async function refusal(req: IncomingMessage, access: RequestAccess): Promise<{code: 401 | 403; text: string} | undefined> {
  const user = await access.authentication.authenticate(req);
  if (!user) return {code: 401, text: 'Unauthorized'};
  const attributes = agentRequestAttributes(user, req.method ?? 'GET', new URL(req.url ?? '/', 'http://agent').pathname, access.nodeName);
  const decision = await access.authorizer.authorize(attributes);
  return decision.decision === 'Allow' ? undefined : {code: 403, text: agentForbiddenText(attributes)};
}

export class AgentServers {
  private readonly config: AgentServerConfig;
  private readonly providers: AgentServerProviders;
  private readonly metrics: Registry;
  private readonly logger: HealthLogger;
  private readonly logCheck = new LogCheck();
  private readonly health: HealthRegistry;
  private readonly healthzPortHealth: HealthRegistry;
  private readonly serveHealth: ReturnType<typeof createHealthHandler>;
  private readonly stopping = new AbortController();
  private readonly servers = new Map<ListenerName, Server>();

  constructor(private readonly options: AgentServersOptions) {
    this.config = options.config;
    this.providers = options.providers;
    this.metrics = options.metricsRegistry ?? new Registry();
    this.logger = options.logger ?? (() => {});
    this.health = new HealthRegistry({logger: this.logger});
    // Upstream's checks on the main and read-only servers: ping, log, syncloop.
    this.health.addHealthChecks(pingCheck, this.logCheck, namedCheck('syncloop', () => this.providers.health()));
    this.serveHealth = createHealthHandler(this.health);
    // The health port has no checks of its own, so it serves ping only: always `ok`.
    this.healthzPortHealth = new HealthRegistry({logger: this.logger});
  }

  /** The bound ports, once start() has resolved (an instance starts once; stop() ends it for good). */
  get ports(): BoundPorts {
    const ports: BoundPorts = {};
    for (const [name, server] of this.servers) ports[name] = (server.address() as {port: number}).port;
    return ports;
  }

  async start(): Promise<void> {
    const problems = unsupportedServerSettings(this.config, this.options.apiClient !== undefined);
    if (problems.length > 0) throw new Error(problems.join('\n'));
    try {
      if (this.config.enableServer) {
        await this.startMain();
        if (this.config.readOnlyPort > 0) {
          const server = createHttpServer((req, res) => void this.serve(req, res, {debuggingHandlers: false}));
          await this.listen('readOnly', server, this.config.address, this.config.readOnlyPort);
        }
      }
      if (this.config.healthzPort > 0) {
        const healthHandler = createHealthHandler(this.healthzPortHealth);
        const server = createHttpServer((req, res) => {
          if (isHealthzPath(req) && healthHandler(req, res)) return;
          writeNotFound(res);
        });
        await this.listen('healthz', server, this.config.healthzBindAddress, this.config.healthzPort);
      }
    } catch (error) {
      await this.stop();
      throw error;
    }
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    this.logCheck.stop();
    const servers = [...this.servers.values()];
    this.servers.clear();
    // Upgraded connections are no longer the HTTP server's: a stop ends them itself.
    for (const socket of this.streamSockets) socket.destroy();
    await Promise.all(
      servers.map(
        (server) =>
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeAllConnections();
          }),
      ),
    );
  }

  private async startMain(): Promise<void> {
    const certificate = await loadServingCertificate(this.config);
    for (const reason of certificate.generatedBecause) this.logger(0, `Generated the serving certificate in ${this.config.certDir}: ${reason}`);
    const authentication = await createLocalAuthentication({anonymousAuth: this.config.anonymousAuth, clientCaFile: this.config.clientCaFile});
    const c = this.config;
    const apiClient = this.options.apiClient;
    const access: RequestAccess = {
      authentication: delegatedAuthentication({
        local: authentication.authenticator,
        client: c.authenticationTokenWebhook ? apiClient : undefined,
        cacheTtlMs: c.authenticationTokenWebhookCacheTtlMs ?? 120_000,
      }),
      authorizer:
        c.authorizationMode === 'Webhook'
          ? delegatedAuthorizer({client: apiClient, alwaysAllowPaths: [], authorizedTtlMs: c.authorizationWebhookAuthorizedTtlMs ?? 300_000, unauthorizedTtlMs: c.authorizationWebhookUnauthorizedTtlMs ?? 30_000})
          : alwaysAllow,
      nodeName: this.options.nodeName ?? '',
    };
    const debuggingHandlers = this.config.enableDebuggingHandlers;
    // HTTP/1.1 over TLS as the other secure ports serve it: the fix for bodies over one TLS record
    // (parseHttp1FromStream), one request of a connection at a time, upstream's idle and read-header timeouts.
    const tls = {...tlsServerOptions(this.config, certificate, authentication.clientCaPems), ...tlsHandshakeTimeout(UPSTREAM_CONNECTION_TIMEOUTS)};
    const handler = oneRequestAtATime((req, res) => void this.serve(req, res, {debuggingHandlers, access}));
    const server = applyConnectionTimeouts(parseHttp1FromStream(createHttpsServer(tls, handler)), UPSTREAM_CONNECTION_TIMEOUTS);
    // exec, attach and port-forward arrive as upgrades (SPDY/3.1 or WebSocket).
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.serveUpgrade(req, socket, head, {debuggingHandlers, access}));
    await this.listen('main', server, this.config.address, this.config.port);
  }

  private async listen(name: ListenerName, server: Server, address: string, configuredPort: number): Promise<void> {
    const port = this.options.portOverrides?.[name] ?? configuredPort;
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(new Error(`${LISTENER_TITLES[name]}: listen tcp ${hostPort(address, port)}: ${error.message}`));
      server.once('error', onError);
      server.listen(port, address, () => {
        server.off('error', onError);
        resolve();
      });
    });
    this.servers.set(name, server);
    this.logger(0, `Starting to listen${name === 'main' ? '' : ` (${LISTENER_TITLES[name]})`} address="${address}" port=${(server.address() as {port: number}).port}`);
  }

  private async serve(req: IncomingMessage, res: ServerResponse, options: ServeOptions): Promise<void> {
    try {
      const refused = options.access ? await refusal(req, options.access) : undefined;
      if (refused) {
        writeText(res, refused.code, refused.text);
        return;
      }
      const url = new URL(req.url ?? '/', 'http://agent');
      const route = routeRequest(req.method ?? 'GET', url.pathname, {debuggingHandlers: options.debuggingHandlers});
      await this.dispatch(route, url, req, res);
    } catch (error) {
      writeText(res, 500, (error as Error).message);
    }
  }

  /** Connections of exec, attach and port-forward now open (for the tests' leak checks). */
  get streamingConnections(): number {
    return this.streamSockets.size;
  }
  private readonly streamSockets = new Set<Duplex>();

  private async serveUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer, options: ServeOptions): Promise<void> {
    socket.on('error', () => {});
    const fail = (code: number, text: string): void =>
      void socket.end(`HTTP/1.1 ${code} ${STATUS_TEXT[code] ?? 'Error'}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
    const refused = options.access ? await refusal(req, options.access).catch(() => ({code: 401 as const, text: 'Unauthorized'})) : undefined;
    if (refused) return fail(refused.code, refused.text);
    const url = new URL(req.url ?? '/', 'http://agent');
    const route = routeRequest(req.method ?? 'GET', url.pathname, {debuggingHandlers: options.debuggingHandlers});
    if (route.kind === 'debuggingDisabled') return fail(405, 'Debug endpoints are disabled.\n');
    if (route.kind === 'methodNotAllowed') return fail(405, 'Method Not Allowed');
    if (route.kind !== 'exec' && route.kind !== 'attach' && route.kind !== 'portForward') return fail(404, '404 page not found\n');
    const streaming = this.providers.streaming;
    if (!streaming) return fail(404, 'pod does not exist');
    serveStreamingUpgrade(req, socket, head, route, streaming, {
      idleTimeoutMs: this.config.streamingConnectionIdleTimeoutMs ?? 0,
      onConnection: (socket, change) => (change > 0 ? this.streamSockets.add(socket) : this.streamSockets.delete(socket)),
    });
  }

  private async dispatch(route: Route, url: URL, req: IncomingMessage, res: ServerResponse): Promise<void> {
    switch (route.kind) {
      case 'exec':
      case 'attach':
      case 'portForward':
        return writeHttpError(res, 400, MISSING_UPGRADE);
      case 'run':
        return runCommand(this.providers.streaming, route, url.searchParams, res);
      case 'healthz':
        if (!this.serveHealth(req, res)) writeNotFound(res); // an unknown check name
        return;
      case 'pods':
        return writeJson(res, encodeDocument(podList(await this.providers.pods())));
      case 'runningPods':
        return writeJson(res, encodeDocument(runningPodList(await this.providers.runningPods())));
      case 'containerLogs':
        return serveContainerLogs(this.providers, {...route, query: url.searchParams}, res, {
          pollIntervalMs: this.options.followPollIntervalMs ?? 250,
          signal: this.stopping.signal,
        });
      case 'metrics':
        res.writeHead(200, {'Content-Type': this.metrics.contentType});
        res.end(await this.metrics.metrics());
        return;
      case 'metricsResource': {
        // Upstream reports a failed collection as resource_scrape_error 1, still with status 200.
        const summary = await Promise.resolve(this.providers.stats()).catch(() => undefined);
        res.writeHead(200, {'Content-Type': 'text/plain; version=0.0.4; charset=utf-8'});
        res.end(resourceMetrics(summary));
        return;
      }
      case 'statsSummary':
        return this.serveSummary(url, res);
      case 'debuggingDisabled':
        return writeHttpError(res, 405, 'Debug endpoints are disabled.');
      case 'methodNotAllowed':
        return writeText(res, 405, 'Method Not Allowed', {Allow: route.allow});
      case 'notFound':
        return writeNotFound(res);
    }
  }

  private async serveSummary(url: URL, res: ServerResponse): Promise<void> {
    let summary;
    try {
      summary = await this.providers.stats();
    } catch (error) {
      writeText(res, 500, `Internal Error: ${(error as Error).message}`);
      return;
    }
    const only = url.searchParams.getAll('only_cpu_and_memory');
    if (only.length === 1 && only[0] === 'true') summary = onlyCpuAndMemory(summary);
    // go-restful pretty-prints JSON entities with a one-space indent.
    writeJson(res, JSON.stringify(summary, null, ' '));
  }
}

const STATUS_TEXT: Record<number, string> = {401: 'Unauthorized', 403: 'Forbidden', 404: 'Not Found', 405: 'Method Not Allowed'};

const LISTENER_TITLES: Record<ListenerName, string> = {main: 'agent server', readOnly: 'read-only server', healthz: 'healthz server'};

function hostPort(address: string, port: number): string {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

function isHealthzPath(req: IncomingMessage): boolean {
  const path = (req.url ?? '/').split('?')[0];
  return path === '/healthz' || path.startsWith('/healthz/');
}
