/**
 * From the typed option values of `orch apiserver` (src/options/apiserver.ts) to the server's
 * configuration. Pure: no I/O. The list IMPLEMENTED_APISERVER_OPTIONS below is what the option
 * table marks as taking effect; a test keeps the two in step.
 */
import {join} from 'node:path';
import {secureServingOptions} from '../shared/serving/secure-serving.js';
import type {ApiServerConfig} from './server.js';
import type {VersionInfo} from '../../lib/version.js';
import type {AuditConfig} from './audit/index.js';
import {names} from '../../api/names.js';
import type {PortRange} from '../../options/types.js';
import type {EndpointReconcilerType} from './services/index.js';
import {FeatureGateError, FeatureGates} from '../../api/feature-gates.js';
import {effectiveVersion, EffectiveVersionError, versionForComponent, type EffectiveVersion} from '../../api/effective-version.js';
import {EMULATED_KUBERNETES} from '../../lib/version.js';
import {UserError} from '../../lib/errors.js';

type Values = Record<string, unknown>;
const ms = (v: unknown, fallback = 0): number => (v && typeof v === 'object' && 'ms' in v ? (v as {ms: number}).ms : fallback);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const list = (v: unknown): string[] | undefined => (Array.isArray(v) && v.length > 0 ? (v as string[]) : undefined);

export const IMPLEMENTED_APISERVER_OPTIONS = [
  // --names is read by the command (src/lib/select-names.ts) before this configuration is built.
  'names',
  'bind-address', 'secure-port', 'advertise-address', 'cert-dir', 'tls-cert-file', 'tls-private-key-file',
  'tls-cipher-suites', 'tls-min-version', 'tls-sni-cert-key', 'disable-http2-serving', 'http2-max-streams-per-connection',
  'goaway-chance', 'strict-transport-security-directives', 'kvstore-servers', 'kvstore-servers-overrides',
  'kvstore-cafile', 'kvstore-certfile', 'kvstore-keyfile', 'kvstore-prefix', 'kvstore-compaction-interval',
  'kvstore-healthcheck-timeout', 'kvstore-readycheck-timeout', 'storage-initialization-timeout', 'watch-cache',
  'watch-cache-sizes', 'anonymous-auth', 'client-ca-file', 'token-auth-file', 'authorization-mode', 'event-ttl',
  'service-account-issuer', 'service-account-key-file', 'service-account-signing-key-file', 'api-audiences',
  'service-account-lookup', 'service-account-extend-token-expiration', 'service-account-max-token-expiration',
  'service-account-jwks-uri', 'service-account-signing-endpoint', 'authentication-token-webhook-config-file', 'authentication-token-webhook-version',
  'authentication-token-webhook-cache-ttl', 'oidc-issuer-url', 'oidc-client-id', 'oidc-ca-file', 'oidc-username-claim',
  'enable-bootstrap-token-auth', 'requestheader-client-ca-file', 'requestheader-allowed-names', 'requestheader-username-headers',
  'requestheader-group-headers', 'requestheader-extra-headers-prefix', 'requestheader-uid-headers', 'oidc-username-prefix', 'oidc-groups-claim', 'oidc-groups-prefix', 'oidc-required-claim', 'oidc-signing-algs',
  'authentication-config', 'authorization-policy-file', 'authorization-webhook-config-file', 'authorization-webhook-version', 'authorization-config',
  'authorization-webhook-cache-authorized-ttl', 'authorization-webhook-cache-unauthorized-ttl',
  'max-requests-inflight', 'max-mutating-requests-inflight', 'request-timeout', 'min-request-timeout',
  'livez-grace-period', 'shutdown-delay-duration', 'shutdown-watch-termination-grace-period',
  'shutdown-send-retry-after', 'service-cluster-ip-range', 'data-dir',
  'service-node-port-range', 'orch-service-node-port', 'endpoint-reconciler-type',
  // The mixed version proxy (gate UnknownVersionInteroperabilityProxy): the identity lease's peer address, the peers' CA (peers/).
  'peer-advertise-ip', 'peer-advertise-port', 'peer-ca-file',
  // The coordinated leader election controller's own lease (gate CoordinatedLeaderElection).
  'coordinated-leadership-lease-duration', 'coordinated-leadership-renew-deadline', 'coordinated-leadership-retry-period',
  'agent-certificate-authority', 'agent-client-certificate', 'agent-client-key', 'agent-preferred-address-types',
  'encryption-provider-config', 'encryption-provider-config-automatic-reload', 'storage-media-type', 'storage-backend',
  'enable-admission-plugins', 'disable-admission-plugins', 'admission-control', 'admission-control-config-file',
  // Read by the DefaultTolerationSeconds admission plugin through the admission server options.
  'default-not-ready-toleration-seconds', 'default-unreachable-toleration-seconds',
  'audit-policy-file', 'audit-log-path', 'audit-log-format', 'audit-log-mode', 'audit-log-version',
  'audit-log-maxage', 'audit-log-maxbackup', 'audit-log-maxsize', 'audit-log-compress',
  'audit-log-batch-buffer-size', 'audit-log-batch-max-size', 'audit-log-batch-max-wait',
  'audit-log-batch-throttle-burst', 'audit-log-batch-throttle-enable', 'audit-log-batch-throttle-qps',
  'audit-log-truncate-enabled', 'audit-log-truncate-max-event-size', 'audit-log-truncate-max-batch-size',
  'audit-webhook-config-file', 'audit-webhook-mode', 'audit-webhook-version', 'audit-webhook-initial-backoff',
  'audit-webhook-batch-buffer-size', 'audit-webhook-batch-max-size', 'audit-webhook-batch-max-wait',
  'audit-webhook-batch-throttle-burst', 'audit-webhook-batch-throttle-enable', 'audit-webhook-batch-throttle-qps',
  'audit-webhook-truncate-enabled', 'audit-webhook-truncate-max-event-size', 'audit-webhook-truncate-max-batch-size',
  'aggregator-reject-forwarding-redirect', 'enable-aggregator-routing', 'proxy-client-cert-file', 'proxy-client-key-file', 'egress-selector-config-file',
  'feature-gates', 'runtime-config', 'emulated-version', 'emulation-forward-compatible', 'runtime-config-emulation-forward-compatible', 'min-compatibility-version',
  'agent-timeout', 'allow-privileged', 'delete-collection-workers', 'enable-garbage-collector', 'external-hostname', 'permit-address-sharing', 'permit-port-sharing', 'max-connection-bytes-per-sec', 'lease-reuse-duration-seconds',
  'enable-priority-and-fairness',
  'cors-allowed-origins', 'profiling', 'contention-profiling', 'debug-socket-path', 'enable-logs-handler', 'tls-curve-preferences',
  'v', 'vmodule', 'logging-format', 'log-flush-frequency', 'log-text-split-stream', 'log-text-info-buffer-size', 'version', 'help',
  'show-hidden-metrics-for-version', 'disabled-metrics', 'allow-metric-labels', 'allow-metric-labels-manifest',
  'kvstore-count-metric-poll-period', 'kvstore-db-metric-poll-interval', 'tracing-config-file',
] as const;

export function apiServerConfig(values: Values, version: VersionInfo, explicit?: ReadonlySet<string>): ApiServerConfig {
  const dataDir = str(values['data-dir']) as string;
  return {
    bindAddress: str(values['bind-address']) ?? '0.0.0.0',
    securePort: values['secure-port'] as number,
    advertiseAddress: str(values['advertise-address']),
    dataDir,
    // The seed's default cert dir (/var/run/orch) needs root; without an explicit --cert-dir the
    // certificates live with the rest of orch's files in the data directory.
    certDir: str(values['cert-dir']) && !isSeedDefaultCertDir(values) ? (values['cert-dir'] as string) : join(dataDir, 'pki'),
    tlsCertFile: str(values['tls-cert-file']),
    tlsPrivateKeyFile: str(values['tls-private-key-file']),
    ...secureServingOptions(values),
    agentCertificateAuthority: str(values['agent-certificate-authority']),
    agentClientCertificate: str(values['agent-client-certificate']),
    agentClientKey: str(values['agent-client-key']),
    agentPreferredAddressTypes: list(values['agent-preferred-address-types']),
    keyPrefix: (str(values['kvstore-prefix']) ?? '/registry').replace(/\/+$/, ''),
    storage: {
      servers: list(values['kvstore-servers']),
      serversOverrides: list(values['kvstore-servers-overrides']),
      caFile: str(values['kvstore-cafile']),
      certFile: str(values['kvstore-certfile']),
      keyFile: str(values['kvstore-keyfile']),
      prefix: str(values['kvstore-prefix']) ?? '/registry',
      watchCache: values['watch-cache'] !== false,
      watchCacheSizes: list(values['watch-cache-sizes']),
      compactionIntervalMs: ms(values['kvstore-compaction-interval'], 300_000),
      mediaType: str(values['storage-media-type']),
      backend: str(values['storage-backend']),
    },
    anonymousAuth: values['anonymous-auth'] !== false,
    anonymousAuthSet: explicit?.has('anonymous-auth') ?? false,
    clientCaFile: str(values['client-ca-file']),
    tokenAuthFile: str(values['token-auth-file']),
    enableBootstrapTokenAuth: values['enable-bootstrap-token-auth'] === true,
    requestHeader: str(values['requestheader-client-ca-file'])
      ? {
          clientCaFile: values['requestheader-client-ca-file'] as string,
          allowedNames: list(values['requestheader-allowed-names']) ?? [],
          usernameHeaders: list(values['requestheader-username-headers']) ?? [],
          groupHeaders: list(values['requestheader-group-headers']) ?? [],
          extraHeaderPrefixes: list(values['requestheader-extra-headers-prefix']) ?? [],
          uidHeaders: list(values['requestheader-uid-headers']) ?? [],
        }
      : undefined,
    oidc: str(values['oidc-issuer-url'])
      ? {
          issuerUrl: values['oidc-issuer-url'] as string,
          clientId: str(values['oidc-client-id']) ?? '',
          caFile: str(values['oidc-ca-file']),
          usernameClaim: str(values['oidc-username-claim']) ?? 'sub',
          usernamePrefix: str(values['oidc-username-prefix']),
          groupsClaim: str(values['oidc-groups-claim']),
          groupsPrefix: str(values['oidc-groups-prefix']),
          requiredClaims: (values['oidc-required-claim'] as Record<string, string> | undefined) ?? {},
          signingAlgs: list(values['oidc-signing-algs']) ?? ['RS256'],
        }
      : undefined,
    authenticationConfigFile: str(values['authentication-config']),
    tokenWebhook: str(values['authentication-token-webhook-config-file'])
      ? {
          configFile: values['authentication-token-webhook-config-file'] as string,
          version: str(values['authentication-token-webhook-version']) ?? 'v1beta1',
          cacheTtlMs: ms(values['authentication-token-webhook-cache-ttl'], 120_000),
        }
      : undefined,
    serviceAccounts: {
      issuers: list(values['service-account-issuer']),
      keyFiles: list(values['service-account-key-file']),
      signingKeyFile: str(values['service-account-signing-key-file']),
      apiAudiences: list(values['api-audiences']),
      lookup: values['service-account-lookup'] !== false,
      extendTokenExpiration: values['service-account-extend-token-expiration'] !== false,
      maxTokenExpirationSeconds: Math.floor(ms(values['service-account-max-token-expiration']) / 1000),
      jwksUri: str(values['service-account-jwks-uri']),
      signingEndpoint: str(values['service-account-signing-endpoint']),
    },
    authorizationModes: list(values['authorization-mode']) ?? ['AlwaysAllow'],
    authorizationPolicyFile: str(values['authorization-policy-file']),
    authorizationConfigFile: str(values['authorization-config']),
    authorizationWebhookConfigFile: str(values['authorization-webhook-config-file']),
    authorizationWebhookVersion: str(values['authorization-webhook-version']) ?? 'v1beta1',
    authorizationWebhookAuthorizedTtlMs: ms(values['authorization-webhook-cache-authorized-ttl'], 300_000),
    authorizationWebhookUnauthorizedTtlMs: ms(values['authorization-webhook-cache-unauthorized-ttl'], 30_000),
    maxRequestsInflight: (values['max-requests-inflight'] as number) ?? 400,
    maxMutatingRequestsInflight: (values['max-mutating-requests-inflight'] as number) ?? 200,
    enablePriorityAndFairness: values['enable-priority-and-fairness'] !== false,
    requestTimeoutMs: ms(values['request-timeout'], 60_000),
    minRequestTimeoutSeconds: (values['min-request-timeout'] as number) ?? 1800,
    goawayChance: (values['goaway-chance'] as number) ?? 0,
    livezGracePeriodMs: ms(values['livez-grace-period']),
    shutdownDelayMs: ms(values['shutdown-delay-duration']),
    shutdownSendRetryAfter: values['shutdown-send-retry-after'] === true,
    shutdownWatchTerminationGracePeriodMs: ms(values['shutdown-watch-termination-grace-period']),
    storageInitializationTimeoutMs: ms(values['storage-initialization-timeout'], 60_000),
    kvstoreHealthcheckTimeoutMs: ms(values['kvstore-healthcheck-timeout'], 2000),
    kvstoreReadycheckTimeoutMs: ms(values['kvstore-readycheck-timeout'], 2000),
    eventTtlMs: ms(values['event-ttl'], 3_600_000),
    serviceClusterIpRange: list(values['service-cluster-ip-range']),
    services: servicesConfig(values),
    coordinatedLeadership: {
      leaseDurationMs: ms(values['coordinated-leadership-lease-duration'], 15_000),
      renewDeadlineMs: ms(values['coordinated-leadership-renew-deadline'], 10_000),
      retryPeriodMs: ms(values['coordinated-leadership-retry-period'], 2_000),
    },
    peer: {advertiseIp: str(values['peer-advertise-ip']), advertisePort: str(values['peer-advertise-port']), caFile: str(values['peer-ca-file'])},
    strictTransportSecurityDirectives: list(values['strict-transport-security-directives']),
    encryptionProviderConfig: str(values['encryption-provider-config']),
    encryptionProviderConfigAutomaticReload: values['encryption-provider-config-automatic-reload'] === true,
    audit: auditConfig(values),
    ...compatibilityConfig(values),
    aggregator: {
      routing: values['enable-aggregator-routing'] === true,
      rejectForwardingRedirect: values['aggregator-reject-forwarding-redirect'] !== false,
      proxyClientCertFile: str(values['proxy-client-cert-file']),
      proxyClientKeyFile: str(values['proxy-client-key-file']),
      egressSelectorConfigFile: str(values['egress-selector-config-file']),
    },
    metrics: {
      showHiddenMetricsForVersion: str(values['show-hidden-metrics-for-version']),
      disabledMetrics: list(values['disabled-metrics']),
      allowMetricLabels: values['allow-metric-labels'] as Record<string, string> | undefined,
      allowMetricLabelsManifest: str(values['allow-metric-labels-manifest']),
    },
    kvstoreCountMetricPollPeriodMs: ms(values['kvstore-count-metric-poll-period'], 60_000),
    kvstoreDbMetricPollIntervalMs: ms(values['kvstore-db-metric-poll-interval'], 30_000),
    tracingConfigFile: str(values['tracing-config-file']),
    admission: admissionConfig(values),
    version,
    orchconfigPath: join(dataDir, 'admin.orchconfig'),
    corsAllowedOrigins: list(values['cors-allowed-origins']),
    agentTimeoutMs: ms(values['agent-timeout'], 5000),
    allowPrivileged: values['allow-privileged'] === true,
    deleteCollectionWorkers: num(values['delete-collection-workers'], 1),
    enableGarbageCollector: values['enable-garbage-collector'] !== false,
    externalHostname: str(values['external-hostname']),
    permitPortSharing: values['permit-port-sharing'] === true,
    maxConnectionBytesPerSec: num(values['max-connection-bytes-per-sec'], 0),
    leaseReuseDurationSeconds: num(values['lease-reuse-duration-seconds'], 60),
    debug: {
      profiling: values['profiling'] !== false,
      contentionProfiling: values['contention-profiling'] === true,
      socketPath: str(values['debug-socket-path']),
      logsHandler: values['enable-logs-handler'] === true,
    },
  };
}

/**
 * The admission options: which plugins (the three lists; `--admission-control` given, even empty,
 * replaces the default set), their configuration file, and every option value for the plugins that
 * read server options (camelCased names, e.g. defaultNotReadyTolerationSeconds).
 */
export function admissionConfig(values: Values): NonNullable<ApiServerConfig['admission']> {
  const serverOptions: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(values)) serverOptions[name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase())] = value;
  return {
    enable: list(values['enable-admission-plugins']),
    disable: list(values['disable-admission-plugins']),
    admissionControl: Array.isArray(values['admission-control']) ? (values['admission-control'] as string[]) : undefined,
    configFile: str(values['admission-control-config-file']),
    serverOptions,
  };
}

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/** The audit options (src/options/apiserver.ts, section Events) as the auditor's configuration. */
export function auditConfig(values: Values): AuditConfig {
  const batch = (prefix: string, d: {maxSize: number; waitMs: number; throttle: boolean; qps: number; burst: number}) => ({
    bufferSize: num(values[`${prefix}-batch-buffer-size`], 10000),
    maxBatchSize: num(values[`${prefix}-batch-max-size`], d.maxSize),
    maxWaitMs: ms(values[`${prefix}-batch-max-wait`], d.waitMs),
    ...((values[`${prefix}-batch-throttle-enable`] ?? d.throttle) === true
      ? {throttleQps: num(values[`${prefix}-batch-throttle-qps`], d.qps), throttleBurst: num(values[`${prefix}-batch-throttle-burst`], d.burst)}
      : {}),
  });
  const truncate = (prefix: string) => ({
    enabled: values[`${prefix}-truncate-enabled`] === true,
    maxEventBytes: num(values[`${prefix}-truncate-max-event-size`], 102400),
    maxBatchBytes: num(values[`${prefix}-truncate-max-batch-size`], 10485760),
  });
  return {
    policyFile: str(values['audit-policy-file']),
    log: {
      path: str(values['audit-log-path']),
      format: values['audit-log-format'] === 'legacy' ? 'legacy' : 'json',
      mode: (str(values['audit-log-mode']) ?? 'blocking') as AuditConfig['log']['mode'],
      version: str(values['audit-log-version']) ?? `${names().groups.audit}/v1`,
      maxSizeMb: num(values['audit-log-maxsize'], 100),
      maxAgeDays: num(values['audit-log-maxage'], 366),
      maxBackups: num(values['audit-log-maxbackup'], 100),
      compress: values['audit-log-compress'] === true,
      batch: batch('audit-log', {maxSize: 1, waitMs: 0, throttle: false, qps: 10, burst: 15}),
      truncate: truncate('audit-log'),
    },
    webhook: {
      configFile: str(values['audit-webhook-config-file']),
      mode: (str(values['audit-webhook-mode']) ?? 'batch') as AuditConfig['webhook']['mode'],
      version: str(values['audit-webhook-version']) ?? `${names().groups.audit}/v1`,
      initialBackoffMs: ms(values['audit-webhook-initial-backoff'], 10_000),
      batch: batch('audit-webhook', {maxSize: 400, waitMs: 30_000, throttle: true, qps: 10, burst: 15}),
      truncate: truncate('audit-webhook'),
    },
  };
}

/** The service options; ORCH_INTERNAL_ENDPOINT_RECONCILE_INTERVAL_MS shortens the reconciler's period for tests only. */
export function servicesConfig(values: Values): NonNullable<ApiServerConfig['services']> {
  const interval = Number(process.env.ORCH_INTERNAL_ENDPOINT_RECONCILE_INTERVAL_MS);
  return {
    nodePortRange: values['service-node-port-range'] as PortRange | undefined,
    orchServiceNodePort: num(values['orch-service-node-port'], 0),
    endpointReconcilerType: (str(values['endpoint-reconciler-type']) ?? 'lease') as EndpointReconcilerType,
    endpointReconcileIntervalMs: Number.isFinite(interval) && interval > 0 ? interval : undefined,
  };
}

/**
 * The compatibility options: --emulated-version and --min-compatibility-version (validated as
 * upstream: n-3..n), --feature-gates resolved at the emulation version, and --runtime-config with
 * the two emulation forward-compatibility switches, which upstream allows only when emulating an
 * older release. Every problem is a start error naming the option.
 */
export function compatibilityConfig(values: Values): Pick<ApiServerConfig, 'effectiveVersion' | 'featureGates' | 'apis'> {
  let effective: EffectiveVersion;
  try {
    effective = effectiveVersion(
      EMULATED_KUBERNETES,
      versionForComponent(list(values['emulated-version']), 'emulated-version'),
      versionForComponent(list(values['min-compatibility-version']), 'min-compatibility-version'),
    );
  } catch (error) {
    if (error instanceof EffectiveVersionError) throw new UserError(error.message);
    throw error;
  }
  const emulating = effective.emulation.minor !== effective.binary.minor || effective.emulation.major !== effective.binary.major;
  for (const [option, field] of [['emulation-forward-compatible', 'EmulationForwardCompatible'], ['runtime-config-emulation-forward-compatible', 'RuntimeConfigEmulationForwardCompatible']]) {
    if (values[option] === true && !emulating) {
      throw new UserError(`--${option}: ServerRunOptions.${field} cannot be set to true if the emulation version is the same as the binary version`);
    }
  }
  let featureGates: FeatureGates;
  try {
    featureGates = new FeatureGates((values['feature-gates'] as Record<string, boolean> | undefined) ?? {}, {emulationVersion: effective.emulation});
  } catch (error) {
    if (error instanceof FeatureGateError) throw new UserError(`invalid argument for --feature-gates: ${error.message}`);
    throw error;
  }
  return {
    effectiveVersion: effective,
    featureGates,
    apis: {
      runtimeConfig: (values['runtime-config'] as Record<string, string> | undefined) ?? {},
      emulationForwardCompatible: values['emulation-forward-compatible'] === true,
      runtimeConfigEmulationForwardCompatible: values['runtime-config-emulation-forward-compatible'] === true,
    },
  };
}

/** --feature-gates alone, at the emulation version the options give. */
export function featureGatesConfig(values: Values): FeatureGates {
  return compatibilityConfig(values).featureGates as FeatureGates;
}

function isSeedDefaultCertDir(values: Values): boolean {
  return values['cert-dir'] === '/var/run/orch';
}
