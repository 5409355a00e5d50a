/**
 * From the typed option values of `orch controller-manager` to the manager's configuration. Pure.
 * IMPLEMENTED_CONTROLLER_MANAGER_OPTIONS is what the option table marks as taking effect; a test
 * keeps the two in step.
 */
import {names} from '../../api/names.js';
import {join} from 'node:path';
import {homedir} from 'node:os';
import type {ControllerManagerConfig} from './manager.js';
import {secureServingOptions} from '../shared/serving/secure-serving.js';
import type {VersionInfo} from '../../lib/version.js';

type Values = Record<string, unknown>;
const ms = (v: unknown, fallback: number): number => (v && typeof v === 'object' && 'ms' in v ? (v as {ms: number}).ms : fallback);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export const IMPLEMENTED_CONTROLLER_MANAGER_OPTIONS = [
  // --names is read by the command (src/lib/select-names.ts) before this configuration is built.
  'names',
  'bind-address', 'secure-port', 'cert-dir', 'tls-cert-file', 'tls-private-key-file', 'tls-min-version',
  'tls-cipher-suites', 'tls-sni-cert-key', 'tls-curve-preferences', 'disable-http2-serving', 'http2-max-streams-per-connection', 'orchconfig', 'master',
  'orch-api-qps', 'orch-api-burst', 'orch-api-content-type', 'controllers', 'controller-start-interval',
  'controller-shutdown-timeout', 'min-resync-period', 'leader-elect', 'leader-elect-lease-duration',
  'leader-elect-renew-deadline', 'leader-elect-retry-period', 'leader-elect-resource-lock',
  'leader-elect-resource-name', 'leader-elect-resource-namespace', 'node-monitor-period',
  'node-monitor-grace-period', 'node-startup-grace-period', 'node-eviction-rate', 'secondary-node-eviction-rate',
  'large-cluster-size-threshold', 'unhealthy-zone-threshold', 'authorization-always-allow-paths',
  'client-ca-file', 'authentication-orchconfig', 'authentication-skip-lookup', 'authentication-tolerate-lookup-failure',
  'authentication-token-webhook-cache-ttl', 'authorization-orchconfig', 'authorization-webhook-cache-authorized-ttl',
  'authorization-webhook-cache-unauthorized-ttl', 'requestheader-client-ca-file', 'requestheader-allowed-names',
  'requestheader-username-headers', 'requestheader-group-headers', 'requestheader-extra-headers-prefix', 'requestheader-uid-headers',
  'v', 'vmodule', 'logging-format', 'log-flush-frequency', 'log-text-split-stream', 'log-text-info-buffer-size', 'version', 'help',
] as const;

export function controllerManagerConfig(values: Values, version: VersionInfo): ControllerManagerConfig {
  return {
    values,
    orchconfig: str(values.orchconfig),
    master: str(values.master),
    qps: (values['orch-api-qps'] as number) ?? 20,
    burst: (values['orch-api-burst'] as number) ?? 30,
    serving: {
      bindAddress: str(values['bind-address']) ?? '0.0.0.0',
      securePort: (values['secure-port'] as number) ?? 10257,
      // Without --cert-dir the generated certificate lives with orch's other files.
      certDir: str(values['cert-dir']) ?? join(homedir(), '.orch', 'controller-manager', 'pki'),
      tlsCertFile: str(values['tls-cert-file']),
      tlsPrivateKeyFile: str(values['tls-private-key-file']),
      alwaysAllowPaths: (values['authorization-always-allow-paths'] as string[] | undefined) ?? ['/healthz', '/readyz', '/livez'],
      clientCaFile: str(values['client-ca-file']),
      requestHeader: {
        clientCaFile: str(values['requestheader-client-ca-file']),
        allowedNames: (values['requestheader-allowed-names'] as string[] | undefined) ?? [],
        usernameHeaders: (values['requestheader-username-headers'] as string[] | undefined) ?? ['x-remote-user'],
        groupHeaders: (values['requestheader-group-headers'] as string[] | undefined) ?? ['x-remote-group'],
        extraHeaderPrefixes: (values['requestheader-extra-headers-prefix'] as string[] | undefined) ?? ['x-remote-extra-'],
        uidHeaders: (values['requestheader-uid-headers'] as string[] | undefined) ?? [],
      },
      authenticationOrchconfig: str(values['authentication-orchconfig']),
      authenticationSkipLookup: values['authentication-skip-lookup'] === true,
      authenticationTolerateLookupFailure: values['authentication-tolerate-lookup-failure'] === true,
      tokenCacheTtlMs: ms(values['authentication-token-webhook-cache-ttl'], 10_000),
      authorizationOrchconfig: str(values['authorization-orchconfig']),
      authorizedTtlMs: ms(values['authorization-webhook-cache-authorized-ttl'], 10_000),
      unauthorizedTtlMs: ms(values['authorization-webhook-cache-unauthorized-ttl'], 10_000),
      ...secureServingOptions(values),
    },
    leaderElect: values['leader-elect'] !== false,
    leaseDurationMs: ms(values['leader-elect-lease-duration'], 15_000),
    renewDeadlineMs: ms(values['leader-elect-renew-deadline'], 10_000),
    retryPeriodMs: ms(values['leader-elect-retry-period'], 2_000),
    leaseNamespace: str(values['leader-elect-resource-namespace']) ?? names().namespaces.system,
    leaseName: str(values['leader-elect-resource-name']) ?? names().leases.controllerManager,
    controllers: (values.controllers as string[] | undefined) ?? ['*'],
    controllerStartIntervalMs: ms(values['controller-start-interval'], 0),
    controllerShutdownTimeoutMs: ms(values['controller-shutdown-timeout'], 10_000),
    minResyncPeriodMs: ms(values['min-resync-period'], 12 * 3600_000),
    version,
  };
}
