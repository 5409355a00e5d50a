import { describe, expect, it } from '@jest/globals';
import type { Program } from '../../src/options/spec.js';
import { validateOptionRules } from '../../src/options/rules.js';
import { toDurationValue } from '../../src/options/duration.js';
import { parseQuantity } from '../../src/options/quantity.js';
import { parseEvictionDurations, parseEvictionThresholds } from '../../src/options/value-eviction.js';
import { parseReservedMemory } from '../../src/options/value-resources.js';
import { parsePortRange } from '../../src/options/value-network.js';
import { PROGRAMS, loadOptionTable } from '../../src/options/tables.js';
import { parseOptionValue } from '../../src/options/types.js';

const d = toDurationValue;
const q = parseQuantity;

interface Case {
  program: Program;
  values: Record<string, unknown>;
  /** Options given on the command line; defaults to every key of `values`. */
  explicit?: string[];
}

/** [rule, passing case, failing case, text the failure message must contain] */
type RuleTable = Array<[string, Case, Case, string]>;

const apiserver = (values: Record<string, unknown>, explicit?: string[]): Case => ({ program: 'apiserver', values, explicit });
const cm = (values: Record<string, unknown>, explicit?: string[]): Case => ({ program: 'controller-manager', values, explicit });
const agent = (values: Record<string, unknown>, explicit?: string[]): Case => ({ program: 'agent', values, explicit });
const patch = (values: Record<string, unknown>, explicit?: string[]): Case => ({ program: 'patch', values, explicit });

const leaderDefaults = {
  'leader-elect': true,
  'leader-elect-lease-duration': d('15s'),
  'leader-elect-renew-deadline': d('10s'),
  'leader-elect-retry-period': d('2s'),
};
const coordinatedDefaults = {
  'coordinated-leadership-lease-duration': d('15s'),
  'coordinated-leadership-renew-deadline': d('10s'),
  'coordinated-leadership-retry-period': d('2s'),
};

const rules: RuleTable = [
  // --- all daemons
  ['show-hidden-metrics-for-version form', apiserver({ 'show-hidden-metrics-for-version': '1.31' }), apiserver({ 'show-hidden-metrics-for-version': 'v1.31.0' }), '--show-hidden-metrics-for-version must be of the form <major>.<minor>'],
  ['show-hidden-metrics-for-version form (agent)', agent({ 'show-hidden-metrics-for-version': '1.30' }), agent({ 'show-hidden-metrics-for-version': '1' }), '<major>.<minor>'],
  ['tls cert needs key', cm({ 'tls-cert-file': 'a.crt', 'tls-private-key-file': 'a.key' }), cm({ 'tls-cert-file': 'a.crt' }), '--tls-cert-file and --tls-private-key-file must be given together (--tls-private-key-file is missing)'],
  ['log-text-split-stream needs LoggingAlphaOptions', agent({ 'log-text-split-stream': true, 'feature-gates': { LoggingAlphaOptions: true } }), agent({ 'log-text-split-stream': true }), '--log-text-split-stream requires the LoggingAlphaOptions feature gate'],
  ['log-text-info-buffer-size needs LoggingAlphaOptions', apiserver({ 'log-text-info-buffer-size': q('0') }), apiserver({ 'log-text-info-buffer-size': q('64Ki') }), '--log-text-info-buffer-size requires the LoggingAlphaOptions feature gate'],
  ['component-qualified gate counts', apiserver({ 'log-text-split-stream': true, 'feature-gates': { 'orch:LoggingAlphaOptions': true } }), apiserver({ 'log-text-split-stream': true, 'feature-gates': { LoggingAlphaOptions: false } }), 'LoggingAlphaOptions'],
  ['allow-metric-labels key form', cm({ 'allow-metric-labels': { 'metric,label': 'a,b' } }), cm({ 'allow-metric-labels': { metric: 'a' } }), '--allow-metric-labels keys must be of the form <MetricName>,<LabelName>'],
  ['emulated-version form', apiserver({ 'emulated-version': ['orch=1.31'] }), apiserver({ 'emulated-version': ['1.31.2'] }), '--emulated-version entries must be <major>.<minor>'],
  ['tls-sni-cert-key form', apiserver({ 'tls-sni-cert-key': ['a.crt,a.key:*.example.com,example.com', 'b.crt,b.key'] }), apiserver({ 'tls-sni-cert-key': 'a.crt' }), '--tls-sni-cert-key expects <certfile>,<keyfile>[:<domain>,...]'],
  ['tls-sni-cert-key empty domain list', apiserver({ 'tls-sni-cert-key': 'a.crt,a.key' }), apiserver({ 'tls-sni-cert-key': 'a.crt,a.key:' }), 'domain list after ":" must not be empty'],
  ['http2-max-streams-per-connection not negative', apiserver({ 'http2-max-streams-per-connection': 0 }), apiserver({ 'http2-max-streams-per-connection': -1 }), '--http2-max-streams-per-connection must be zero (runtime default) or positive'],

  // --- API server
  ['secure-port 0 refused', apiserver({ 'secure-port': 6443 }), apiserver({ 'secure-port': 0 }), '--secure-port must be between 1 and 65535: the secure port cannot be turned off'],
  ['secure-port range', apiserver({ 'secure-port': 65535 }), apiserver({ 'secure-port': 65536 }), '--secure-port must be between 1 and 65535, got 65536'],
  ['goaway-chance range', apiserver({ 'goaway-chance': 0.02 }), apiserver({ 'goaway-chance': 0.05 }), '--goaway-chance must be between 0 and 0.02, got 0.05'],
  ['authorization-config vs mode', apiserver({ 'authorization-config': 'authz.yaml' }), apiserver({ 'authorization-config': 'authz.yaml', 'authorization-mode': ['RBAC'] }), '--authorization-config cannot be used together with --authorization-mode'],
  ['authorization-config vs webhook options', apiserver({ 'authorization-config': 'a.yaml', 'authorization-webhook-cache-authorized-ttl': d('5m') }, ['authorization-config']), apiserver({ 'authorization-config': 'a.yaml', 'authorization-webhook-cache-authorized-ttl': d('1m') }), '--authorization-config cannot be used together with --authorization-webhook-cache-authorized-ttl'],
  ['ABAC needs a policy file', apiserver({ 'authorization-mode': ['ABAC', 'RBAC'], 'authorization-policy-file': 'p.jsonl' }), apiserver({ 'authorization-mode': ['ABAC'] }), '--authorization-mode=ABAC requires --authorization-policy-file'],
  ['Webhook needs a config file', apiserver({ 'authorization-mode': ['Node', 'Webhook'], 'authorization-webhook-config-file': 'w.yaml' }), apiserver({ 'authorization-mode': ['Webhook'] }), '--authorization-mode=Webhook requires --authorization-webhook-config-file'],
  ['policy file without ABAC', apiserver({ 'authorization-mode': ['RBAC'] }), apiserver({ 'authorization-mode': ['RBAC'], 'authorization-policy-file': 'p.jsonl' }), '--authorization-policy-file is only used with --authorization-mode including ABAC'],
  ['mode listed twice', apiserver({ 'authorization-mode': ['Node', 'RBAC'] }), apiserver({ 'authorization-mode': ['RBAC', 'RBAC'] }), '--authorization-mode lists RBAC more than once'],
  ['encryption reload needs the file', apiserver({ 'encryption-provider-config-automatic-reload': true, 'encryption-provider-config': 'enc.yaml' }), apiserver({ 'encryption-provider-config-automatic-reload': true }), '--encryption-provider-config-automatic-reload must be set with --encryption-provider-config'],
  ['oidc-client-id required', apiserver({ 'oidc-issuer-url': 'https://issuer', 'oidc-client-id': 'orch' }), apiserver({ 'oidc-issuer-url': 'https://issuer' }), '--oidc-issuer-url requires --oidc-client-id'],
  ['oidc-issuer-url https only', apiserver({ 'oidc-issuer-url': 'https://issuer', 'oidc-client-id': 'x' }), apiserver({ 'oidc-issuer-url': 'http://issuer', 'oidc-client-id': 'x' }), '--oidc-issuer-url must be an https:// URL'],
  ['authentication-config vs oidc', apiserver({ 'authentication-config': 'authn.yaml', 'oidc-username-claim': 'sub', 'oidc-signing-algs': ['RS256'] }, ['authentication-config']), apiserver({ 'authentication-config': 'authn.yaml', 'oidc-issuer-url': 'https://i', 'oidc-client-id': 'c' }), '--authentication-config cannot be used together with --oidc-issuer-url, --oidc-client-id'],
  ['signing endpoint excludes key files', apiserver({ 'service-account-signing-endpoint': '/run/signer.sock', 'feature-gates': { ExternalServiceAccountTokenSigner: true } }), apiserver({ 'service-account-signing-endpoint': '/run/signer.sock', 'service-account-key-file': ['k.pem'], 'feature-gates': { ExternalServiceAccountTokenSigner: true } }), '--service-account-signing-endpoint cannot be used together with --service-account-key-file'],
  ['signing endpoint needs its gate', apiserver({ 'service-account-signing-endpoint': '/s', 'feature-gates': { ExternalServiceAccountTokenSigner: true } }), apiserver({ 'service-account-signing-endpoint': '/s' }), 'requires the ExternalServiceAccountTokenSigner feature gate'],
  ['signing key needs verification keys', apiserver({ 'service-account-signing-key-file': 'sa.key', 'tls-private-key-file': 'tls.key', 'tls-cert-file': 'tls.crt' }), apiserver({ 'service-account-signing-key-file': 'sa.key' }), '--service-account-signing-key-file requires --service-account-key-file'],
  ['issuer listed once', apiserver({ 'service-account-issuer': ['https://a', 'https://b'] }), apiserver({ 'service-account-issuer': ['https://a', 'https://a'] }), '--service-account-issuer lists "https://a" more than once'],
  ['admission plugins known', apiserver({ 'enable-admission-plugins': ['NodeRestriction'] }), apiserver({ 'enable-admission-plugins': ['NodeRestrictions'] }), '--enable-admission-plugins: unknown admission plugin "NodeRestrictions"'],
  ['admission plugins not both enabled and disabled', apiserver({ 'enable-admission-plugins': ['NodeRestriction'], 'disable-admission-plugins': ['PodSecurity'] }), apiserver({ 'enable-admission-plugins': ['PodSecurity'], 'disable-admission-plugins': ['PodSecurity'] }), 'PodSecurity cannot be in both --enable-admission-plugins and --disable-admission-plugins'],
  ['admission-control exclusive', apiserver({ 'admission-control': ['NamespaceLifecycle'] }), apiserver({ 'admission-control': ['NamespaceLifecycle'], 'enable-admission-plugins': ['NodeRestriction'] }), '--admission-control cannot be used together with --enable-admission-plugins'],
  ['service range size', apiserver({ 'service-cluster-ip-range': ['10.96.0.0/12', 'fd00::/108'] }), apiserver({ 'service-cluster-ip-range': ['10.0.0.0/8'] }), '--service-cluster-ip-range 10.0.0.0/8 is too large: for IPv4 the prefix length must be at least 12'],
  ['service range size (IPv6)', apiserver({ 'service-cluster-ip-range': 'fd00::/112' }), apiserver({ 'service-cluster-ip-range': 'fd00::/64' }), 'for IPv6 the prefix length must be at least 108'],
  ['node port within the node port range', apiserver({ 'service-node-port-range': parsePortRange('30000-32767'), 'orch-service-node-port': 30443 }), apiserver({ 'service-node-port-range': parsePortRange('30000-32767'), 'orch-service-node-port': 443 }), '--orch-service-node-port 443 must be within --service-node-port-range 30000-32767'],
  ['node port number range', apiserver({ 'orch-service-node-port': 0 }), apiserver({ 'orch-service-node-port': 70000 }), '--orch-service-node-port must be between 0 and 65535'],
  ['coordinated leadership: renew below lease', apiserver(coordinatedDefaults), apiserver({ ...coordinatedDefaults, 'coordinated-leadership-renew-deadline': d('15s') }), '--coordinated-leadership-renew-deadline (15s) must be less than --coordinated-leadership-lease-duration (15s)'],
  ['coordinated leadership: renew above retry jitter', apiserver(coordinatedDefaults), apiserver({ ...coordinatedDefaults, 'coordinated-leadership-retry-period': d('9s') }), '--coordinated-leadership-renew-deadline (10s) must be greater than 1.2 x --coordinated-leadership-retry-period (9s)'],
  ['in-flight limits not negative', apiserver({ 'max-requests-inflight': 0, 'max-mutating-requests-inflight': 10 }), apiserver({ 'max-requests-inflight': -1 }), '--max-requests-inflight must be zero or positive'],
  ['priority and fairness needs a positive total', apiserver({ 'enable-priority-and-fairness': false, 'max-requests-inflight': 0, 'max-mutating-requests-inflight': 0 }), apiserver({ 'enable-priority-and-fairness': true, 'max-requests-inflight': 0, 'max-mutating-requests-inflight': 0 }), '--max-requests-inflight plus --max-mutating-requests-inflight must be positive'],
  ['durations not negative', apiserver({ 'shutdown-delay-duration': d('0s') }), apiserver({ 'shutdown-delay-duration': d('-5s') }), '--shutdown-delay-duration must not be negative, got -5s'],
  ['lease reuse positive', apiserver({ 'lease-reuse-duration-seconds': 60 }), apiserver({ 'lease-reuse-duration-seconds': 0 }), '--lease-reuse-duration-seconds must be positive'],
  ['audit log rotation not negative', apiserver({ 'audit-log-maxage': 0 }), apiserver({ 'audit-log-maxbackup': -1 }), '--audit-log-maxbackup must be zero or positive'],
  ['audit batch sizes positive', apiserver({ 'audit-log-path': '-', 'audit-log-mode': 'blocking', 'audit-log-batch-max-size': 0 }), apiserver({ 'audit-log-path': '-', 'audit-log-mode': 'batch', 'audit-log-batch-max-size': 0 }), '--audit-log-batch-max-size must be positive in batch mode'],
  ['audit throttle needs qps', apiserver({ 'audit-webhook-config-file': 'w', 'audit-webhook-mode': 'batch', 'audit-webhook-batch-throttle-enable': true, 'audit-webhook-batch-throttle-qps': 10, 'audit-webhook-batch-throttle-burst': 15 }), apiserver({ 'audit-webhook-config-file': 'w', 'audit-webhook-mode': 'batch', 'audit-webhook-batch-throttle-enable': true, 'audit-webhook-batch-throttle-qps': 0, 'audit-webhook-batch-throttle-burst': 15 }), '--audit-webhook-batch-throttle-qps must be positive when --audit-webhook-batch-throttle-enable is true'],
  ['audit truncation sizes', apiserver({ 'audit-log-path': 'a', 'audit-log-truncate-enabled': true, 'audit-log-truncate-max-event-size': 100, 'audit-log-truncate-max-batch-size': 1000 }), apiserver({ 'audit-log-path': 'a', 'audit-log-truncate-enabled': true, 'audit-log-truncate-max-event-size': 2000, 'audit-log-truncate-max-batch-size': 1000 }), '--audit-log-truncate-max-event-size (2000) must not exceed --audit-log-truncate-max-batch-size (1000)'],
  ['HSTS directives', apiserver({ 'strict-transport-security-directives': ['max-age=31536000', 'includeSubDomains', 'preload'] }), apiserver({ 'strict-transport-security-directives': ['max-age'] }), '--strict-transport-security-directives: "max-age" is not one of max-age=<seconds>, includeSubDomains, preload'],
  ['CORS origins are regular expressions', apiserver({ 'cors-allowed-origins': ['^https://example\\.com$'] }), apiserver({ 'cors-allowed-origins': ['(unclosed'] }), '--cors-allowed-origins: "(unclosed" is not a valid regular expression'],
  ['CORS origins pin the host at both ends (CVE-2022-1996)', apiserver({ 'cors-allowed-origins': ['//example\\.com(:|$)'] }), apiserver({ 'cors-allowed-origins': ['example\\.com'] }), '--cors-allowed-origins: "example\\\\.com" does not pin to the start and end of the host'],
  ['TLS curves are Go curve IDs', apiserver({ 'tls-curve-preferences': [23, 29] }), apiserver({ 'tls-curve-preferences': [23, 99] }), '--tls-curve-preferences: unknown curve ID 99; accepted: 23 (P-256), 24 (P-384), 25 (P-521), 29 (X25519), 4588 (X25519MLKEM768)'],
  ['proxy client cert needs key', apiserver({ 'proxy-client-cert-file': 'p.crt', 'proxy-client-key-file': 'p.key' }), apiserver({ 'proxy-client-key-file': 'p.key' }), '--proxy-client-cert-file and --proxy-client-key-file must be given together (--proxy-client-cert-file is missing)'],
  ['kvstore servers are URLs', apiserver({ 'kvstore-servers': ['http://127.0.0.1:2379'] }), apiserver({ 'kvstore-servers': ['127.0.0.1:2379'] }), '--kvstore-servers entries must be URLs of the form scheme://ip:port'],
  ['kvstore overrides form', apiserver({ 'kvstore-servers-overrides': ['/events#http://127.0.0.1:4002;http://127.0.0.1:4003', 'apps/deployments#https://s:1'] }), apiserver({ 'kvstore-servers-overrides': ['events=http://x:1'] }), '--kvstore-servers-overrides entries must be of the form group/resource#servers'],
  ['watch cache sizes form', apiserver({ 'watch-cache-sizes': ['pods#0', 'deployments.apps#100'] }), apiserver({ 'watch-cache-sizes': ['pods=0'] }), '--watch-cache-sizes entries must be of the form resource[.group]#size'],
  ['forward compatibility needs an emulated version', apiserver({ 'emulation-forward-compatible': true, 'emulated-version': ['1.31'] }), apiserver({ 'emulation-forward-compatible': true }), '--emulation-forward-compatible may only be true when --emulated-version sets a version'],
  ['peer options need their gate', apiserver({ 'peer-ca-file': 'ca.crt', 'feature-gates': { UnknownVersionInteroperabilityProxy: true } }), apiserver({ 'peer-ca-file': 'ca.crt' }), '--peer-ca-file requires the UnknownVersionInteroperabilityProxy feature gate'],
  ['peer advertise port is a port', apiserver({ 'peer-advertise-port': '6443', 'feature-gates': { UnknownVersionInteroperabilityProxy: true } }), apiserver({ 'peer-advertise-port': 'https', 'feature-gates': { UnknownVersionInteroperabilityProxy: true } }), '--peer-advertise-port must be a port between 1 and 65535'],

  // --- controller manager
  ['renew deadline below lease duration', cm(leaderDefaults), cm({ ...leaderDefaults, 'leader-elect-renew-deadline': d('20s') }), '--leader-elect-renew-deadline (20s) must be less than --leader-elect-lease-duration (15s)'],
  ['leader election checks off without leader-elect', cm({ ...leaderDefaults, 'leader-elect': false, 'leader-elect-renew-deadline': d('20s') }), cm({ ...leaderDefaults, 'leader-elect-renew-deadline': d('15s') }), 'must be less than --leader-elect-lease-duration'],
  ['lease durations positive', cm(leaderDefaults), cm({ ...leaderDefaults, 'leader-elect-retry-period': d('0s') }), '--leader-elect-retry-period must be greater than zero, got 0s'],
  ['renew deadline above 1.2 x retry period', cm(leaderDefaults), cm({ ...leaderDefaults, 'leader-elect-retry-period': d('9s') }), 'must be greater than 1.2 x --leader-elect-retry-period (9s)'],
  ['resource lock is leases', cm({ 'leader-elect-resource-lock': 'leases' }), cm({ 'leader-elect-resource-lock': 'configmaps' }), '--leader-elect-resource-lock must be leases'],
  ['general signing pair excludes signer-specific options', cm({ 'cluster-signing-cert-file': 'ca.crt', 'cluster-signing-key-file': 'ca.key' }), cm({ 'cluster-signing-cert-file': 'ca.crt', 'cluster-signing-key-file': 'ca.key', 'cluster-signing-agent-client-cert-file': 'a.crt', 'cluster-signing-agent-client-key-file': 'a.key' }), '--cluster-signing-cert-file and --cluster-signing-key-file cannot be used together with the signer-specific options --cluster-signing-agent-client-cert-file, --cluster-signing-agent-client-key-file'],
  ['signer-specific cert needs its key', cm({ 'cluster-signing-agent-serving-cert-file': 's.crt', 'cluster-signing-agent-serving-key-file': 's.key', 'cluster-signing-orch-apiserver-client-cert-file': 'c.crt', 'cluster-signing-orch-apiserver-client-key-file': 'c.key' }), cm({ 'cluster-signing-legacy-unknown-cert-file': 'l.crt' }), '--cluster-signing-legacy-unknown-cert-file requires --cluster-signing-legacy-unknown-key-file'],
  ['general signing key needs its cert', cm({}), cm({ 'cluster-signing-key-file': 'ca.key' }), '--cluster-signing-key-file requires --cluster-signing-cert-file'],
  ['attach-detach sync period above 1s', cm({ 'attach-detach-reconcile-sync-period': d('1.5s') }), cm({ 'attach-detach-reconcile-sync-period': d('1s') }), '--attach-detach-reconcile-sync-period must be more than 1s, got 1s'],
  ['allocate-node-cidrs needs cluster-cidr', cm({ 'allocate-node-cidrs': true, 'cluster-cidr': ['10.244.0.0/16'] }), cm({ 'allocate-node-cidrs': true }), '--allocate-node-cidrs requires --cluster-cidr'],
  ['node mask size within the cluster CIDR', cm({ 'cluster-cidr': ['10.244.0.0/16', 'fd00:10::/56'], 'node-cidr-mask-size-ipv4': 24, 'node-cidr-mask-size-ipv6': 64 }), cm({ 'cluster-cidr': ['10.244.0.0/16'], 'node-cidr-mask-size-ipv4': 8 }), '--node-cidr-mask-size-ipv4 (8) must be between the --cluster-cidr prefix length of 10.244.0.0/16 (16) and 32'],
  ['max endpoints per slice', cm({ 'max-endpoints-per-slice': 100 }), cm({ 'max-endpoints-per-slice': 1001 }), '--max-endpoints-per-slice must be between 1 and 1000, got 1001'],
  ['service endpoint syncs', cm({ 'concurrent-service-endpoint-syncs': 5 }), cm({ 'concurrent-service-endpoint-syncs': 0 }), '--concurrent-service-endpoint-syncs must be between 1 and 50'],
  ['resource quota syncs', cm({ 'concurrent-resource-quota-syncs': 5 }), cm({ 'concurrent-resource-quota-syncs': 0 }), '--concurrent-resource-quota-syncs must be at least 1, got 0'],
  ['resource quota sync period', cm({ 'resource-quota-sync-period': d('5m') }), cm({ 'resource-quota-sync-period': d('0s') }), '--resource-quota-sync-period must be more than 0s, got 0s'],
  ['leader migration config needs migration on', cm({ 'leader-migration-config': 'm.yaml', 'enable-leader-migration': true }), cm({ 'leader-migration-config': 'm.yaml', 'enable-leader-migration': false }), '--leader-migration-config requires --enable-leader-migration=true'],
  ['unhealthy zone threshold is a fraction', cm({ 'unhealthy-zone-threshold': 0.55 }), cm({ 'unhealthy-zone-threshold': 1.5 }), '--unhealthy-zone-threshold must be between 0 and 1'],
  ['eviction rates not negative', cm({ 'node-eviction-rate': 0 }), cm({ 'secondary-node-eviction-rate': -0.1 }), '--secondary-node-eviction-rate must be zero or positive'],
  ['controllers entries', cm({ controllers: ['*', '-nodeipam', 'garbage-collector-controller'] }), cm({ controllers: ['*', '+foo'] }), '--controllers entries must be *, <name> or -<name>, got "+foo"'],
  ['controller-manager secure-port may be 0', cm({ 'secure-port': 0 }), cm({ 'secure-port': -1 }), '--secure-port must be between 0 and 65535 (0 disables HTTPS)'],

  // --- agent
  ['runonce with the default server is fine', agent({ runonce: true, 'enable-server': true }, ['runonce']), agent({ runonce: true, 'enable-server': true }), '--runonce cannot be used with --enable-server=true'],
  ['runonce with the server explicitly off', agent({ runonce: true, 'enable-server': false }), agent({ runonce: true, 'enable-server': true }, ['runonce', 'enable-server']), '--runonce cannot be used with --enable-server=true'],
  ['image GC low below high', agent({ 'image-gc-low-threshold': 80, 'image-gc-high-threshold': 85 }), agent({ 'image-gc-low-threshold': 85, 'image-gc-high-threshold': 85 }), '--image-gc-low-threshold (85) must be less than --image-gc-high-threshold (85)'],
  ['image GC thresholds are percentages', agent({ 'image-gc-low-threshold': 0, 'image-gc-high-threshold': 100 }), agent({ 'image-gc-low-threshold': 80, 'image-gc-high-threshold': 101 }), '--image-gc-high-threshold must be between 0 and 100'],
  ['container-log-max-files at least 2', agent({ 'container-log-max-files': 2 }), agent({ 'container-log-max-files': 1 }), '--container-log-max-files must be at least 2, got 1'],
  ['container-log-max-size positive', agent({ 'container-log-max-size': q('10Mi') }), agent({ 'container-log-max-size': '10MB' }), '--container-log-max-size must be a positive quantity'],
  ['oom-score-adj range', agent({ 'oom-score-adj': -999 }), agent({ 'oom-score-adj': -1001 }), '--oom-score-adj must be between -1000 and 1000, got -1001'],
  ['max-open-files not negative', agent({ 'max-open-files': 1000000 }), agent({ 'max-open-files': -5 }), '--max-open-files must be zero or positive, got -5'],
  ['event-qps not negative', agent({ 'event-qps': 0 }), agent({ 'event-qps': -1 }), '--event-qps must be zero or positive'],
  ['agent ports', agent({ port: 10250, 'read-only-port': 0, 'healthz-port': 0 }), agent({ port: 0 }), '--port must be between 1 and 65535, got 0'],
  ['node-status-max-images', agent({ 'node-status-max-images': -1 }), agent({ 'node-status-max-images': -2 }), '--node-status-max-images must be -1 (no cap) or more'],
  ['node status update frequency positive', agent({ 'node-status-update-frequency': d('10s') }), agent({ 'node-status-update-frequency': d('0s') }), '--node-status-update-frequency must be positive'],
  ['soft thresholds need grace periods', agent({ 'eviction-soft': parseEvictionThresholds('memory.available<1.5Gi'), 'eviction-soft-grace-period': parseEvictionDurations('memory.available=1m30s') }), agent({ 'eviction-soft': parseEvictionThresholds('memory.available<1.5Gi,nodefs.available<15%'), 'eviction-soft-grace-period': parseEvictionDurations('memory.available=1m30s') }), '--eviction-soft threshold nodefs.available needs a grace period in --eviction-soft-grace-period'],
  ['enforce-node-allocatable none alone', agent({ 'enforce-node-allocatable': ['none'] }), agent({ 'enforce-node-allocatable': ['none', 'pods'] }), '--enforce-node-allocatable may not contain other levels when none is given'],
  ['enforce-node-allocatable levels', agent({ 'enforce-node-allocatable': ['pods'] }), agent({ 'enforce-node-allocatable': ['kube-reserved'] }), '"kube-reserved" is not one of none, pods'],
  ['reserved levels need their cgroup', agent({ 'enforce-node-allocatable': ['pods', 'system-reserved'], 'system-reserved-cgroup': '/system.slice' }), agent({ 'enforce-node-allocatable': ['pods', 'orch-reserved-compressible'] }), '--enforce-node-allocatable with orch-reserved requires --orch-reserved-cgroup'],
  ['enforcement needs QoS cgroups', agent({ 'enforce-node-allocatable': ['none'], 'cgroups-per-qos': false }), agent({ 'enforce-node-allocatable': ['pods'], 'cgroups-per-qos': false }), '--enforce-node-allocatable may only be none when --cgroups-per-qos is false'],
  ['qos-reserved memory only', agent({ 'qos-reserved': { memory: 50 }, 'feature-gates': { QOSReserved: true } }), agent({ 'qos-reserved': { cpu: 50 }, 'feature-gates': { QOSReserved: true } }), '--qos-reserved can only reserve memory, not "cpu"'],
  ['qos-reserved needs its gate', agent({ 'qos-reserved': { memory: 50 }, 'feature-gates': { QOSReserved: true } }), agent({ 'qos-reserved': { memory: 50 } }), '--qos-reserved requires the QOSReserved feature gate'],
  ['cpu-cfs-quota-period non-default needs its gate', agent({ 'cpu-cfs-quota-period': d('100ms') }), agent({ 'cpu-cfs-quota-period': d('50ms') }), '--cpu-cfs-quota-period other than 100ms requires the CustomCPUCFSQuotaPeriod feature gate'],
  ['cpu-cfs-quota-period range', agent({ 'cpu-cfs-quota-period': d('1s'), 'feature-gates': { CustomCPUCFSQuotaPeriod: true } }), agent({ 'cpu-cfs-quota-period': d('2s'), 'feature-gates': { CustomCPUCFSQuotaPeriod: true } }), '--cpu-cfs-quota-period must be between 1ms and 1s, got 2s'],
  ['rotate-server-certificates gate', agent({ 'rotate-server-certificates': true }), agent({ 'rotate-server-certificates': true, 'feature-gates': { RotateKubeletServerCertificate: false } }), '--rotate-server-certificates requires the RotateKubeletServerCertificate feature gate'],
  ['node labels in the reserved namespace', agent({ 'node-labels': { 'node.orch.io/pool': 'a', 'orch.io/hostname': 'n1', 'x.agent.orch.io/y': '1', team: 'infra' } }), agent({ 'node-labels': { 'node-role.orch.io/control-plane': '', 'orch.io/role': 'x' } }), "--node-labels: unknown 'orch.io' labels [node-role.orch.io/control-plane orch.io/role]; labels in the 'orch.io' namespace must begin with an allowed prefix (agent.orch.io, node.orch.io)"],
  ['node labels are valid labels', agent({ 'node-labels': { 'example.com/tier': 'gold' } }), agent({ 'node-labels': { tier: 'not valid' } }), '--node-labels: invalid label tier=not valid'],
  ['node-ip single or dual-stack', agent({ 'node-ip': ['10.0.0.5', 'fd00::5'] }), agent({ 'node-ip': ['10.0.0.5', '10.0.0.6'] }), '--node-ip must be a single IP or a dual-stack pair'],
  ['node-ip are IPs', agent({ 'node-ip': ['::'] }), agent({ 'node-ip': ['my-host'] }), '--node-ip: "my-host" is not an IP address'],
  ['cluster-dns are IPs', agent({ 'cluster-dns': ['10.96.0.10'] }), agent({ 'cluster-dns': ['dns.local'] }), '--cluster-dns: "dns.local" is not an IP address'],
  ['IPv6 pod-cidr at most 65536 addresses', agent({ 'pod-cidr': ['fd00::/112'] }), agent({ 'pod-cidr': ['fd00::/64'] }), '--pod-cidr fd00::/64 is too large'],
  ['reservable resources', agent({ 'system-reserved': { cpu: '500m', memory: '1Gi', pid: '1000', 'ephemeral-storage': '1Gi' } }), agent({ 'orch-reserved': { gpu: '1' } }), '--orch-reserved: "gpu" cannot be reserved; use cpu, memory, pid, ephemeral-storage'],
  ['reserved amounts are quantities', agent({ 'orch-reserved': { memory: '1Gi' } }), agent({ 'system-reserved': { memory: 'lots' } }), '--system-reserved: memory=lots is not a non-negative quantity'],
  ['reserved memory adds up', agent({ 'reserved-memory': parseReservedMemory('0:memory=1124Mi'), 'orch-reserved': { memory: '512Mi' }, 'system-reserved': { memory: '512Mi' } }), agent({ 'reserved-memory': parseReservedMemory('0:memory=1Gi'), 'orch-reserved': { memory: '512Mi' }, 'system-reserved': { memory: '512Mi' } }), '--reserved-memory: the memory reserved over all NUMA nodes (1073741824 bytes) must equal --orch-reserved memory + --system-reserved memory + the --eviction-hard memory.available threshold (1178599424 bytes)'],
  ['reserved memory with an explicit hard threshold', agent({ 'reserved-memory': parseReservedMemory('0:memory=512Mi;1:memory=512Mi'), 'eviction-hard': parseEvictionThresholds('memory.available<1Gi') }), agent({ 'reserved-memory': parseReservedMemory('0:memory=512Mi'), 'eviction-hard': parseEvictionThresholds('memory.available<1Gi') }), 'must equal'],
  ['webhook authorization needs the API server', agent({ 'authorization-mode': 'Webhook', orchconfig: '/etc/orch/agent.conf' }), agent({ 'authorization-mode': 'Webhook' }), '--authorization-mode=Webhook requires --orchconfig'],
  ['token webhook needs the API server', agent({ 'authentication-token-webhook': true, orchconfig: 'a.conf' }), agent({ 'authentication-token-webhook': true }), '--authentication-token-webhook requires --orchconfig'],
  ['bootstrap needs orchconfig', agent({ 'bootstrap-orchconfig': 'b.conf', orchconfig: 'a.conf' }), agent({ 'bootstrap-orchconfig': 'b.conf' }), '--bootstrap-orchconfig requires --orchconfig'],
  ['lock contention needs a lock file', agent({ 'exit-on-lock-contention': true, 'lock-file': '/run/agent.lock' }), agent({ 'exit-on-lock-contention': true }), '--exit-on-lock-contention requires --lock-file'],
  ['system-cgroups needs cgroup-root', agent({ 'system-cgroups': '/system', 'cgroup-root': '/' }), agent({ 'system-cgroups': '/system' }), '--system-cgroups requires --cgroup-root'],
  ['cgroup names are absolute', agent({ 'runtime-cgroups': '/runtime' }), agent({ 'agent-cgroups': 'agent' }), '--agent-cgroups must be an absolute cgroup name starting with /'],
  ['reserved-cpus list', agent({ 'reserved-cpus': '0-3,8' }), agent({ 'reserved-cpus': '0-3;8' }), '--reserved-cpus must be a CPU list such as 0-3,8'],
  ['unsafe sysctl patterns end in *', agent({ 'allowed-unsafe-sysctls': ['kernel.msg*', 'net.core.somaxconn'] }), agent({ 'allowed-unsafe-sysctls': ['kernel.*.x'] }), '--allowed-unsafe-sysctls: "kernel.*.x" must be a sysctl name or a prefix ending in *'],

  // --- patch
  ['-k not with -f', patch({ kustomize: 'dir' }), patch({ kustomize: 'dir', filename: ['a.yaml'] }), 'only one of -f or -k can be specified'],
  ['-k not with -R', patch({ kustomize: 'dir', recursive: false }), patch({ kustomize: 'dir', recursive: true }), "the -k flag can't be used with -f or -R"],
  ['--patch and --patch-file exclusive', patch({ patch: '{}' }), patch({ patch: '{}', 'patch-file': 'p.json' }), 'cannot specify --patch and --patch-file together'],
  ['--local not with --dry-run=server', patch({ local: true, 'dry-run': 'client' }), patch({ local: true, 'dry-run': 'server' }), 'cannot specify --local and --dry-run=server - did you mean --dry-run=client?'],
];

function run(c: Case): string[] {
  return validateOptionRules(c.program, c.values, new Set(c.explicit ?? Object.keys(c.values)));
}

describe('validateOptionRules', () => {
  it.each(rules)('%s: passes', (_rule, passing) => {
    expect(run(passing)).toEqual([]);
  });

  it.each(rules)('%s: fails', (_rule, _passing, failing, message) => {
    expect(run(failing).join('\n')).toContain(message);
  });

  it('applies only the rules of the program being started', () => {
    // secure-port 0 is refused for the API server but disables HTTPS in the controller manager.
    expect(run(apiserver({ 'secure-port': 0 }))).toHaveLength(1);
    expect(run(cm({ 'secure-port': 0 }))).toEqual([]);
    expect(run(patch({ 'secure-port': 0, runonce: true, 'enable-server': true }))).toEqual([]);
  });

  it('reports every problem at once', () => {
    const problems = run(apiserver({ 'secure-port': 0, 'goaway-chance': 1, 'oidc-issuer-url': 'https://i' }));
    expect(problems).toHaveLength(3);
  });

  it('treats options absent from the values as unset', () => {
    for (const program of ['apiserver', 'controller-manager', 'agent', 'patch'] as const) {
      expect(validateOptionRules(program, {}, new Set())).toEqual([]);
    }
  });

  it.each(PROGRAMS)('accepts the defaults of the %s option table (the program starts without flags)', async (program) => {
    const values: Record<string, unknown> = {};
    for (const spec of await loadOptionTable(program)) {
      if (spec.default !== undefined && !spec.default.startsWith('$HOME') && !spec.default.startsWith('~')) {
        values[spec.name] = parseOptionValue(spec, spec.default);
      }
    }
    expect(validateOptionRules(program, values, new Set())).toEqual([]);
  });
});
