/**
 * The controller manager's own HTTPS endpoint (--bind-address:--secure-port, 10257): /healthz,
 * /livez and /readyz with the API server's exact formats (the same HealthRegistry, plus a
 * `leaderElection` check), and /metrics in the Prometheus text format. Paths in
 * --authorization-always-allow-paths are served to anyone; the others to callers the API server
 * vouches for: delegated authentication (a client certificate of --client-ca-file or of the API
 * server's extension-apiserver-authentication config map, else a TokenReview of a bearer token
 * through --authentication-orchconfig, else anonymous) and delegated authorization (a
 * SubjectAccessReview through --authorization-orchconfig; without it, forbidden).
 */
import type {Socket} from 'node:net';
import {hostname} from 'node:os';
import {readFile} from 'node:fs/promises';
import type {Registry} from 'prom-client';
import {HealthRegistry, LogCheck, createHealthHandler, pingCheck, type HealthCheck} from '../shared/health/index.js';
import {writeStatusObject} from '../shared/http/status.js';
import {createSecureServer, tlsServingOptions, trackConnections, type SecureServer, type SecureServingOptions} from '../shared/serving/secure-serving.js';
import {delegatedAuthentication, delegatedAuthorizer, delegatedForbiddenMessage, type DelegatedAuthentication} from '../shared/serving/delegated-auth.js';
import type {Authorizer} from '../shared/authorization/attributes.js';
import {createLocalAuthentication, type RequestHeaderSettings} from '../shared/authentication/client-certificates.js';
import {resolveClientConfig} from '../../client/orchconfig.js';
import {RestClient} from '../../client/rest-client.js';
import {names} from '../../api/names.js';

export interface ServingConfig extends SecureServingOptions {
  bindAddress: string;
  securePort: number;
  certDir: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  alwaysAllowPaths: string[];
  /** --client-ca-file. */
  clientCaFile?: string;
  /** `--requestheader-*`: a front proxy's CA file and headers (else looked up from the API server). */
  requestHeader?: {clientCaFile?: string; allowedNames: string[]; usernameHeaders: string[]; groupHeaders: string[]; extraHeaderPrefixes: string[]; uidHeaders: string[]};
  /** --authentication-orchconfig: where TokenReviews (and the client CA lookup) go. */
  authenticationOrchconfig?: string;
  authenticationSkipLookup?: boolean;
  authenticationTolerateLookupFailure?: boolean;
  tokenCacheTtlMs?: number;
  /** --authorization-orchconfig: where SubjectAccessReviews go. */
  authorizationOrchconfig?: string;
  authorizedTtlMs?: number;
  unauthorizedTtlMs?: number;
}

async function clientOf(file: string | undefined, option: string): Promise<RestClient | undefined> {
  if (!file) return undefined;
  try {
    return new RestClient({config: await resolveClientConfig({orchconfig: file}), timeoutMs: 10_000, maxRetries: 0, userAgent: 'orch-controller-manager/delegated-auth'});
  } catch (error) {
    throw new Error(`--${option} ${file}: ${(error as Error).message}`);
  }
}

const AUTHENTICATION_CONFIG_MAP = 'extension-apiserver-authentication';

/** What the API server publishes for delegated authentication (upstream's lookup): its client CA and its front proxy's settings. */
async function lookupAuthenticationInfo(client: RestClient): Promise<Record<string, string>> {
  const configMap = await client.get<{data?: Record<string, string>}>(`/api/v1/namespaces/${names().namespaces.system}/configmaps/${AUTHENTICATION_CONFIG_MAP}`);
  return configMap.data ?? {};
}

const jsonList = (text: string | undefined): string[] => {
  try {
    const value = JSON.parse(text ?? '[]');
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
};

/**
 * The front proxy's settings: the flags when `--requestheader-client-ca-file` is given, else the
 * ones the API server published (its CA and headers), as upstream's delegated authentication.
 */
export async function requestHeaderSettings(flags: ServingConfig['requestHeader'], published: Record<string, string> | undefined): Promise<RequestHeaderSettings | undefined> {
  if (flags?.clientCaFile) {
    let caPem: string;
    try {
      caPem = await readFile(flags.clientCaFile, 'utf8');
    } catch (error) {
      throw new Error(`--requestheader-client-ca-file: ${(error as Error).message}`);
    }
    const {clientCaFile, ...headers} = flags;
    return {...headers, caPem, source: `--requestheader-client-ca-file ${clientCaFile}`};
  }
  const caPem = published?.['requestheader-client-ca-file'];
  if (!caPem) return undefined;
  return {
    caPem,
    source: `the ${AUTHENTICATION_CONFIG_MAP} config map`,
    allowedNames: jsonList(published['requestheader-allowed-names']),
    usernameHeaders: jsonList(published['requestheader-username-headers']),
    groupHeaders: jsonList(published['requestheader-group-headers']),
    extraHeaderPrefixes: jsonList(published['requestheader-extra-headers-prefix']),
    uidHeaders: jsonList(published['requestheader-uid-headers']),
  };
}

export class ControllerManagerServing {
  readonly health = new HealthRegistry();
  private readonly logCheck = new LogCheck();
  private server?: SecureServer;
  private sockets = new Set<Socket>();
  private port = 0;

  constructor(
    private readonly config: ServingConfig,
    private readonly metrics: Registry,
    leaderElectionCheck?: HealthCheck,
    private readonly warn: (message: string) => void = () => undefined,
  ) {
    this.health.addHealthChecks(pingCheck, this.logCheck, ...(leaderElectionCheck ? [leaderElectionCheck] : []));
  }

  get url(): string {
    const host = ['0.0.0.0', '::', ''].includes(this.config.bindAddress) ? '127.0.0.1' : this.config.bindAddress;
    return `https://${host.includes(':') ? `[${host}]` : host}:${this.port || this.config.securePort}`;
  }

  private async certificate(): Promise<{cert: string; key: string}> {
    const c = this.config;
    if (c.tlsCertFile && c.tlsPrivateKeyFile) {
      return {cert: await readFile(c.tlsCertFile, 'utf8'), key: await readFile(c.tlsPrivateKeyFile, 'utf8')};
    }
    // Self-signed (by a CA of its own in the cert dir), created once and reused.
    const {ensureServingCertificates} = await import('../shared/pki/cert-dir.js');
    const {servingCertificateNames} = await import('../shared/pki/serving-names.js');
    const generated = await ensureServingCertificates(c.certDir, servingCertificateNames({hostname: hostname(), extra: [c.bindAddress]}));
    return {cert: generated.serving.certPem + generated.ca.certPem, key: generated.serving.keyPem};
  }

  async start(): Promise<void> {
    if (this.config.securePort === 0) return; // 0 turns serving off for the controller manager
    const {cert, key} = await this.certificate();
    const healthHandler = createHealthHandler(this.health);
    const {authentication, authorizer, clientCaPems} = await this.delegatedAuth();
    const tls = {...(await tlsServingOptions(this.config, key, cert)), ...(clientCaPems.length ? {ca: clientCaPems, requestCert: true, rejectUnauthorized: false} : {})};
    this.server = await createSecureServer(this.config, tls, async (req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      const user = await authentication.authenticate(req);
      if (!user) {
        writeStatusObject(res, {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401});
        return;
      }
      const verb = (req.method ?? 'GET').toLowerCase();
      // An allowed root also allows its individual checks (/livez/ping under /livez).
      const root = '/' + (path.split('/')[1] ?? '');
      const attributes = {user, verb, resourceRequest: false, path};
      const decision = root !== path && (await authorizer.authorize({...attributes, path: root})).decision === 'Allow' ? {decision: 'Allow', reason: ''} : await authorizer.authorize(attributes);
      if (decision.decision !== 'Allow') {
        writeStatusObject(res, {
          kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 403, reason: 'Forbidden', details: {},
          message: delegatedForbiddenMessage(attributes, decision.reason),
        });
        return;
      }
      if (healthHandler(req, res)) return;
      if (path === '/metrics') {
        res.writeHead(200, {'Content-Type': this.metrics.contentType});
        res.end(await this.metrics.metrics());
        return;
      }
      res.writeHead(404, {'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff'});
      res.end('404 page not found\n');
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.config.securePort, this.config.bindAddress || undefined, () => resolve());
    });
    this.port = (this.server.address() as {port: number}).port;
    this.sockets = trackConnections(this.server);
  }

  /** Who is calling and what they may do, through the API server (see the file comment). */
  private async delegatedAuth(): Promise<{authentication: DelegatedAuthentication; authorizer: Authorizer; clientCaPems: string[]}> {
    const c = this.config;
    const authnClient = await clientOf(c.authenticationOrchconfig, 'authentication-orchconfig');
    const authzClient = await clientOf(c.authorizationOrchconfig, 'authorization-orchconfig');
    let published: Record<string, string> | undefined;
    if ((!c.clientCaFile || !c.requestHeader?.clientCaFile) && authnClient && !c.authenticationSkipLookup) {
      try {
        published = await lookupAuthenticationInfo(authnClient);
      } catch (error) {
        const message = `unable to load the client CA of the API server's ${AUTHENTICATION_CONFIG_MAP} config map: ${(error as Error).message}`;
        if (!c.authenticationTolerateLookupFailure) throw new Error(`${message} (set --authentication-tolerate-lookup-failure to start without it)`);
        this.warn(message);
      }
    }
    const lookedUpCa = c.clientCaFile ? undefined : published?.['client-ca-file'] || undefined;
    const requestHeader = await requestHeaderSettings(c.requestHeader, published);
    const local = await createLocalAuthentication({anonymousAuth: true, clientCaFile: c.clientCaFile, generatedCaPem: lookedUpCa, requestHeader});
    return {
      authentication: delegatedAuthentication({local: local.authenticator, client: authnClient, cacheTtlMs: c.tokenCacheTtlMs ?? 10_000}),
      authorizer: delegatedAuthorizer({client: authzClient, alwaysAllowPaths: c.alwaysAllowPaths, authorizedTtlMs: c.authorizedTtlMs ?? 10_000, unauthorizedTtlMs: c.unauthorizedTtlMs ?? 10_000}),
      clientCaPems: local.clientCaPems,
    };
  }

  async stop(): Promise<void> {
    this.logCheck.stop();
    if (!this.server) return;
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server!.close(() => resolve()));
  }
}
