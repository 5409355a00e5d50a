/**
 * The API server as a library (DESIGN.md: daemons are classes with start(), stop() and a state
 * snapshot). It assembles the parts that live in their own modules: storage (SQLite or etcd behind
 * a watch cache), TLS certificates, authentication and authorization, the REST handler, health
 * checks with real post-start hooks, request filters, and the shutdown state machine.
 */
import {UserError} from '../../lib/errors.js';
import type {Store} from './storage/store.js';
import {reportedVersion} from '../../lib/version.js';
import {hostname} from 'node:os';
import {join} from 'node:path';
import {mkdir, readFile} from 'node:fs/promises';
import {ServerResponse, type IncomingMessage} from 'node:http';
import type {Duplex} from 'node:stream';
import type {Server as NetServer, Socket} from 'node:net';
import {createStore, type Storage, type StorageOptions} from './storage/index.js';
import {Encryption} from './encryption/index.js';
import type {KmsTimings} from './encryption/kms/provider.js';
import {createApiHandler, type ApiHandler} from './rest/handler.js';
import {writeError, writePlainNotFound} from './rest/http-io.js';
import {builtinResources, ResourceRegistry, type ResourceInfo} from '../../api/resources.js';
import {fetchSummary, metricsResources, parseMetricsPath, serveResourceMetrics, METRICS_VERSION} from './resource-metrics/index.js';
import {names} from '../../api/names.js';
import {resourceKeyPrefix} from './storage-keys.js';
import {POD_LOG_PATH, servePodLog, type AgentTls} from './pod-logs.js';
import {POD_STREAM_PATH, markUpgrade, servePodStream} from './pod-streams.js';
import {publishAuthenticationInfo} from './authentication-info.js';
import {bootstrapNamespaces, bootstrapPriorityClasses, firstAddress} from './rest/bootstrap.js';
import {IdentityLease, identityLeaseName, joinHostPort} from './peers/identity-lease.js';
import {createPeerProxy, type PeerProxy} from './peers/peer-proxy.js';
import {startCoordinatedLeaderElection, type CoordinatedLeaderElection, type CoordinatedTimings} from './coordinated/index.js';
import {serviceAllocation, EndpointReconciler, type ServiceAllocation, type ServicesConfig} from './services/index.js';
import {createEventSweeper} from './rest/event-ttl.js';
import {
  HealthRegistry,
  PostStartHooks,
  LogCheck,
  createHealthHandler,
  informerSyncCheck,
  kvstoreChecks,
  kvstoreWritableCheck,
  writeFailureText,
  pingCheck,
  namedCheck,
  storageReadinessHook,
  STORAGE_READINESS_HOOK,
  type RootResult,
} from './health/index.js';
import {ShutdownLifecycle} from './lifecycle/index.js';
import {
  composeFilters,
  goawayFilter,
  maxInFlightFilter,
  requestTimeoutFilter,
  writeStatusObject,
  cacheControlFilter,
  hstsFilter,
  corsFilter,
  type Filter,
  type MaxInFlightFilter,
} from './filters/index.js';
import {createAuthentication, type AuthenticationOptions, type AuthenticationSetup} from './authentication/config.js';
import type {ServiceAccountOptions} from './authentication/serviceaccount/setup.js';
import {discoveryDocument, issuerDiscovery, JWKS_PATH, type IssuerDiscovery} from './authentication/serviceaccount/discovery.js';
import {serveIssuerDiscovery, storeObjectGetter} from './authentication/serviceaccount/serving.js';
import type {TokenServices} from './rest/token-request.js';
import {authorizerChain, createAuthorizer} from './authorization/authorizer.js';
import {rulesFor} from './authorization/rules-review.js';
import {registerLocalApiServices} from './rest/apiservices.js';
import {impersonate, isImpersonationHeader} from './authentication/impersonation.js';
import {unauthorizedStatus, forbiddenStatus} from '../shared/authorization/status.js';
import type {Authorizer, AuthorizationAttributes} from '../shared/authorization/attributes.js';
import type {RequestAuthenticator} from '../shared/authentication/authenticator.js';
import {RbacInformer, bootstrapRbac} from './rbac-bootstrap.js';
import {NodeGraphInformer} from './node-graph-informer.js';
import {RBAC_RESOURCES, rbacWriteGuard, type RbacResource} from './authorization/rbac-write-guard.js';
import {RbacAuthorizer} from './authorization/rbac.js';
import {RequestStats} from './request-stats.js';
import type {ApiServerSnapshot, CheckState} from './state.js';
import {createAuditor, type Auditor, type AuditConfig, type RequestAudit} from './audit/index.js';
import {AdmissionChain} from './admission/chain.js';
import {ApiError} from '../../api/status.js';
import {buildAdmissionChain} from './admission/build.js';
import {storeWatch} from './admission/watch.js';
import {readAdmissionConfiguration} from './admission/config-file.js';
import {enabledAdmissionPlugins} from './admission/enabled-plugins.js';
import {ADMISSION_PLUGIN_FACTORIES} from './admission/registry.js';
import {systemClock} from '../shared/clock.js';
import {connectOptions} from './pod-streams.js';
import {systemClock as systemRestClock, type RequestContext} from './rest/types.js';
import {klog} from '../../lib/klog.js';
import type {VersionInfo} from '../../lib/version.js';
import {createPriorityAndFairness, DEBUG_PREFIX as APF_DEBUG_PREFIX, type PriorityAndFairness} from './filters/flowcontrol/index.js';
import {startDebugRoutes, type DebugRoutes} from './debug/index.js';
import {listenOptions} from '../shared/serving/listen-options.js';
import type {FeatureGates} from '../../api/feature-gates.js';
import type {EffectiveVersion} from '../../api/effective-version.js';
import {servedBuiltins} from './rest/served-apis.js';
import {createAggregator, type AggregatorConfig} from './aggregator/setup.js';
import type {Aggregator} from './aggregator/aggregator.js';
import {serveAggregated} from './aggregator/handler.js';
import {createSecureServer, tlsServingOptions, trackConnections, type SecureServingOptions} from '../shared/serving/secure-serving.js';
import {createApiServerMetrics, METRICS_PATHS, type ApiServerMetrics} from './metrics/index.js';
import type {MetricsOptionValues} from '../shared/metrics/index.js';
import {keyResolver} from './encryption/store.js';
import type {ApiServerTracing} from './tracing/tracer.js';
import {requestInfoOf} from './filters/index.js';

const log = klog('apiserver/server.ts');

export interface ApiServerConfig extends SecureServingOptions {
  bindAddress: string;
  securePort: number;
  advertiseAddress?: string;
  dataDir: string;
  certDir: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  /** --agent-certificate-authority, --agent-client-certificate, --agent-client-key (for `kubectl logs`). */
  agentCertificateAuthority?: string;
  agentClientCertificate?: string;
  agentClientKey?: string;
  /** --agent-preferred-address-types: which node address reaches its agent (upstream's default: Hostname first). */
  agentPreferredAddressTypes?: string[];
  storage: Omit<StorageOptions, 'dataDir'>;
  keyPrefix: string;
  anonymousAuth: boolean;
  /** `--anonymous-auth` was given on the command line (it may not be, with an anonymous section in `--authentication-config`). */
  anonymousAuthSet?: boolean;
  /** `--authentication-config`: JWT issuers (instead of `--oidc-*`) and anonymous access; reloaded on change. */
  authenticationConfigFile?: string;
  /** How often the authentication configuration file is read again (default 1 s; upstream watches the file). */
  authenticationConfigReloadIntervalMs?: number;
  clientCaFile?: string;
  tokenAuthFile?: string;
  /** `--enable-bootstrap-token-auth`. */
  enableBootstrapTokenAuth?: boolean;
  /** `--requestheader-*`. */
  requestHeader?: AuthenticationOptions['requestHeader'];
  /** Internal (no option, as upstream): the token success cache TTL; tests that delete accounts set 0. */
  tokenCacheTtlMs?: number;
  /** `--oidc-*`. */
  oidc?: AuthenticationOptions['oidc'];
  /** `--authentication-token-webhook-*` (timeoutMs: internal, for tests). */
  tokenWebhook?: {configFile: string; version: string; cacheTtlMs: number; timeoutMs?: number};
  /** Service account token options (`--service-account-*`, `--api-audiences`). */
  serviceAccounts?: Omit<ServiceAccountOptions, 'certDir' | 'getObject' | 'tlsPrivateKeyFile' | 'now'>;
  authorizationModes: string[];
  authorizationPolicyFile?: string;
  authorizationWebhookConfigFile?: string;
  authorizationWebhookVersion: string;
  authorizationWebhookAuthorizedTtlMs: number;
  authorizationWebhookUnauthorizedTtlMs: number;
  /** --authorization-config: the structured configuration (instead of the mode and webhook options). */
  authorizationConfigFile?: string;
  /** How often the configuration file is checked for changes (tests shorten it). */
  authorizationConfigReloadIntervalMs?: number;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  /** --enable-priority-and-fairness (default true): replaces the max-in-flight filter. */
  enablePriorityAndFairness?: boolean;
  requestTimeoutMs: number;
  minRequestTimeoutSeconds: number;
  goawayChance: number;
  livezGracePeriodMs: number;
  shutdownDelayMs: number;
  shutdownSendRetryAfter: boolean;
  shutdownWatchTerminationGracePeriodMs: number;
  storageInitializationTimeoutMs: number;
  kvstoreHealthcheckTimeoutMs: number;
  kvstoreReadycheckTimeoutMs: number;
  eventTtlMs: number;
  serviceClusterIpRange?: string[];
  /** Services: `--service-node-port-range`, `--orch-service-node-port`, `--endpoint-reconciler-type` (./services/). */
  services?: ServicesConfig;
  /**
   * `--peer-advertise-ip`, `--peer-advertise-port`, `--peer-ca-file` (gate UnknownVersionInteroperabilityProxy; ./peers/).
   * Internal: `hostname` names the identity lease instead of the machine's (upstream's SetHostnameFuncForTests:
   * two servers in one test process), `discoveryRetryMs` the first pause before a failed peer discovery is retried.
   */
  peer?: {advertiseIp?: string; advertisePort?: string; caFile?: string; hostname?: string; discoveryRetryMs?: number};
  /** The --coordinated-leadership-* timings (the coordinated leader election controller's own lease). */
  coordinatedLeadership?: CoordinatedTimings;
  strictTransportSecurityDirectives?: string[];
  /** --encryption-provider-config: values of the resources it names are encrypted in the store. */
  encryptionProviderConfig?: string;
  /** --encryption-provider-config-automatic-reload, and how often the file is read again (default 1 s). */
  encryptionProviderConfigAutomaticReload?: boolean;
  encryptionReloadIntervalMs?: number;
  /** KMS v2 plugin timings (Status poll, health answer reuse, DEK write lifetime); upstream's when absent. Tests shorten them. */
  kmsTimings?: KmsTimings;
  /** The audit options; without a policy file nothing is audited. */
  audit?: AuditConfig;
  /** The metric options (--show-hidden-metrics-for-version, --disabled-metrics, --allow-metric-labels(-manifest)). */
  metrics?: MetricsOptionValues;
  /** --kvstore-count-metric-poll-period and --kvstore-db-metric-poll-interval in ms (0: off). */
  kvstoreCountMetricPollPeriodMs?: number;
  kvstoreDbMetricPollIntervalMs?: number;
  /** --tracing-config-file: spans exported over OTLP; without it nothing is traced (and nothing costs). */
  tracingConfigFile?: string;
  /** The admission options (config.ts admissionConfig); without them the default set runs. */
  admission?: {
    enable?: string[];
    disable?: string[];
    /** `--admission-control`: replaces the default set when given (empty: no plugin). */
    admissionControl?: string[];
    configFile?: string;
    serverOptions?: Record<string, unknown>;
  };
  version: VersionInfo;
  /** --feature-gates resolved at the emulated release; the defaults when absent. */
  featureGates?: FeatureGates;
  /** --emulated-version and --min-compatibility-version (binary 1.36 and its defaults when absent). */
  effectiveVersion?: EffectiveVersion;
  /** The aggregator options: routing, redirects, the proxy client certificate, the egress selector. */
  aggregator?: AggregatorConfig;
  /** --runtime-config and the emulation forward-compatibility options (rest/served-apis.ts). */
  apis?: {runtimeConfig: Record<string, string>; emulationForwardCompatible: boolean; runtimeConfigEmulationForwardCompatible: boolean};
  /** Where the admin orchconfig is written. */
  orchconfigPath: string;
  /** --agent-timeout: connecting to an agent and its response headers (pod-logs.ts AgentTls.timeoutMs). */
  agentTimeoutMs?: number;
  /** --allow-privileged (default false): privileged containers are invalid without it. */
  allowPrivileged?: boolean;
  /** --delete-collection-workers (default 1). */
  deleteCollectionWorkers?: number;
  /** --enable-garbage-collector (default true): off, deletes ignore propagationPolicy and orphanDependents. */
  enableGarbageCollector?: boolean;
  /** --external-hostname: the host clients are handed in discovery (serverAddressByClientCIDRs) and issuer URLs. */
  externalHostname?: string;
  /** --lease-reuse-duration-seconds: how long an etcd lease for events is shared (etcd only). */
  leaseReuseDurationSeconds?: number;
  /** --max-connection-bytes-per-sec: the byte rate of each direction of exec, attach and port-forward connections. */
  maxConnectionBytesPerSec?: number;
  /** --permit-port-sharing: bind with SO_REUSEPORT (listen-options.ts). */
  permitPortSharing?: boolean;
  /** --cors-allowed-origins (validated patterns). */
  corsAllowedOrigins?: string[];
  /** --profiling, --contention-profiling, --debug-socket-path, --enable-logs-handler (./debug/). */
  debug?: {profiling: boolean; contentionProfiling: boolean; socketPath?: string; logsHandler: boolean};
}

type AnyRequest = IncomingMessage & {headersDistinct?: Record<string, string[]>};

export class ApiServer {
  private storage?: Storage;
  private encryption?: Encryption;
  private api?: ApiHandler;
  private authenticator?: RequestAuthenticator;
  private authorizer?: Authorizer;
  private rbac?: RbacInformer;
  /** The Node authorizer's graph (only with --authorization-mode including Node, or --authorization-config). */
  private nodeGraph?: NodeGraphInformer;
  private stopAuthorization?: () => void;
  private stopAuthentication?: () => void;
  private externalSigner?: {close(): void};
  /** The authorizer types in effect, in order (the modes, or the configuration file's types). */
  private authorizationModesInEffect = () => this.config.authorizationModes;
  private lifecycle?: ShutdownLifecycle;
  private readonly registry: HealthRegistry;
  private serviceAllocation?: ServiceAllocation;
  private endpointReconciler?: EndpointReconciler;
  private identityLease?: IdentityLease;
  private coordinatedElection?: CoordinatedLeaderElection;
  private readonly hooks: PostStartHooks;
  /** Aborted by stop(): post-start hooks still running end. */
  private readonly hooksStop = new AbortController();
  private readonly logCheck = new LogCheck();
  private readonly stats = new RequestStats();
  private inFlight?: MaxInFlightFilter;
  private apf?: PriorityAndFairness;
  private metrics?: ApiServerMetrics;
  private tracing?: ApiServerTracing;
  private stopMetricPolling?: () => void;
  private auditor?: Auditor;
  private admission?: AdmissionChain;
  private sweeper?: {start(): void; stop(): void};
  private debug?: DebugRoutes;
  private sockets = new Set<Socket>();
  private lastChecks: {livez: CheckState[]; readyz: CheckState[]} = {livez: [], readyz: []};
  private boundPort = 0;
  private storeRevision = 0;
  private storeReachable = false;
  private agentTls: AgentTls = {};
  private clientCaPems: string[] = [];
  private requestHeaderInfo?: AuthenticationSetup['requestHeader'];
  private issuerDiscovery?: () => Promise<IssuerDiscovery>;
  private tokenServices?: TokenServices;
  private readonly createdAt = Date.now();
  /** The built-in resources --runtime-config, the gates and the emulation version leave served. */
  private servedResources: ResourceInfo[] = [];
  private aggregator?: Aggregator;
  private peerProxy?: PeerProxy;

  constructor(readonly config: ApiServerConfig) {
    this.registry = new HealthRegistry({
      livezGracePeriodMs: config.livezGracePeriodMs,
      logger: (level, message) => log.v(level).info(message),
      onFirstReady: () => this.lifecycle?.markReady(),
    });
    this.hooks = new PostStartHooks({registry: this.registry});
  }

  /**
   * host:port other hosts reach this server at (upstream's ExternalAddress): --external-hostname,
   * else the advertise address, with the secure port unless the hostname names one. Handed out in
   * discovery (serverAddressByClientCIDRs) and the issuer's JWKS URI.
   */
  private externalAddress(): string {
    const c = this.config;
    const port = this.boundPort || c.securePort;
    if (c.externalHostname) return /^[^:]+:\d+$/.test(c.externalHostname) || /^\[.*\]:\d+$/.test(c.externalHostname) ? c.externalHostname : `${bracketed(c.externalHostname)}:${port}`;
    return `${bracketed(c.advertiseAddress ?? '127.0.0.1')}:${port}`;
  }

  private externalUrl(): string {
    return `https://${this.externalAddress()}`;
  }

  /** https://host:port clients use (loopback when bound to all interfaces). */
  get url(): string {
    const host = ['0.0.0.0', '::', ''].includes(this.config.bindAddress) ? '127.0.0.1' : this.config.bindAddress;
    return `https://${host.includes(':') ? `[${host}]` : host}:${this.boundPort || this.config.securePort}`;
  }

  async start(): Promise<void> {
    const c = this.config;
    for (const warning of c.featureGates?.warnings ?? []) log.warning(warning);
    const served = servedBuiltins(c);
    for (const warning of served.warnings) log.warning(warning);
    this.servedResources = served.resources;
    await mkdir(c.dataDir, {recursive: true, mode: 0o700});
    // Every built-in resource is served from the watch cache (lists, watches, gets), at the key
    // prefix the REST layer writes it under; custom resources read through to the store.
    // (Resources that are never stored have no cache; versions sharing a key prefix share one.)
    const cachedResources = [...new Map(builtinResources().filter((r) => !r.rest).map((r) => [r.storagePrefix, {group: r.group, resource: r.plural, prefix: `${c.keyPrefix}/${r.storagePrefix}/`}])).values()];
    // Overrides (--kvstore-servers-overrides group/resource#servers) route by the same key prefix
    // the REST layer writes each resource under (nodes live under `minions`, as upstream).
    const keyPrefixOf = (group: string, resource: string) => resourceKeyPrefix(c.keyPrefix, group, resource);
    this.encryption = c.encryptionProviderConfig
      ? await Encryption.start({file: c.encryptionProviderConfig, keyPrefix: c.keyPrefix, reload: c.encryptionProviderConfigAutomaticReload ?? false, reloadIntervalMs: c.encryptionReloadIntervalMs, kmsTimings: c.kmsTimings, log: (m) => log.info(m)})
      : undefined;
    const encryption = this.encryption;
    // Metrics first: a bad metric option stops the start; every engine request is timed (after encryption, as upstream times etcd).
    const metrics = (this.metrics = await createApiServerMetrics({values: c.metrics ?? {}, inFlight: () => this.apf?.gate.executing ?? this.inFlight?.inFlight ?? {readOnly: 0, mutating: 0}, resolveKey: keyResolver(c.keyPrefix), health: this.registry}));
    // A bad tracing file stops the start too; the tracing code loads only when it is given.
    const tracing = (this.tracing = c.tracingConfigFile ? await startTracing(c.tracingConfigFile) : undefined);
    const resolveKey = keyResolver(c.keyPrefix);
    const wrapEngine = (engine: Store) => {
      const timed = metrics.storage.instrument(encryption ? encryption.wrap(engine) : engine);
      return tracing ? tracing.instrument(timed, resolveKey) : timed;
    };
    const builtinPrefixes = cachedResources.map((r) => r.prefix);
    // On etcd, events expire by lease as upstream (their TTL from each write); the sweeper stays for SQLite.
    const expiring = {prefixes: [...new Set(['', names().groups.events].map((g) => keyPrefixOf(g, 'events')))].map((prefix) => ({prefix, ttlSeconds: Math.max(1, Math.ceil(c.eventTtlMs / 1000))})), leaseReuseDurationSeconds: c.leaseReuseDurationSeconds ?? 60};
    this.storage = createStore({...c.storage, dataDir: c.dataDir, cachedResources, builtinPrefixes, keyPrefixOf, wrapEngine, expiring, requestTimeoutMs: c.requestTimeoutMs > 0 ? c.requestTimeoutMs : undefined});
    const store = this.storage.store;
    log.info('Storage ready', 'engine', store.engine);
    await this.checkNameSet(store, c.keyPrefix);

    // A bad policy stops the start here, before anything listens.
    if (c.audit) this.auditor = await createAuditor(c.audit, (message, ...kv) => log.warning(message, ...kv), metrics.audit);
    const {key, cert, caPem} = await this.certificates();
    const readOptional = (file?: string) => (file ? readFile(file, 'utf8') : Promise.resolve(undefined));
    this.agentTls = {
      ca: await readOptional(c.agentCertificateAuthority), cert: await readOptional(c.agentClientCertificate), key: await readOptional(c.agentClientKey),
      addressTypes: c.agentPreferredAddressTypes, timeoutMs: c.agentTimeoutMs,
    };
    const auth = await createAuthentication({
      anonymousAuth: c.anonymousAuth,
      clientCaFile: c.clientCaFile,
      generatedCaPem: caPem,
      tokenAuthFile: c.tokenAuthFile,
      tokenWebhook: c.tokenWebhook,
      oidc: c.oidc,
      authenticationConfig: c.authenticationConfigFile ? {file: c.authenticationConfigFile, log: (m) => log.info(m), anonymousAuthSet: c.anonymousAuthSet} : undefined,
      tokenCacheTtlMs: c.tokenCacheTtlMs,
      requestHeader: c.requestHeader,
      bootstrapTokens: c.enableBootstrapTokenAuth ? {getObject: storeObjectGetter(store, c.keyPrefix), log: (m) => log.v(3).info(m)} : undefined,
      serviceAccounts: {
        lookup: true, extendTokenExpiration: true, maxTokenExpirationSeconds: 0,
        ...c.serviceAccounts,
        certDir: c.certDir,
        tlsPrivateKeyFile: c.tlsPrivateKeyFile,
        getObject: storeObjectGetter(store, c.keyPrefix),
      },
    });
    if (auth.structured) {
      auth.structured.reloader.watch(c.authenticationConfigReloadIntervalMs ?? 1000);
      const structured = auth.structured;
      this.stopAuthentication = () => structured.reloader.stop();
    }
    // Upstream serves issuer discovery only for an https issuer URL (OIDC needs one).
    if (auth.serviceAccounts && auth.serviceAccounts.issuers[0].startsWith('https://')) {
      const sa = auth.serviceAccounts;
      // Built on first use: the JWKS URI names the port, known once the server listens.
      let documents: Promise<IssuerDiscovery> | undefined;
      const jwksUri = () => c.serviceAccounts?.jwksUri ?? `${this.externalUrl()}${JWKS_PATH}`;
      // An external signer's keys change as it rotates: its documents are made on each request.
      this.issuerDiscovery = sa.externalSigner
        ? () => issuerDiscovery(sa.issuers[0], jwksUri(), sa.discoveryKeys())
        : () => (documents ??= issuerDiscovery(sa.issuers[0], jwksUri(), sa.verificationKeys));
    }
    this.externalSigner = auth.serviceAccounts?.externalSigner;
    this.tokenServices = {issuer: auth.serviceAccounts?.issuer, union: auth.tokenUnion, apiAudiences: auth.apiAudiences};
    for (const warning of auth.warnings) log.warning(warning);
    this.authenticator = auth.authenticator;
    this.clientCaPems = auth.clientCaPems;
    this.requestHeaderInfo = auth.requestHeader;
    this.rbac = new RbacInformer(store, c.keyPrefix, (error) => log.v(2).info('RBAC informer error', 'err', error));
    this.authorizer = await this.authorization(store);

    const server = this;
    const rbacRules = new RbacAuthorizer(this.rbac.index);
    const rbacIndex = this.rbac.index;
    const services = serviceAllocation({store, keyPrefix: c.keyPrefix, clock: systemRestClock, clusterIPRanges: c.serviceClusterIpRange, nodePortRange: c.services?.nodePortRange});
    this.serviceAllocation = services;
    this.api = createApiHandler({
      store,
      allocations: (info) => (info.group === '' && info.plural === 'services' ? services : undefined),
      // RBAC's escalation prevention: roles and bindings grant only what their writer holds.
      writeGuards: (info) =>
        info.group === names().groups.rbac && RBAC_RESOURCES.includes(info.plural as RbacResource) ? rbacWriteGuard(info.plural as RbacResource, rbacRules, rbacIndex) : undefined,
      keyPrefix: c.keyPrefix,
      // The resource metrics API is served here (./resource-metrics/), not by a stored resource:
      // it joins the registry for discovery only.
      registry: new ResourceRegistry([...this.servedResources, ...metricsResources()]),
      version: {
        ...reportedVersion(c.version, c.effectiveVersion),
        gitCommit: '',
        gitTreeState: 'clean',
        buildDate: '',
        goVersion: c.version.nodeVersion,
        compiler: 'node',
        platform: c.version.platform,
      },
      minRequestTimeoutSeconds: c.minRequestTimeoutSeconds,
      // Read per request: the port is known once the server listens.
      get serverAddresses() {
        return [{clientCIDR: '0.0.0.0/0', serverAddress: server.externalAddress()}];
      },
      agentTls: this.agentTls,
      rulesFor: (user, namespace) => rulesFor(this.authorizationModesInEffect(), this.rbac?.index, user, namespace),
      tokens: this.tokenServices,
      allowPrivileged: c.allowPrivileged, deleteCollectionWorkers: c.deleteCollectionWorkers, garbageCollection: c.enableGarbageCollector,
    });

    // APIServices with a service are proxied to extension servers (aggregator/).
    this.aggregator = await createAggregator(c.aggregator ?? {routing: false, rejectForwardingRedirect: true}, store, c.keyPrefix, (message, error) => log.v(2).info(message, 'err', error));
    this.aggregator.start();
    // The mixed version proxy (peers/), only with its gate, as upstream; bad options stop the start here.
    if (c.featureGates?.enabled('UnknownVersionInteroperabilityProxy')) {
      const {registry} = this.api;
      const aggregator = this.aggregator;
      this.peerProxy = await createPeerProxy({
        peerCaFile: c.peer?.caFile, aggregator: c.aggregator, store, keyPrefix: c.keyPrefix, self: identityLeaseName(c.peer?.hostname ?? hostname()), clock: systemClock,
        servedLocally: (r, path) => registry.lookup(r.group, r.version, r.resource) !== undefined || aggregator.lookup(path) !== undefined,
        onError: (message, error) => log.v(2).info(message, 'err', error), discoveryRetryMs: c.peer?.discoveryRetryMs, metrics: this.metrics?.registry,
      });
      this.peerProxy.start();
    }

    // The admission chain from the options: a bad configuration stops the start before anything listens.
    this.admission = await this.admissionChain(this.api);
    this.api.setAdmission(this.admission);

    if (c.enablePriorityAndFairness !== false) {
      const caches = this.storage.caches;
      this.apf = createPriorityAndFairness({
        store, keyPrefix: c.keyPrefix, serverConcurrency: c.maxRequestsInflight + c.maxMutatingRequestsInflight, clock: systemClock,
        objectCount: (prefix) => caches.map((cache) => cache.objectCount(prefix)).find((n) => n !== undefined),
        log: (message, ...kv) => log.v(2).info(message, ...kv),
        // The apiserver_flowcontrol_* metrics are served at /metrics with the others.
        registry: this.metrics?.registry.registry,
      });
      this.apf.start();
    }
    this.installHealthChecks();
    const d = c.debug ?? {profiling: true, contentionProfiling: false, logsHandler: false};
    this.debug = await startDebugRoutes({
      profiling: d.profiling, contentionProfiling: d.contentionProfiling, debugSocketPath: d.socketPath,
      logsDir: d.logsHandler ? join(c.dataDir, 'logs') : undefined, onError: (error) => log.error('Debug handler failed', 'err', error),
    });
    await this.listen(key, cert, [...auth.clientCaPems, ...(auth.requestHeader?.caPems ?? [])]);
    await this.writeAdminOrchconfig(caPem);
    log.info('Serving securely', 'address', this.url, 'orchconfig', c.orchconfigPath);

    this.stopMetricPolling = metrics.storage.startPolling({
      resources: () => cachedResources,
      store,
      engines: () => (this.storage as Storage).engines,
      countPeriodMs: c.kvstoreCountMetricPollPeriodMs ?? 60_000,
      dbSizePeriodMs: c.kvstoreDbMetricPollIntervalMs ?? 30_000,
      onError: (error) => log.v(2).info('Failed to refresh the storage metrics', 'err', error),
    });
    this.sweeper = createEventSweeper({store, ttlMs: c.eventTtlMs, keyPrefix: c.keyPrefix});
    this.sweeper.start();
    // Post-start hooks run after the server listens, as upstream; each one's check fails until it is done.
    void this.hooks.run(this.hooksStop.signal);
  }

  /** The admission plugins the options choose, in upstream's order, configured by --admission-control-config-file. */
  private async admissionChain(api: ApiHandler): Promise<AdmissionChain> {
    const a = this.config.admission ?? {};
    const configurations = a.configFile ? await readAdmissionConfiguration(a.configFile) : undefined;
    const plugins = enabledAdmissionPlugins({enable: a.enable, disable: a.disable, admissionControl: a.admissionControl});
    const chain = await buildAdmissionChain({
      plugins, configurations, factories: ADMISSION_PLUGIN_FACTORIES, objects: api.admissionObjects, clock: systemClock,
      watch: storeWatch(this.storage!.store, this.config.keyPrefix, (error) => log.v(2).info('Admission watch error', 'err', error)),
      resources: () => api.registry.all(),
      serverOptions: a.serverOptions, log: (message, ...kv) => log.info(message, ...kv), warn: (message) => log.warning(message),
      resourcesForKind: (group, version, kind) => api.registry.all().filter((r) => r.group === group && r.version === version && r.kind === kind),
    });
    log.info('Admission plugins', 'plugins', chain.plugins.map((p) => p.name).join(','));
    return chain;
  }

  /**
   * The authorizer chain: from --authorization-config (reloaded when the file changes), else from
   * --authorization-mode and the files of its modes.
   */
  private async authorization(store: Storage['store']): Promise<Authorizer> {
    const c = this.config;
    const setup = await import('./authorization/authorization-setup.js');
    const rbac = (this.rbac as RbacInformer).index;
    const graph = () => (this.nodeGraph ??= new NodeGraphInformer(store, c.keyPrefix, (error) => log.v(2).info('Node authorizer graph error', 'err', error)));
    if (c.authorizationConfigFile) {
      // Kept for every configuration: a reload may add the Node authorizer.
      const nodeGraph = graph().graph;
      const reloading = await setup.ReloadingAuthorizer.load(
        c.authorizationConfigFile,
        async (configured) => authorizerChain(await setup.authorizersFromConfig(configured, {rbac, nodeGraph})),
        (message) => log.info(message),
      );
      reloading.reloader.watch(c.authorizationConfigReloadIntervalMs ?? 1000);
      this.authorizationModesInEffect = () => reloading.types;
      this.stopAuthorization = () => reloading.reloader.stop();
      return reloading;
    }
    const fileAuthorizers = await setup.loadAuthorizers(
      {
        modes: c.authorizationModes,
        policyFile: c.authorizationPolicyFile,
        webhookConfigFile: c.authorizationWebhookConfigFile,
        webhookVersion: c.authorizationWebhookVersion,
        webhookAuthorizedTtlMs: c.authorizationWebhookAuthorizedTtlMs,
        webhookUnauthorizedTtlMs: c.authorizationWebhookUnauthorizedTtlMs,
      },
      (message) => log.warning(message),
    );
    const nodeGraph = c.authorizationModes.includes('Node') ? graph().graph : undefined;
    return createAuthorizer(c.authorizationModes, {rbac, nodeGraph, ...fileAuthorizers});
  }

  private async certificates(): Promise<{key: string; cert: string; caPem: string}> {
    const c = this.config;
    const {ensureServingCertificates} = await import('../shared/pki/cert-dir.js');
    const {servingCertificateNames} = await import('../shared/pki/serving-names.js');
    const serviceIp = c.serviceClusterIpRange?.[0] ? firstAddress(c.serviceClusterIpRange[0]) : firstAddress('10.0.0.0/24');
    const names = servingCertificateNames({advertiseAddress: c.advertiseAddress, hostname: hostname(), serviceIp, extra: [c.bindAddress]});
    // The generated CA always exists: it signs the admin orchconfig's client certificate even when
    // the serving certificate comes from --tls-cert-file.
    const generated = await ensureServingCertificates(c.certDir, names);
    for (const reason of generated.reasons) log.info('Generated certificate', 'reason', reason, 'dir', c.certDir);
    if (c.tlsCertFile && c.tlsPrivateKeyFile) {
      return {cert: await readFile(c.tlsCertFile, 'utf8'), key: await readFile(c.tlsPrivateKeyFile, 'utf8'), caPem: generated.ca.certPem};
    }
    return {cert: generated.serving.certPem + generated.ca.certPem, key: generated.serving.keyPem, caPem: generated.ca.certPem};
  }

  private async writeAdminOrchconfig(caPem: string): Promise<void> {
    const c = this.config;
    const {ensureClientCertificate} = await import('../shared/pki/cert-dir.js');
    const ca = {certPem: caPem, keyPem: await readFile(join(c.certDir, 'ca.key'), 'utf8')};
    const admin = await ensureClientCertificate(c.certDir, 'admin', ca, {user: 'orch-admin', groups: ['system:masters']});
    const {writeAdminOrchconfig} = await import('../../client/orchconfig.js');
    await writeAdminOrchconfig(c.orchconfigPath, {server: this.url, caPem, certPem: admin.certPem, keyPem: admin.keyPem});
  }

  /**
   * Refuses a store created under the other name set (src/daemons/apiserver/names-guard.ts). A store
   * that does not answer within a few seconds is not waited for here: its health checks report it.
   */
  private async checkNameSet(store: Store, keyPrefix: string): Promise<void> {
    const {checkStoreNameSet, NameSetMismatchError} = await import('./names-guard.js');
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, 5000)));
    try {
      await Promise.race([checkStoreNameSet(store, keyPrefix), timeout]);
    } catch (error) {
      if (error instanceof NameSetMismatchError) {
        await this.storage?.close().catch(() => undefined);
        this.storage = undefined;
        throw new UserError(error.message);
      }
      log.v(1).info('Could not check which names the store was created with', 'err', error);
    } finally {
      clearTimeout(timer);
    }
  }

  private installHealthChecks(): void {
    const c = this.config;
    const storage = this.storage as Storage;
    const store = storage.store;
    const api = this.api as ApiHandler;
    const rbac = this.rbac as RbacInformer;
    const ping = (timeoutMs: number) => Promise.all(storage.engines.map((e) => e.ping(timeoutMs))).then(() => undefined);
    const kv = kvstoreChecks({healthcheckTimeoutMs: c.kvstoreHealthcheckTimeoutMs, readycheckTimeoutMs: c.kvstoreReadycheckTimeoutMs, ping});
    this.registry.addHealthChecks(pingCheck, this.logCheck, kv.health, ...(this.encryption?.healthChecks ?? []));
    this.registry.addReadyzChecks(kv.readiness, kvstoreWritableCheck(() => storage.engines));
    this.registry.addReadyzChecks(
      informerSyncCheck(() => [
        ['rbac', rbac.synced],
        ...(this.nodeGraph ? [['node-authorizer-graph', this.nodeGraph.synced] as [string, boolean]] : []),
        ['customresourcedefinitions', api.crdInformerSynced()],
        ...storage.caches.flatMap((cache) => cache.status().map((s) => [s.prefix, s.synced] as [string, boolean])),
      ]),
    );

    const keyPrefix = c.keyPrefix;
    const hooks = this.hooks;
    hooks.add(STORAGE_READINESS_HOOK, storageReadinessHook({timeoutMs: c.storageInitializationTimeoutMs, isReady: () => storage.synced(), warn: (m) => log.warning(m)}));
    // The admission chain is built from the options before serving starts (admissionChain), so
    // there is nothing left to initialize when this hook runs.
    hooks.add('start-orch-apiserver-admission-initializer', async () => undefined);
    hooks.add('generic-apiserver-start-informers', async ({signal}) => {
      void rbac.start();
      const graph = this.nodeGraph;
      if (graph) void graph.start();
      await waitFor(() => rbac.synced && (graph?.synced ?? true), signal);
    });
    hooks.add('start-apiextensions-informers', async ({signal}) => waitFor(() => api.crdInformerSynced(), signal));
    hooks.add('start-apiextensions-controllers', async () => api.whenSynced());
    hooks.add('crd-informer-synced', async () => api.whenSynced());
    hooks.add('bootstrap-controller', async ({signal}) => {
      const reconcilerType = c.services?.endpointReconcilerType ?? 'lease';
      await retry(() =>
        bootstrapNamespaces(store, {
          keyPrefix, serviceClusterIPRange: c.serviceClusterIpRange, securePort: this.boundPort || c.securePort, advertiseAddress: c.advertiseAddress,
          serviceNodePort: c.services?.orchServiceNodePort, serviceAllocation: this.serviceAllocation, endpointsReconciled: reconcilerType !== 'none',
        }), signal,
      );
      // A server stopped meanwhile starts no loops stop() would not see.
      signal.throwIfAborted();
      this.endpointReconciler = new EndpointReconciler({
        store, keyPrefix, type: reconcilerType, ip: c.advertiseAddress ?? '127.0.0.1', port: this.boundPort || c.securePort,
        intervalMs: c.services?.endpointReconcileIntervalMs,
        onError: (error) => log.v(2).info('Endpoint reconciler error', 'err', error),
      });
      // The first pass before readyz passes: the endpoints list this server once it is ready.
      await this.endpointReconciler.reconcile().catch((error) => log.v(2).info('Endpoint reconciler error', 'err', error));
      signal.throwIfAborted();
      this.endpointReconciler.start();
      // After the system namespace exists: upstream's identity lease controller.
      const peerProxy = c.featureGates?.enabled('UnknownVersionInteroperabilityProxy') === true;
      this.identityLease = new IdentityLease({
        store, keyPrefix, hostname: c.peer?.hostname ?? hostname(),
        peerAddress: peerProxy
          ? joinHostPort(c.peer?.advertiseIp ?? c.advertiseAddress ?? '127.0.0.1', c.peer?.advertisePort ?? (this.boundPort || c.securePort))
          : undefined,
        onError: (error) => log.v(2).info('Identity lease error', 'err', error),
      });
      await this.identityLease.renew().catch((error) => log.v(2).info('Identity lease error', 'err', error));
      signal.throwIfAborted();
      this.identityLease.start();
    });
    this.coordinatedElection = startCoordinatedLeaderElection(hooks, {store, keyPrefix, config: c, served: this.servedResources, warn: (m) => log.warning(m)});
    hooks.add('rbac/bootstrap-roles', async ({signal}) => {
      const {created} = await retry(() => bootstrapRbac(store, keyPrefix), signal);
      if (created > 0) log.info('Created the default RBAC roles and bindings', 'count', created);
    });
    hooks.add('scheduling/bootstrap-system-priority-classes', async ({signal}) => retry(() => bootstrapPriorityClasses(store, {keyPrefix}), signal));
    hooks.add('start-cluster-authentication-info-controller', async ({signal}) => {
      // After the bootstrap controller has made orch-system.
      await retry(() => publishAuthenticationInfo(store, keyPrefix, this.clientCaPems, this.requestHeaderInfo), signal);
    });
    // The aggregator (aggregator/) starts with the API handler; its start steps complete at once,
    // so the check names stay those of the seed.
    // The built-in group versions are registered as local APIServices (upstream's autoregister).
    hooks.add('orch-apiserver-autoregistration', async ({signal}) => {
      const created = await retry(() => registerLocalApiServices(store, keyPrefix, this.servedResources), signal);
      if (created > 0) log.info('Registered the built-in group versions as local APIServices', 'count', created);
    });
    for (const name of ['start-orch-aggregator-informers', 'apiservice-registration-controller', 'apiservice-status-available-controller', 'apiservice-openapi-controller']) {
      hooks.add(name, async () => undefined);
    }
    this.registry.addHealthChecks(namedCheck('autoregister-completion', () => undefined));
  }

  private requestHandler(): (req: AnyRequest, res: ServerResponse) => void {
    const c = this.config;
    const health = createHealthHandler(this.registry);
    const api = this.api as ApiHandler;
    const authenticator = this.authenticator as RequestAuthenticator;
    const authorizer = this.authorizer as Authorizer;
    this.inFlight = maxInFlightFilter({
      maxRequestsInFlight: c.maxRequestsInflight,
      maxMutatingRequestsInFlight: c.maxMutatingRequestsInflight,
      // Asked only for a request over budget. Upstream authenticates before this limit, so
      // system:masters is exempt; here authentication runs after the filters, so it is done for it.
      userGroups: (req) => ((req as {orchUser?: {groups: string[]}}).orchUser ?? authenticator.authenticateRequest(req as AnyRequest).user)?.groups,
    });
    const lifecycle = this.lifecycle as ShutdownLifecycle;
    const filters: Filter[] = [
      lifecycle.filter,
      this.stats.filter,
      ...(this.metrics ? [this.metrics.requests.filter] : []),
      cacheControlFilter(),
      ...(c.strictTransportSecurityDirectives?.length ? [hstsFilter(c.strictTransportSecurityDirectives)] : []),
      // Upstream's WithCORS sits outside authentication: preflights carry no credentials.
      ...[corsFilter(c.corsAllowedOrigins ?? [])].filter((f): f is Filter => f !== undefined),
      goawayFilter({chance: c.goawayChance}),
      requestTimeoutFilter({requestTimeoutMs: c.requestTimeoutMs}),
      // Priority and fairness needs the user: it runs in serve(), after authentication (as upstream).
      ...(this.apf ? [] : [this.inFlight]),
    ];
    const auditor = this.auditor;
    const audits = new WeakMap<AnyRequest, RequestAudit>();
    const serve = async (req: AnyRequest, res: ServerResponse) => {
      const outcome = await authenticator.authenticateRequestAsync(req);
      // A front proxy's identity headers are believed only as the proxy's; nobody after this sees them.
      const proxy = c.requestHeader ? authenticator.requestHeader : undefined;
      if (proxy) for (const name of Object.keys(req.headers)) if (proxy.isIdentityHeader(name)) delete req.headers[name];
      this.metrics?.authenticated(outcome.user ? 'success' : outcome.error ? 'error' : 'failure');
      if (!outcome.user) {
        if (outcome.error) log.v(2).info('Unable to authenticate the request', 'err', outcome.error);
        if (auditor) await auditor.failedAuthentication(req, res, attemptedMethods(req));
        return writeStatusObject(res, unauthorizedStatus());
      }
      if (outcome.usedBearerToken) delete req.headers.authorization;
      // Upstream's WithTracing runs after authentication: the user decides whether the caller's trace is joined.
      this.tracing?.enterRequest(req, res, requestInfoOf(req), outcome.user.groups);
      // Audit (upstream's WithAudit) sits between authentication and impersonation: the policy sees
      // the authenticated user, the event names the impersonated one separately.
      const audit = auditor ? await auditor.begin(req, res, outcome.user) : undefined;
      if (audit === false) {
        return writeStatusObject(res, {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Internal error occurred: failed to store audit event', reason: 'InternalError', details: {}, code: 500});
      }
      if (audit) audits.set(req, audit);
      const impersonated = await impersonate(req, outcome.user, authorizer);
      if ('status' in impersonated) return writeStatusObject(res, impersonated.status);
      if (impersonated.impersonated) for (const name of Object.keys(req.headers)) if (isImpersonationHeader(name)) delete req.headers[name];
      const user = impersonated.user;
      if (impersonated.impersonated) audit?.setImpersonatedUser(user);
      (req as {orchUser?: unknown}).orchUser = user;
      if (this.apf && !(await this.apf.gate(req, res, user))) return;
      // An authorizer that could not decide (a webhook that is down) fails the request with a 500,
      // as upstream's authorization filter, unless another one allowed it.
      const authorize = async (attrs: AuthorizationAttributes) => {
        const result = await authorizer.authorize(attrs);
        if (attrs.user === user) this.metrics?.authorized(result.decision === 'Allow' ? 'allowed' : result.error ? 'error' : result.decision === 'Deny' ? 'denied' : 'no-opinion');
        // The audit event carries the request's own authorization decision (not access reviews').
        if (attrs.user === user) audit?.recordDecision(result);
        if (result.decision !== 'Allow' && result.error) throw result.error;
        return result;
      };
      const path = (req.url ?? '/').split('?')[0];
      if (/^\/(healthz|livez|readyz)(\/|$)/.test(path)) {
        const attrs: AuthorizationAttributes = {user, verb: 'get', resourceRequest: false, path};
        const decision = await authorize(attrs);
        if (decision.decision !== 'Allow') return writeStatusObject(res, forbiddenStatus(attrs, decision.reason));
        if (health(req, res)) return;
      }
      if (this.apf && path.startsWith(APF_DEBUG_PREFIX) && req.method === 'GET') {
        const attrs: AuthorizationAttributes = {user, verb: 'get', resourceRequest: false, path};
        const decision = await authorize(attrs);
        if (decision.decision !== 'Allow') return writeStatusObject(res, forbiddenStatus(attrs, decision.reason));
        if (this.apf.serveDebug(path, new URL(req.url ?? '/', 'https://local').searchParams, res)) return;
      }
      if (METRICS_PATHS.has(path) && this.metrics) {
        const attrs: AuthorizationAttributes = {user, verb: 'get', resourceRequest: false, path};
        const decision = await authorize(attrs);
        if (decision.decision !== 'Allow') return writeStatusObject(res, forbiddenStatus(attrs, decision.reason));
        return this.metrics.serve(path, res);
      }
      const debugRoute = this.debug?.route(path);
      if (debugRoute) {
        const attrs: AuthorizationAttributes = {user, verb: (req.method ?? 'GET').toLowerCase(), resourceRequest: false, path};
        const decision = await authorize(attrs);
        if (decision.decision !== 'Allow') return writeStatusObject(res, forbiddenStatus(attrs, decision.reason));
        return debugRoute(req, res);
      }
      const discovery = this.issuerDiscovery && discoveryDocument(path);
      if (discovery && req.method === 'GET') {
        const attrs: AuthorizationAttributes = {user, verb: 'get', resourceRequest: false, path};
        const decision = await authorize(attrs);
        if (decision.decision !== 'Allow') return writeStatusObject(res, forbiddenStatus(attrs, decision.reason));
        return serveIssuerDiscovery(res, await this.issuerDiscovery!(), discovery);
      }
      const logPath = POD_LOG_PATH.exec(path);
      if (logPath && req.method === 'GET') {
        const [, namespace, name] = logPath;
        const attrs: AuthorizationAttributes = {user, verb: 'get', resourceRequest: true, apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource: 'log', namespace, name};
        const decision = await authorize(attrs);
        if (decision.decision !== 'Allow') return writeStatusObject(res, forbiddenStatus(attrs, decision.reason));
        return servePodLog(req, res, logPath, (this.storage as Storage).store, c.keyPrefix, this.agentTls);
      }
      // What the REST layer asks of the request: its user, the authorizer, and the audit event's annotations.
      const ctx: RequestContext = {
        user,
        authorize: async (a) => {
          // The handler asks as the request's user, or (access reviews) as the user under review.
          const decision = await authorize(a.user && a.user !== user ? {...a} : {...a, user});
          return {allowed: decision.decision === 'Allow', reason: decision.reason || undefined};
        },
        addAuditAnnotation: audit ? (key, value, level) => audit.addAnnotation(key, value, level) : undefined,
      };
      const streamPath = POD_STREAM_PATH.exec(path);
      if (streamPath) {
        const [, namespace, name, subresource] = streamPath;
        // POST is `create`; a GET (WebSocket) must be allowed `get` and, as upstream does since 1.30
        // (AuthorizePodWebsocketUpgradeCreatePermission), `create` too: both open a stream into the pod.
        for (const verb of req.method === 'GET' ? ['get', 'create'] : ['create']) {
          const attrs: AuthorizationAttributes = {user, verb, resourceRequest: true, apiGroup: '', apiVersion: 'v1', resource: 'pods', subresource, namespace, name};
          const decision = await authorize(attrs);
          if (decision.decision !== 'Allow') return writeStatusObject(res, forbiddenStatus(attrs, decision.reason));
        }
        // CONNECT admission, with the exec, attach or port-forward options of the query.
        try {
          const query = new URL(req.url ?? '/', 'https://local').searchParams;
          await api.admitConnect(ctx, {group: '', version: 'v1', resource: 'pods', subresource, namespace, name}, connectOptions(subresource, query));
        } catch (error) {
          if (error instanceof ApiError) return writeError(res, error);
          throw error;
        }
        return servePodStream(req, res, streamPath, (this.storage as Storage).store, c.keyPrefix, this.agentTls, c.maxConnectionBytesPerSec);
      }
      const metrics = parseMetricsPath(path);
      if (metrics) {
        const verb = metrics.name === undefined ? 'list' : 'get';
        const attrs: AuthorizationAttributes = {
          user, verb, resourceRequest: true, apiGroup: names().groups.metrics, apiVersion: METRICS_VERSION, resource: metrics.resource, namespace: metrics.namespace, name: metrics.name,
        };
        const decision = await authorize(attrs);
        if (decision.decision !== 'Allow') return writeStatusObject(res, forbiddenStatus(attrs, decision.reason));
        return serveResourceMetrics(req, res, metrics, {
          store: (this.storage as Storage).store,
          keyPrefix: c.keyPrefix,
          summary: (node) => fetchSummary(node, this.agentTls, this.agentTls.timeoutMs),
          onScrapeError: (node, error) => log.v(2).info('Failed to read the agent\'s summary', 'node', node, 'err', error),
        });
      }
      // Before the aggregator, as upstream wraps the aggregator's handler with the peer proxy.
      if (this.peerProxy && (await this.peerProxy.serve(req, res, ctx))) return;
      if (this.aggregator && (await serveAggregated(this.aggregator, api.registry, req, res, ctx))) return;
      const handled = await api(req, res, ctx);
      // A path no handler serves gets Go's plain http.NotFound, as upstream's final not-found handler.
      if (!handled && !res.headersSent) writePlainNotFound(res);
    };
    return composeFilters(filters, (req, res) => {
      serve(req as AnyRequest, res as ServerResponse).catch((error: Error) => {
        log.error('Unhandled error serving a request', 'path', req.url, 'err', error);
        void audits.get(req as AnyRequest)?.panic(error);
        if (!res.headersSent) {
          writeStatusObject(res, {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: `Internal error occurred: ${error.message}`, reason: 'InternalError', details: {}, code: 500});
        } else (res as ServerResponse).end();
      });
    }) as (req: AnyRequest, res: ServerResponse) => void;
  }

  private async listen(key: string, cert: string, clientCaPems: string[]): Promise<NetServer & {close(cb?: (err?: Error) => void): void}> {
    const c = this.config;
    const tls = {
      ...(await tlsServingOptions(c, key, cert)),
      ca: clientCaPems.length ? clientCaPems : undefined,
      requestCert: true,
      rejectUnauthorized: false,
    };
    let server: NetServer & {close(cb?: (err?: Error) => void): void};
    // The lifecycle closes listeners and connections through this control.
    this.lifecycle = new ShutdownLifecycle({
      shutdownDelayMs: c.shutdownDelayMs,
      sendRetryAfter: c.shutdownSendRetryAfter,
      watchTerminationGracePeriodMs: c.shutdownWatchTerminationGracePeriodMs,
      requestTimeoutMs: c.requestTimeoutMs,
      server: {
        closeListeners: () => {
          server.close();
          (server as {closeIdleConnections?: () => void}).closeIdleConnections?.();
        },
        connectionsClosed: () => new Promise<void>((resolve) => {
          const check = () => (this.sockets.size === 0 ? resolve() : setTimeout(check, 50).unref());
          check();
        }),
        closeConnections: () => {
          for (const socket of this.sockets) socket.destroy();
        },
      },
      log: (message, ...kv) => log.info(message, ...kv),
      exit: (code) => process.exit(code),
    });
    this.registry.setShutdownCheck(this.lifecycle.shutdownCheck);
    this.lifecycle.on('phase', (phase) => log.info('Shutdown phase', 'phase', phase));
    const handler = this.requestHandler();
    server = await createSecureServer(c, tls, handler as never);
    // Upgrade requests (exec, attach, port-forward) go through the same chain, with a response
    // written on their raw connection for refusals; pods/exec etc. then take the connection over.
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      socket.on('error', () => {});
      const res = new ServerResponse(req);
      res.assignSocket(socket as Socket);
      res.shouldKeepAlive = false;
      res.once('finish', () => socket.end());
      markUpgrade(req, {socket, head});
      handler(req as AnyRequest, res);
    });
    this.sockets = trackConnections(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(listenOptions(c.securePort, c.bindAddress || undefined, c.permitPortSharing === true, undefined, (m) => log.warning(m)), () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.boundPort = (server.address() as {port: number}).port;
    return server;
  }

  /** Runs the shutdown sequence of the seed's state table, then releases the store. */
  async stop(): Promise<void> {
    // Post-start hooks still running (a stop soon after the start) end here, before what they start.
    this.hooksStop.abort();
    const lifecycle = this.lifecycle;
    if (lifecycle) {
      lifecycle.initiateShutdown(); // idempotent: a signal may have started it already
      await lifecycle.done;
    }
    this.identityLease?.stop();
    await this.coordinatedElection?.stop();
    // A cleanly stopped server takes its address out of the default service's endpoints at once.
    await this.endpointReconciler?.stop(true).catch(() => undefined);
    this.api?.closeWatches();
    this.api?.stop();
    await this.aggregator?.stop();
    this.peerProxy?.stop();
    this.rbac?.stop();
    this.nodeGraph?.stop();
    this.stopAuthorization?.();
    this.stopAuthentication?.();
    this.externalSigner?.close();
    this.sweeper?.stop();
    this.apf?.stop();
    this.stopMetricPolling?.();
    await this.debug?.close();
    this.logCheck.stop();
    await this.admission?.close();
    // Buffered audit events are written before the process ends.
    await this.auditor?.shutdown();
    await this.tracing?.shutdown();
    await this.storage?.close();
    this.encryption?.stop();
  }

  /** SIGTERM/SIGINT start the shutdown sequence; a second one exits at once (code 1). */
  installSignalHandlers(target: Pick<NodeJS.Process, 'on' | 'off'> = process): () => void {
    return (this.lifecycle as ShutdownLifecycle).installSignalHandlers(target);
  }

  /** What a SIGTERM does: the first starts the shutdown sequence, a second exits at once. */
  signal(): void {
    (this.lifecycle as ShutdownLifecycle).handleSignal();
  }

  get done(): Promise<void> {
    return (this.lifecycle as ShutdownLifecycle).done;
  }

  /** Re-evaluates the health roots (for the dashboard; at most once a second is plenty). */
  async refreshChecks(): Promise<void> {
    const toStates = (r: RootResult): CheckState[] => r.outcomes.map((o) => ({name: o.name, ok: o.state !== 'failed', reason: o.state === 'failed' ? o.error : undefined}));
    this.lastChecks = {livez: toStates(await this.registry.evaluate('livez')), readyz: toStates(await this.registry.evaluate('readyz'))};
    try {
      this.storeRevision = await (this.storage as Storage).store.currentRevision();
      this.storeReachable = true;
    } catch {
      this.storeReachable = false;
    }
  }

  snapshot(): ApiServerSnapshot {
    const storage = this.storage;
    const lifecycle = this.lifecycle?.snapshot();
    const phase = lifecycle?.phase ?? 'starting';
    return {
      url: this.url,
      version: this.config.version.gitVersion,
      orchconfigPath: this.config.orchconfigPath,
      store: {
        engine: storage?.store.engine ?? 'unknown',
        location: this.config.storage.servers?.length ? this.config.storage.servers.join(',') : join(this.config.dataDir, 'kvstore.sqlite'),
        revision: this.storeRevision,
        reachable: this.storeReachable,
        cachesSynced: storage?.synced() ?? false,
        writeFailure: storage ? writeFailureText(storage.engines) : undefined,
        watchCache: (storage?.caches ?? []).reduce((sum, c) => ({lists: sum.lists + c.counts.lists, watches: sum.watches + c.counts.watches}), {lists: 0, watches: 0}),
      },
      livez: this.lastChecks.livez,
      readyz: this.lastChecks.readyz,
      requests: {...this.stats.summary(), ...inFlightOf(this.apf?.gate.executing ?? this.inFlight?.inFlight)},
      watches: {open: this.api?.activeWatches() ?? 0, byResource: this.stats.watchesByResource()},
      ...(this.apf ? {priorityLevels: this.apf.levels()} : {}),
      shutdown: {phase, inFlight: lifecycle?.inFlight ?? 0, longRunning: lifecycle?.longRunning ?? 0},
      startedAt: this.createdAt,
      at: Date.now(),
    };
  }
}

async function startTracing(file: string): Promise<ApiServerTracing> {
  const {readTracingConfiguration} = await import('./tracing/config.js');
  const {ApiServerTracing} = await import('./tracing/tracer.js');
  return new ApiServerTracing(await readTracingConfiguration(file));
}

const bracketed = (host: string) => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** The dashboard's in-flight counts: priority and fairness's executing requests, or max-in-flight's slots. */
function inFlightOf(counts?: {readOnly: number; mutating: number}): {inFlightReadOnly: number; inFlightMutating: number} {
  return {inFlightReadOnly: counts?.readOnly ?? 0, inFlightMutating: counts?.mutating ?? 0};
}

/** What a refused request tried, for its audit event (upstream's getAuthMethods). */
function attemptedMethods(req: AnyRequest): string[] {
  const methods: string[] = [];
  const peer = (req.socket as {getPeerCertificate?: () => {raw?: Buffer} | undefined} | undefined)?.getPeerCertificate?.();
  if (peer?.raw) methods.push('certificate');
  const authorization = req.headers.authorization ?? '';
  if (/^bearer /i.test(authorization)) methods.push('token');
  if (/^basic /i.test(authorization)) methods.push('basic');
  return methods;
}

/** Polls until `condition` holds; throws once `signal` aborts (the server stopping). */
async function waitFor(condition: () => boolean, signal: AbortSignal, intervalMs = 50): Promise<void> {
  while (!condition()) {
    signal.throwIfAborted();
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Post-start steps retry while the store is not reachable yet, as upstream's hooks poll; a server
 * that stops ends the retries (its store is closed: they would retry for ever).
 */
async function retry<T>(step: () => Promise<T>, signal: AbortSignal, intervalMs = 1000): Promise<T> {
  for (;;) {
    signal.throwIfAborted();
    try {
      return await step();
    } catch (error) {
      signal.throwIfAborted();
      log.v(2).info('Start step failed, retrying', 'err', error);
      await new Promise((r) => setTimeout(r, intervalMs));
    }
  }
}

