/**
 * Every option of `orch apiserver`, declared once as data (seed document 1, all option tables, in the
 * order the seed lists them), followed by the options orch adds itself.
 *
 * `seedType` and `seedDefault` repeat the seed's cells verbatim so a test can hold this table to the
 * seed; `type` and `default` are what our parsers actually use.
 */
import {namesOption} from './names-option.js';
import type { OptionTable } from './spec.js';
import {ADMISSION_PLUGIN_NAMES_SORTED} from '../api/admission-plugins.js';

/** Admission plugin names the seed lists; --enable/--disable-admission-plugins accept only these. */
const ADMISSION_PLUGINS = ADMISSION_PLUGIN_NAMES_SORTED;

const AUDIT_MODES = ['batch', 'blocking', 'blocking-strict'] as const;
const PORT = { min: 0, max: 65535 } as const;

const ADMISSION = 'Admission plugins';
const SERVING = 'Serving and network';
const STORAGE = 'Storage and caching';
const LEADER = 'Coordinated leader election';
const RUNTIME = 'Runtime selection and diagnostics';
const AUTHN = 'Authentication';
// The seed introduces this table with "Authorization:" inside the Authentication section; a group of
// its own reads better in --help.
const AUTHZ = 'Authorization';
const EVENTS = 'Events';
const LIMITS = 'Limits';
const VERSIONING = 'Versioning';

export const apiserverOptions: OptionTable = [
  // --- Admission plugins ---
  {
    name: 'enable-admission-plugins', type: 'strings', seedType: 'strings', seedDefault: 'none',
    enum: ADMISSION_PLUGINS, repeatable: true,
    help: 'Admission plugins to turn on on top of the default set.', section: ADMISSION, implemented: true,
  },
  {
    name: 'disable-admission-plugins', type: 'strings', seedType: 'strings', seedDefault: 'none',
    enum: ADMISSION_PLUGINS, repeatable: true,
    help: 'Admission plugins to turn off even though the default set includes them.', section: ADMISSION,
    implemented: true,
  },
  {
    name: 'admission-control', type: 'strings', seedType: 'strings', seedDefault: 'none',
    enum: ADMISSION_PLUGINS, repeatable: true,
    deprecated: 'enable-admission-plugins and disable-admission-plugins',
    help: 'Old way to list admission plugins.', section: ADMISSION, implemented: true,
  },
  {
    name: 'admission-control-config-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Path of a file that configures the admission plugins.', section: ADMISSION, implemented: true,
  },

  // --- Serving and network ---
  {
    name: 'bind-address', type: 'string', seedType: 'string', seedDefault: '0.0.0.0', default: '0.0.0.0',
    help: 'Address to listen on for HTTPS; 0.0.0.0, :: or blank listens everywhere.', section: SERVING,
    implemented: true,
  },
  {
    // The seed's error table forbids 0: the secure port cannot be switched off.
    name: 'secure-port', type: 'int', seedType: 'int', seedDefault: '6443', default: '6443', min: 1, max: 65535,
    help: 'Port for authenticated, authorized HTTPS traffic.', section: SERVING, implemented: true,
  },
  {
    name: 'advertise-address', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Address other cluster members use to reach this server; defaults to the bind address or the host interface.',
    section: SERVING, implemented: true,
  },
  {
    name: 'external-hostname', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Hostname (optionally :port) handed out to clients: discovery\'s serverAddressByClientCIDRs and the service account issuer\'s JWKS URI; the advertise address when unset.',
    section: SERVING, implemented: true,
  },
  {
    name: 'cert-dir', type: 'string', seedType: 'string', seedDefault: '/var/run/orch', default: '/var/run/orch',
    help: 'Where TLS certificates live (and where generated ones are written).', section: SERVING,
    implemented: true,
  },
  {
    name: 'tls-cert-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Serving certificate (with any CA chain after it); a self-signed one is generated when absent.',
    section: SERVING, implemented: true,
  },
  {
    name: 'tls-private-key-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Private key for the serving certificate.', section: SERVING, implemented: true,
  },
  {
    name: 'tls-sni-cert-key', type: 'string', seedType: 'string', seedDefault: 'none', repeatable: true,
    help: 'Extra certificate and key chosen by SNI, as cert,key[:domain,...]; repeat for more pairs.',
    section: SERVING, implemented: true,
  },
  {
    name: 'tls-cipher-suites', type: 'cipherSuites', seedType: 'strings', seedDefault: 'runtime default suites',
    repeatable: true,
    help: 'TLS cipher suites the server offers; the runtime picks when unset.', section: SERVING,
    implemented: true,
  },
  {
    name: 'tls-curve-preferences', type: 'int32Slice', seedType: 'int32Slice', seedDefault: '[]', repeatable: true,
    help: 'Numeric IDs (Go crypto/tls CurveID) of key-exchange curves to allow: 23 P-256, 24 P-384, 25 P-521, 29 X25519, 4588 X25519MLKEM768 (needs OpenSSL 3.5+); the runtime picks when unset.',
    section: SERVING, implemented: true,
  },
  {
    name: 'tls-min-version', type: 'tlsVersion', seedType: 'string', seedDefault: 'none',
    enum: ['VersionTLS10', 'VersionTLS11', 'VersionTLS12', 'VersionTLS13'],
    help: 'Oldest TLS version clients may negotiate.', section: SERVING, implemented: true,
  },
  {
    name: 'disable-http2-serving', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Serve HTTP/1.1 only.', section: SERVING, implemented: true,
  },
  {
    name: 'http2-max-streams-per-connection', type: 'int', seedType: 'int', seedDefault: '0', default: '0', min: 0,
    help: 'Cap on concurrent HTTP/2 streams per client connection; 0 keeps the runtime default.',
    section: SERVING, implemented: true,
  },
  {
    name: 'permit-address-sharing', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Bind with SO_REUSEADDR so TIME_WAIT sockets do not block a restart. Node (libuv) always binds this way on Unix, as Go does, so it holds with either value.',
    section: SERVING, implemented: true,
  },
  {
    name: 'permit-port-sharing', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Bind with SO_REUSEPORT so several servers can share one address and port; the kernel spreads connections over them (net.Server reusePort from Node 22.12, the node-unix-socket addon before).',
    section: SERVING, implemented: true,
  },
  {
    name: 'goaway-chance', type: 'float', seedType: 'float', seedDefault: '0 (off)', default: '0', min: 0, max: 0.02,
    help: 'Share of HTTP/2 requests told to reconnect, to rebalance clients behind a load balancer (0 to 0.02).',
    section: SERVING, implemented: true,
  },
  {
    name: 'strict-transport-security-directives', type: 'strings', seedType: 'strings', seedDefault: 'none',
    repeatable: true,
    help: 'HSTS directives to send; none are sent when empty.', section: SERVING, implemented: true,
  },
  {
    name: 'cors-allowed-origins', type: 'strings', seedType: 'strings', seedDefault: 'none', repeatable: true,
    help: 'Origins allowed by CORS, as regular expressions pinned to the host at both ends (^ or // first, $ or (:|$) last, e.g. //example\\.com(:|$)); CORS is off when empty.',
    section: SERVING, implemented: true,
  },
  {
    name: 'debug-socket-path', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Unix socket serving /debug/pprof/ and /debug/flags/v without any authentication or authorization (even with --profiling=false); removed on stop.',
    section: SERVING, implemented: true,
  },
  {
    name: 'enable-logs-handler', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Serve /logs/: the files of <data-dir>/logs (orch\'s equivalent of the host\'s /var/log upstream serves), behind authorization.',
    section: SERVING, implemented: true,
  },
  {
    name: 'profiling', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Serve profiles of the Node process under /debug/pprof/, behind authorization: profile?seconds=N (.cpuprofile JSON), heap (.heapprofile JSON), cmdline; and PUT /debug/flags/v.',
    section: SERVING, implemented: true,
  },
  {
    name: 'contention-profiling', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Also record the event loop delay histogram at /debug/pprof/block (a Node process blocks on its event loop, not on locks).',
    section: SERVING, implemented: true,
  },
  {
    name: 'aggregator-reject-forwarding-redirect', type: 'bool', seedType: 'bool', seedDefault: 'true',
    default: 'true',
    help: 'Stop the aggregator from relaying redirects from extension servers to clients.', section: SERVING,
    implemented: true,
  },
  {
    name: 'enable-aggregator-routing', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Send aggregated requests to endpoint addresses instead of the service cluster address.',
    section: SERVING, implemented: true,
  },
  {
    name: 'proxy-client-cert-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Client certificate this server presents when proxying to extension servers or peer API servers, or calling webhooks.',
    section: SERVING, implemented: true,
  },
  {
    name: 'proxy-client-key-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Private key for the proxy client certificate.', section: SERVING, implemented: true,
  },
  {
    name: 'egress-selector-config-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Path of the egress selector configuration.', section: SERVING, implemented: true,
  },
  {
    // The name and purpose (peers dial it) make this an IP address, unlike the free-form addresses above.
    name: 'peer-advertise-ip', type: 'ip', seedType: 'string', seedDefault: 'none',
    help: 'IP peer API servers proxy a request to when they do not serve its resource and this server does (needs the UnknownVersionInteroperabilityProxy feature gate).',
    section: SERVING,
    implemented: true,
  },
  {
    name: 'peer-advertise-port', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Port peer API servers proxy requests to (with --peer-advertise-ip; needs the UnknownVersionInteroperabilityProxy feature gate).',
    section: SERVING,
    implemented: true,
  },
  {
    name: 'peer-ca-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'CA bundle that verifies the serving certificates of peer API servers this server proxies to (needs the UnknownVersionInteroperabilityProxy feature gate).',
    section: SERVING,
    implemented: true,
  },
  {
    name: 'endpoint-reconciler-type', type: 'string', seedType: 'string', seedDefault: 'lease', default: 'lease',
    enum: ['master-count', 'lease', 'none'],
    help: 'How the endpoints of the API server\'s own service are kept (master-count is deprecated).',
    section: SERVING, implemented: true,
  },
  {
    name: 'orch-service-node-port', type: 'int', seedType: 'int', seedDefault: '0', default: '0', ...PORT,
    help: 'Expose the API server\'s own service as NodePort on this port; 0 keeps it ClusterIP.', section: SERVING,
    implemented: true,
  },
  {
    name: 'service-cluster-ip-range', type: 'cidrs', seedType: 'string', seedDefault: 'none',
    help: 'CIDR (or two, for dual-stack) from which service cluster IPs are allocated.', section: SERVING,
    implemented: true,
  },
  {
    name: 'service-node-port-range', type: 'portRange', seedType: 'string N1-N2', seedDefault: '30000-32767',
    default: '30000-32767',
    help: 'Inclusive port range handed out to NodePort services.', section: SERVING, implemented: true,
  },
  {
    name: 'agent-certificate-authority', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'CA file for verifying node agents.', section: SERVING, implemented: true,
  },
  {
    name: 'agent-client-certificate', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Client certificate this server presents to node agents.', section: SERVING, implemented: true,
  },
  {
    name: 'agent-client-key', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Private key for the node agent client certificate.', section: SERVING, implemented: true,
  },
  {
    name: 'agent-preferred-address-types', type: 'strings', seedType: 'strings',
    seedDefault: 'Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP',
    default: 'Hostname,InternalDNS,InternalIP,ExternalDNS,ExternalIP',
    enum: ['Hostname', 'InternalDNS', 'InternalIP', 'ExternalDNS', 'ExternalIP'], repeatable: true,
    help: 'Order in which node address types are tried when contacting node agents.', section: SERVING,
    implemented: true,
  },
  {
    name: 'agent-timeout', type: 'duration', seedType: 'duration', seedDefault: '5s', default: '5s',
    help: 'Time limit for reaching a node agent and getting its response headers (logs, nodes/proxy, metrics, the dial of exec/attach/port-forward); streams under way are not cut.',
    section: SERVING, implemented: true,
  },

  // --- Storage and caching ---
  {
    name: 'kvstore-servers', type: 'strings', seedType: 'strings', seedDefault: 'none', repeatable: true,
    help: 'kvstore endpoints (scheme://ip:port); the embedded store is used when unset.', section: STORAGE,
    implemented: true,
  },
  {
    name: 'kvstore-servers-overrides', type: 'strings', seedType: 'strings', seedDefault: 'none', repeatable: true,
    help: 'Send some built-in resources to other kvstore servers, as group/resource#server;server.',
    section: STORAGE, implemented: true,
  },
  {
    name: 'kvstore-cafile', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'CA file for verifying kvstore servers.', section: STORAGE, implemented: true,
  },
  {
    name: 'kvstore-certfile', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Client certificate for kvstore connections.', section: STORAGE, implemented: true,
  },
  {
    name: 'kvstore-keyfile', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Client key for kvstore connections.', section: STORAGE, implemented: true,
  },
  {
    name: 'kvstore-prefix', type: 'string', seedType: 'string', seedDefault: '/registry', default: '/registry',
    help: 'Key prefix under which all objects are stored.', section: STORAGE, implemented: true,
  },
  {
    name: 'kvstore-compaction-interval', type: 'duration', seedType: 'duration', seedDefault: '5m0s',
    default: '5m0s',
    help: 'How often old revisions are compacted away; 0 never compacts.', section: STORAGE, implemented: true,
  },
  {
    name: 'kvstore-count-metric-poll-period', type: 'duration', seedType: 'duration', seedDefault: '1m0s',
    default: '1m0s',
    help: 'How often object counts per resource are refreshed for metrics; 0 turns the metric off.',
    section: STORAGE, implemented: true,
  },
  {
    name: 'kvstore-db-metric-poll-interval', type: 'duration', seedType: 'duration', seedDefault: '30s',
    default: '30s',
    help: 'How often the store size metric is refreshed; 0 turns it off.', section: STORAGE, implemented: true,
  },
  {
    name: 'kvstore-healthcheck-timeout', type: 'duration', seedType: 'duration', seedDefault: '2s', default: '2s',
    help: 'How long the kvstore liveness check may take.', section: STORAGE, implemented: true,
  },
  {
    name: 'kvstore-readycheck-timeout', type: 'duration', seedType: 'duration', seedDefault: '2s', default: '2s',
    help: 'How long the kvstore readiness check may take.', section: STORAGE, implemented: true,
  },
  {
    name: 'encryption-provider-config', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Configuration of how secrets are encrypted before they are stored.', section: STORAGE,
    implemented: true,
  },
  {
    name: 'encryption-provider-config-automatic-reload', type: 'bool', seedType: 'bool', seedDefault: 'false',
    default: 'false',
    help: 'Pick up changes to the encryption configuration without a restart (a broken file is logged and the running one kept); KMS health is then one kms-providers check.', section: STORAGE,
    implemented: true,
  },
  {
    // The seed describes the only backend rather than naming a value, so there is no literal default.
    name: 'storage-backend', type: 'string', seedType: 'string', seedDefault: 'kvstore backend',
    enum: ['kvstore3'],
    help: 'Persistence backend: kvstore3 (the kvstore v3 API, served by the embedded store or by --kvstore-servers); the only one, and the default.', section: STORAGE, implemented: true,
  },
  {
    name: 'storage-initialization-timeout', type: 'duration', seedType: 'duration', seedDefault: '1m0s',
    default: '1m0s',
    help: 'How long to wait for storage to come up before reporting ready.', section: STORAGE,
    implemented: true,
  },
  {
    name: 'storage-media-type', type: 'string', seedType: 'string', seedDefault: 'application/vnd.orch.protobuf',
    // JSON, not the seed's protobuf, by default: measured (bench CASES=media, three runs), protobuf pod
    // creates ran at 0.69x-0.91x the JSON rate and took 1.16x-1.65x the server CPU per create: V8's JSON
    // is native, the protobuf encoder is JavaScript, and each protobuf write is decoded again to prove
    // nothing was lost.
    default: 'application/json',
    enum: ['application/json', 'application/yaml', 'application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf'],
    help: 'Encoding of built-in objects in the store (custom resources stay JSON); any of them is read whatever the setting. Default JSON: protobuf writes measured 0.7-0.9x of JSON here.',
    section: STORAGE, implemented: true,
  },
  {
    name: 'watch-cache', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Serve watches and lists from an in-memory cache.', section: STORAGE, implemented: true,
  },
  {
    name: 'watch-cache-sizes', type: 'strings', seedType: 'strings', seedDefault: 'none', repeatable: true,
    help: 'Per-resource cache settings as resource[.group]#size; a size of 0 turns caching off for it.',
    section: STORAGE, implemented: true,
  },
  {
    name: 'enable-garbage-collector', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Deletes honour propagationPolicy and orphanDependents with the garbage collector\'s finalizers; keep it in line with the controller manager.',
    section: STORAGE, implemented: true,
  },
  {
    name: 'delete-collection-workers', type: 'int', seedType: 'int', seedDefault: '1', default: '1',
    help: 'Parallel workers for deleting whole collections, e.g. when a namespace goes away.', section: STORAGE,
    implemented: true,
  },
  {
    name: 'lease-reuse-duration-seconds', type: 'int', seedType: 'int', seedDefault: '60', default: '60',
    help: 'Seconds an etcd lease for events (--event-ttl) is shared by later writes before a new one is granted (at most 5% of the TTL, as upstream). etcd only: the embedded SQLite store expires events with a sweeper and takes no leases.',
    section: STORAGE, implemented: true,
  },
  {
    name: 'default-not-ready-toleration-seconds', type: 'int', seedType: 'int', seedDefault: '300', default: '300', min: 0,
    help: 'Seconds pods tolerate a not-ready node when they set no toleration of their own (DefaultTolerationSeconds).',
    section: STORAGE, implemented: true,
  },
  {
    name: 'default-unreachable-toleration-seconds', type: 'int', seedType: 'int', seedDefault: '300',
    default: '300', min: 0,
    help: 'Seconds pods tolerate an unreachable node when they set no toleration of their own (DefaultTolerationSeconds).',
    section: STORAGE, implemented: true,
  },
  {
    name: 'allow-privileged', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Accept pods (and pod templates) with privileged containers; refused as invalid otherwise. orch up turns it on.',
    section: STORAGE, implemented: true,
  },

  // --- Coordinated leader election ---
  {
    name: 'coordinated-leadership-lease-duration', type: 'duration', seedType: 'duration', seedDefault: '15s',
    default: '15s',
    help: 'Lease duration of the coordinated leader election controller the API server runs (gate CoordinatedLeaderElection).', section: LEADER, implemented: true,
  },
  {
    name: 'coordinated-leadership-renew-deadline', type: 'duration', seedType: 'duration', seedDefault: '10s',
    default: '10s',
    help: 'Time the API server leading the coordinated leader election controller has to renew its lease before giving it up.', section: LEADER, implemented: true,
  },
  {
    name: 'coordinated-leadership-retry-period', type: 'duration', seedType: 'duration', seedDefault: '2s',
    default: '2s',
    help: 'Pause between attempts to acquire or renew the coordinated leader election controller\'s lease.', section: LEADER, implemented: true,
  },

  // --- Runtime selection and diagnostics ---
  {
    name: 'runtime-config', type: 'configurationMap', seedType: 'comma-separated key=value pairs', seedDefault: 'none',
    repeatable: true,
    help: 'Switch built-in API groups and versions on or off, as group/version=true|false.', section: RUNTIME,
    implemented: true,
  },
  {
    name: 'feature-gates', type: 'featureGates', seedType: 'component:key=value pairs, comma-separated',
    seedDefault: 'none', repeatable: true,
    help: 'Turn alpha or experimental features on or off, as [component:]Name=true|false.', section: RUNTIME,
    implemented: true,
  },
  {
    name: 'tracing-config-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Path of the tracing configuration (TracingConfiguration: OTLP gRPC endpoint, sampling rate per million).', section: RUNTIME, implemented: true,
  },
  {
    name: 'allow-metric-labels', type: 'stringToString', seedType: 'stringToString', seedDefault: '[]',
    repeatable: true,
    help: 'Restrict the values a metric label may take, as <metric>,<label>=<value>,<value>.', section: RUNTIME,
    implemented: true,
  },
  {
    name: 'allow-metric-labels-manifest', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'File holding the metric label allow-list.', section: RUNTIME, implemented: true,
  },
  {
    name: 'disabled-metrics', type: 'strings', seedType: 'strings', seedDefault: 'none', repeatable: true,
    help: 'Fully qualified metric names to stop exporting.', section: RUNTIME, implemented: true,
  },
  {
    name: 'show-hidden-metrics-for-version', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Bring back metrics hidden since this previous <major>.<minor> release.', section: RUNTIME,
    implemented: true,
  },
  {
    name: 'log-flush-frequency', type: 'duration', seedType: 'duration', seedDefault: '5s', default: '5s',
    help: 'Longest time log output stays buffered.', section: RUNTIME, implemented: true,
  },
  {
    name: 'log-text-info-buffer-size', type: 'quantity', seedType: 'quantity', seedDefault: '0', default: '0',
    help: 'Alpha: buffer this much info output when streams are split; 0 writes at once (needs LoggingAlphaOptions).', section: RUNTIME,
    implemented: true,
  },
  {
    name: 'log-text-split-stream', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Alpha: write info lines to stdout, warnings and errors to stderr (needs LoggingAlphaOptions).', section: RUNTIME, implemented: true,
  },
  {
    name: 'logging-format', type: 'string', seedType: 'string', seedDefault: 'text', default: 'text', enum: ['text'],
    help: 'Log output format.', section: RUNTIME, implemented: true,
  },
  {
    name: 'v', short: 'v', type: 'int', seedType: 'int', seedDefault: 'none',
    help: 'How much to log; higher numbers log more.', section: RUNTIME, implemented: true,
  },
  {
    name: 'vmodule', type: 'vmodule', seedType: 'pattern=N,...', seedDefault: 'none',
    help: 'Log levels per source file, as pattern=N,...', section: RUNTIME, implemented: true,
  },
  {
    name: 'version', type: 'version', seedType: 'version[=true]', seedDefault: 'none',
    help: 'Print the version and exit (=raw for details), or =vX.Y.Z to report another version.',
    section: RUNTIME, implemented: true,
  },
  {
    name: 'help', short: 'h', type: 'bool', seedType: 'bool', seedDefault: 'none',
    help: 'Show this help.', section: RUNTIME, implemented: true,
  },

  // --- Authentication ---
  {
    name: 'anonymous-auth', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Treat requests no authenticator rejected as user system:anonymous.', section: AUTHN, implemented: true,
  },
  {
    name: 'client-ca-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'CA bundle for client certificates; the certificate CommonName becomes the user name.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'token-auth-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'File of static bearer tokens accepted on the secure port.', section: AUTHN, implemented: true,
  },
  {
    name: 'enable-bootstrap-token-auth', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Accept bootstrap token secrets from the system namespace (orch-system) for TLS bootstrapping.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'authentication-config', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'File configuring JWT and anonymous authentication (replaces the --oidc-* options).', section: AUTHN,
    implemented: true,
  },
  {
    name: 'authentication-token-webhook-config-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Client configuration of a remote service that checks bearer tokens.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'authentication-token-webhook-version', type: 'string', seedType: 'string', seedDefault: 'v1beta1',
    default: 'v1beta1',
    help: 'TokenReview version spoken with the token webhook.', section: AUTHN, implemented: true,
  },
  {
    name: 'authentication-token-webhook-cache-ttl', type: 'duration', seedType: 'duration', seedDefault: '2m0s',
    default: '2m0s',
    help: 'How long token webhook answers are cached.', section: AUTHN, implemented: true,
  },
  {
    name: 'api-audiences', type: 'strings', seedType: 'strings', seedDefault: 'none', repeatable: true,
    help: 'Audiences a service account token must name; the issuer URL is used when unset.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'oidc-issuer-url', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'https URL of the OpenID issuer whose ID tokens are accepted.', section: AUTHN, implemented: true,
  },
  {
    name: 'oidc-client-id', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'OpenID client ID tokens must be issued for; needed with --oidc-issuer-url.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'oidc-ca-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'CA bundle for the OpenID issuer; system roots are used when unset.', section: AUTHN, implemented: true,
  },
  {
    name: 'oidc-username-claim', type: 'string', seedType: 'string', seedDefault: 'sub', default: 'sub',
    help: 'ID token claim that becomes the user name.', section: AUTHN, implemented: true,
  },
  {
    name: 'oidc-username-prefix', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Prefix added to OpenID user names; - adds none.', section: AUTHN, implemented: true,
  },
  {
    name: 'oidc-groups-claim', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'ID token claim that lists the user\'s groups.', section: AUTHN, implemented: true,
  },
  {
    name: 'oidc-groups-prefix', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Prefix added to OpenID group names.', section: AUTHN, implemented: true,
  },
  {
    name: 'oidc-required-claim', type: 'keyValue', seedType: 'key=value pairs', seedDefault: 'none',
    repeatable: true,
    help: 'Claim=value pairs an ID token must carry to be accepted.', section: AUTHN, implemented: true,
  },
  {
    name: 'oidc-signing-algs', type: 'strings', seedType: 'strings', seedDefault: 'RS256', default: 'RS256',
    enum: ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512'], repeatable: true,
    help: 'Signature algorithms accepted on ID tokens.', section: AUTHN, implemented: true,
  },
  {
    name: 'requestheader-client-ca-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'CA bundle a proxy\'s client certificate must chain to before its identity headers are believed.',
    section: AUTHN, implemented: true,
  },
  {
    name: 'requestheader-allowed-names', type: 'strings', seedType: 'strings', seedDefault: 'none',
    repeatable: true,
    help: 'Common names a proxy certificate may have; any is fine when empty.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'requestheader-username-headers', type: 'strings', seedType: 'strings', seedDefault: 'none',
    repeatable: true,
    help: 'Headers carrying the user name from a trusted proxy, e.g. X-Remote-User.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'requestheader-group-headers', type: 'strings', seedType: 'strings', seedDefault: 'none',
    repeatable: true,
    help: 'Headers carrying groups from a trusted proxy, e.g. X-Remote-Group.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'requestheader-extra-headers-prefix', type: 'strings', seedType: 'strings', seedDefault: 'none',
    repeatable: true,
    help: 'Header prefixes carrying extra user attributes, e.g. X-Remote-Extra-.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'requestheader-uid-headers', type: 'strings', seedType: 'strings', seedDefault: 'none',
    repeatable: true,
    help: 'Headers carrying the user UID from a trusted proxy, e.g. X-Remote-Uid.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'service-account-issuer', type: 'strings', seedType: 'strings', seedDefault: 'none', repeatable: true,
    help: 'Issuer (iss) of service account tokens; the first signs new tokens, all are accepted (orch defaults to https://<default service>.default.svc.cluster.local).', section: AUTHN,
    implemented: true,
  },
  {
    name: 'service-account-key-file', type: 'strings', seedType: 'strings', seedDefault: 'none', repeatable: true,
    help: 'PEM key files used to verify service account tokens.', section: AUTHN, implemented: true,
  },
  {
    name: 'service-account-signing-key-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Private key that signs new service account tokens; orch generates <cert-dir>/sa.key when unset.', section: AUTHN, implemented: true,
  },
  {
    name: 'service-account-signing-endpoint', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Socket of an external signer for service account tokens.', section: AUTHN, implemented: true,
  },
  {
    name: 'service-account-lookup', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Reject legacy token secrets whose secret or account no longer exists (bound tokens are always checked).', section: AUTHN,
    implemented: true,
  },
  {
    name: 'service-account-extend-token-expiration', type: 'bool', seedType: 'bool', seedDefault: 'true',
    default: 'true',
    help: 'Let tokens injected at admission live up to a year.', section: AUTHN, implemented: true,
  },
  {
    name: 'service-account-max-token-expiration', type: 'duration', seedType: 'duration', seedDefault: 'none',
    help: 'Longest lifetime given to a service account token; longer requests are cut down.', section: AUTHN,
    implemented: true,
  },
  {
    name: 'service-account-jwks-uri', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Key set URL to publish in the OpenID discovery document.', section: AUTHN, implemented: true,
  },

  // --- Authorization ---
  {
    // The seed's default depends on --authorization-config, so it is computed, not declared here.
    name: 'authorization-mode', type: 'strings', seedType: 'strings',
    seedDefault: 'AlwaysAllow when the config option is unused',
    enum: ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'], repeatable: true,
    help: 'Authorizers to consult, in order.', section: AUTHZ, implemented: true,
  },
  {
    name: 'authorization-config', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'File configuring the authorizer chain (instead of the mode and webhook options).', section: AUTHZ,
    implemented: true,
  },
  {
    name: 'authorization-policy-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'ABAC policy, one JSON object per line.', section: AUTHZ, implemented: true,
  },
  {
    name: 'authorization-webhook-config-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Client configuration of the remote authorizer used by the Webhook mode.', section: AUTHZ,
    implemented: true,
  },
  {
    name: 'authorization-webhook-version', type: 'string', seedType: 'string', seedDefault: 'v1beta1',
    default: 'v1beta1', enum: ['v1', 'v1beta1'],
    help: 'SubjectAccessReview version spoken with the authorization webhook.', section: AUTHZ,
    implemented: true,
  },
  {
    name: 'authorization-webhook-cache-authorized-ttl', type: 'duration', seedType: 'duration',
    seedDefault: '5m0s', default: '5m0s',
    help: 'How long an "allowed" webhook answer is cached.', section: AUTHZ, implemented: true,
  },
  {
    name: 'authorization-webhook-cache-unauthorized-ttl', type: 'duration', seedType: 'duration',
    seedDefault: '30s', default: '30s',
    help: 'How long a "denied" webhook answer is cached.', section: AUTHZ, implemented: true,
  },

  // --- Events (event objects and auditing) ---
  {
    name: 'event-ttl', type: 'duration', seedType: 'duration', seedDefault: '1h0m0s', default: '1h0m0s',
    help: 'How long Event objects are kept.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-policy-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Audit policy deciding which requests are recorded and how much of them.', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-log-path', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'File to write the audit log to (- for stdout); no log when unset.', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-log-format', type: 'string', seedType: 'string', seedDefault: 'json', default: 'json',
    enum: ['legacy', 'json'],
    help: 'Audit log line format.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-mode', type: 'string', seedType: 'string', seedDefault: 'blocking', default: 'blocking',
    enum: AUDIT_MODES,
    help: 'Whether responses wait for audit log writes (blocking) or not (batch).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-log-version', type: 'string', seedType: 'string', seedDefault: 'audit.<domain>/v1',
    default: 'audit.orch.io/v1', namesDefault: (n) => `${n.groups.audit}/v1`,
    help: 'API group/version of events written to the audit log.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-maxage', type: 'int', seedType: 'int', seedDefault: '366', default: '366', min: 0,
    help: 'Days to keep rotated audit logs; 0 keeps them regardless of age.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-maxbackup', type: 'int', seedType: 'int', seedDefault: '100', default: '100', min: 0,
    help: 'Number of rotated audit logs to keep; 0 keeps all.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-maxsize', type: 'int', seedType: 'int', seedDefault: '100', default: '100', min: 0,
    help: 'Size in MB at which the audit log is rotated; 0 never rotates.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-compress', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Gzip rotated audit logs.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-batch-buffer-size', type: 'int', seedType: 'int', seedDefault: '10000', default: '10000',
    min: 0,
    help: 'Events held in memory before batching to the audit log (batch mode).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-log-batch-max-size', type: 'int', seedType: 'int', seedDefault: '1', default: '1', min: 0,
    help: 'Most events per audit log batch (batch mode).', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-batch-max-wait', type: 'duration', seedType: 'duration', seedDefault: 'none',
    help: 'Longest wait before an unfilled audit log batch is written (batch mode).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-log-batch-throttle-burst', type: 'int', seedType: 'int', seedDefault: 'none', min: 0,
    help: 'Audit log batches that may go out at once after a quiet period (batch mode).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-log-batch-throttle-enable', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Rate-limit audit log batches (batch mode).', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-batch-throttle-qps', type: 'float', seedType: 'float', seedDefault: 'none', min: 0,
    help: 'Average audit log batches per second when throttled (batch mode).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-log-truncate-enabled', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Shrink oversized audit events and batches before logging.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-truncate-max-batch-size', type: 'int', seedType: 'int', seedDefault: '10485760',
    default: '10485760', min: 0,
    help: 'Bytes above which an audit log batch is split.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-log-truncate-max-event-size', type: 'int', seedType: 'int', seedDefault: '102400',
    default: '102400', min: 0,
    help: 'Bytes above which an audit event loses its bodies, then is dropped.', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-webhook-config-file', type: 'string', seedType: 'string', seedDefault: 'none',
    help: 'Client configuration of the service that receives audit events.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-webhook-mode', type: 'string', seedType: 'string', seedDefault: 'batch', default: 'batch',
    enum: AUDIT_MODES,
    help: 'Whether responses wait for the audit webhook (blocking) or not (batch).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-webhook-version', type: 'string', seedType: 'string', seedDefault: 'audit.<domain>/v1',
    default: 'audit.orch.io/v1', namesDefault: (n) => `${n.groups.audit}/v1`,
    help: 'API group/version of events sent to the audit webhook.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-webhook-initial-backoff', type: 'duration', seedType: 'duration', seedDefault: '10s',
    default: '10s',
    help: 'First pause before resending a failed audit webhook call.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-webhook-batch-buffer-size', type: 'int', seedType: 'int', seedDefault: '10000', default: '10000',
    min: 0,
    help: 'Events held in memory before batching to the audit webhook (batch mode).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-webhook-batch-max-size', type: 'int', seedType: 'int', seedDefault: '400', default: '400', min: 0,
    help: 'Most events per audit webhook batch (batch mode).', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-webhook-batch-max-wait', type: 'duration', seedType: 'duration', seedDefault: '30s',
    default: '30s',
    help: 'Longest wait before an unfilled audit webhook batch is sent (batch mode).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-webhook-batch-throttle-burst', type: 'int', seedType: 'int', seedDefault: '15', default: '15',
    min: 0,
    help: 'Audit webhook batches that may go out at once after a quiet period (batch mode).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-webhook-batch-throttle-enable', type: 'bool', seedType: 'bool', seedDefault: 'true',
    default: 'true',
    help: 'Rate-limit audit webhook batches (batch mode).', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-webhook-batch-throttle-qps', type: 'float', seedType: 'float', seedDefault: '10', default: '10',
    min: 0,
    help: 'Average audit webhook batches per second when throttled (batch mode).', section: EVENTS,
    implemented: true,
  },
  {
    name: 'audit-webhook-truncate-enabled', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'Shrink oversized audit events and batches before sending.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-webhook-truncate-max-batch-size', type: 'int', seedType: 'int', seedDefault: '10485760',
    default: '10485760', min: 0,
    help: 'Bytes above which an audit webhook batch is split.', section: EVENTS, implemented: true,
  },
  {
    name: 'audit-webhook-truncate-max-event-size', type: 'int', seedType: 'int', seedDefault: '102400',
    default: '102400', min: 0,
    help: 'Bytes above which an audit event sent to the webhook loses its bodies, then is dropped.',
    section: EVENTS, implemented: true,
  },

  // --- Limits ---
  {
    name: 'max-requests-inflight', type: 'int', seedType: 'int', seedDefault: '400', default: '400', min: 0,
    help: 'Concurrent read requests allowed (added to the mutating limit under priority and fairness).',
    section: LIMITS, implemented: true,
  },
  {
    name: 'max-mutating-requests-inflight', type: 'int', seedType: 'int', seedDefault: '200', default: '200',
    min: 0,
    help: 'Concurrent write requests allowed.', section: LIMITS, implemented: true,
  },
  {
    name: 'enable-priority-and-fairness', type: 'bool', seedType: 'bool', seedDefault: 'true', default: 'true',
    help: 'Queue requests by priority and fairness instead of a flat in-flight cap.', section: LIMITS,
    implemented: true,
  },
  {
    name: 'request-timeout', type: 'duration', seedType: 'duration', seedDefault: '1m0s', default: '1m0s',
    help: 'Default time limit for a request.', section: LIMITS, implemented: true,
  },
  {
    name: 'min-request-timeout', type: 'int', seedType: 'int (seconds)', seedDefault: '1800', default: '1800',
    min: 0,
    help: 'Seconds a watch stays open at least; each watch gets a random timeout above it.', section: LIMITS,
    implemented: true,
  },
  {
    name: 'max-connection-bytes-per-sec', type: 'int', seedType: 'int', seedDefault: '0', default: '0', min: 0,
    help: 'Byte rate cap for each direction of an upgraded connection (exec, attach, port-forward), as upstream; 0 means no cap.',
    section: LIMITS, implemented: true,
  },
  {
    name: 'livez-grace-period', type: 'duration', seedType: 'duration', seedDefault: 'none',
    help: 'Time after start during which /livez ignores unfinished start-up hooks.', section: LIMITS,
    implemented: true,
  },
  {
    name: 'shutdown-delay-duration', type: 'duration', seedType: 'duration', seedDefault: 'none',
    help: 'Keep serving this long after a stop request while /readyz already fails.', section: LIMITS,
    implemented: true,
  },
  {
    name: 'shutdown-watch-termination-grace-period', type: 'duration', seedType: 'duration', seedDefault: 'none',
    help: 'Longest wait for open watches to finish during shutdown.', section: LIMITS, implemented: true,
  },
  {
    name: 'shutdown-send-retry-after', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'While shutting down, answer new requests with 429 and Retry-After until drained.', section: LIMITS,
    implemented: true,
  },

  // --- Versioning ---
  {
    name: 'emulated-version', type: 'strings', seedType: 'strings', seedDefault: 'none', repeatable: true,
    help: 'Release whose APIs and features components should behave like.', section: VERSIONING,
    implemented: true,
  },
  {
    name: 'emulation-forward-compatible', type: 'bool', seedType: 'bool', seedDefault: 'false', default: 'false',
    help: 'When emulating an older release, also serve the newer version of an API whose older beta version is served (e.g. storage v1 VolumeAttributesClasses beside v1beta1), stored as one object.',
    section: VERSIONING, implemented: true,
  },
  {
    name: 'runtime-config-emulation-forward-compatible', type: 'bool', seedType: 'bool', seedDefault: 'false',
    default: 'false',
    help: 'Install APIs named in --runtime-config even if newer than the emulated release, instead of failing.',
    section: VERSIONING, implemented: true,
  },
  {
    name: 'min-compatibility-version', type: 'strings', seedType: 'strings', seedDefault: 'none',
    repeatable: true,
    help: 'Oldest control plane release this server must stay compatible with.', section: VERSIONING,
    implemented: true,
  },

  // --- orch's own options (not in the seed) ---
  {
    name: 'data-dir', type: 'string', seedType: 'string', seedDefault: '~/.orch/apiserver',
    default: '~/.orch/apiserver', orchOnly: true,
    help: 'Directory for the embedded SQLite store, generated certificates and the admin orchconfig.',
    section: 'orch', implemented: true,
  },
  namesOption,
];
