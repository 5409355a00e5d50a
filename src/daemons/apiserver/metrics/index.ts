/**
 * The API server's metrics, assembled: one registry (upstream's legacy registry) holding the request,
 * storage, audit, authentication and authorization metrics, served at /metrics; and the SLI registry
 * (health checks) served at /metrics/slis. Other modules register theirs on `registry`.
 */
import type {ServerResponse} from 'node:http';
import {MetricsRegistry, loadMetricsOptions, serveMetrics, type MetricsOptionValues} from '../../shared/metrics/index.js';
import {HEALTH_ROOTS, type HealthRegistry} from '../../shared/health/index.js';
import {RequestMetrics} from './request-metrics.js';
import {storageMetrics, type StorageMetrics} from './storage-metrics.js';
import type {AuditMetrics} from '../audit/index.js';
import {EMULATED_KUBERNETES} from '../../../lib/version.js';

export {RequestMetrics, requestLabels, REQUEST_DURATION_BUCKETS} from './request-metrics.js';
export {storageMetrics, type StorageMetrics, type PollingOptions} from './storage-metrics.js';

export const METRICS_PATHS = new Set(['/metrics', '/metrics/slis']);

export interface ApiServerMetrics {
  registry: MetricsRegistry;
  requests: RequestMetrics;
  storage: StorageMetrics;
  audit: AuditMetrics;
  /** Counts an authentication attempt (authentication_attempts): refused credentials are a failure, an authenticator that could not answer an error. */
  authenticated(result: 'success' | 'failure' | 'error'): void;
  /** Counts an authorization decision (authorization_attempts_total). */
  authorized(result: 'allowed' | 'denied' | 'no-opinion' | 'error'): void;
  /** Serves /metrics or /metrics/slis. */
  serve(path: string, res: ServerResponse): Promise<void>;
}

/** Builds the registries from the metric options; a bad option or manifest is an Error naming it. */
export async function createApiServerMetrics(options: {
  values: MetricsOptionValues;
  inFlight: () => {readOnly: number; mutating: number};
  resolveKey: (key: string) => {group: string; resource: string} | undefined;
  health: HealthRegistry;
}): Promise<ApiServerMetrics> {
  const metricsOptions = await loadMetricsOptions(options.values, EMULATED_KUBERNETES);
  const registry = new MetricsRegistry(metricsOptions, EMULATED_KUBERNETES);
  registry.collectProcessMetrics();
  const requests = new RequestMetrics(registry, {inFlight: options.inFlight});
  const storage = storageMetrics(registry, options.resolveKey);
  const auditEvents = registry.counter({name: 'apiserver_audit_event_total', help: 'Counter of audit events generated and sent to the audit backend.'});
  const auditErrors = registry.counter({name: 'apiserver_audit_error_total', help: 'Counter of audit events that failed to be audited properly. Plugin identifies the plugin affected by the error.', labelNames: ['plugin']});
  const authentications = registry.counter({name: 'authentication_attempts', help: 'Counter of authenticated attempts.', labelNames: ['result']});
  const authorizations = registry.counter({
    name: 'authorization_attempts_total',
    help: "Counter of authorization attempts broken down by result. It can be either 'allowed', 'denied', 'no-opinion' or 'error'.",
    labelNames: ['result'],
  });

  // The SLI registry: each health check's latest state, and how often it ran by status.
  const slis = new MetricsRegistry(metricsOptions, EMULATED_KUBERNETES, false);
  const healthcheck = slis.gauge({name: 'kubernetes_healthcheck', help: 'This metric records the result of a single healthcheck.', labelNames: ['name', 'type'], stabilityLevel: 'STABLE'});
  const healthchecks = slis.counter({name: 'kubernetes_healthchecks_total', help: 'This metric records the results of all healthcheck.', labelNames: ['name', 'status', 'type'], stabilityLevel: 'STABLE'});

  return {
    registry,
    requests,
    storage,
    audit: {event: () => auditEvents.inc(), error: (plugin, n) => auditErrors.inc({plugin}, n)},
    authenticated: (result) => authentications.inc({result}),
    authorized: (result) => authorizations.inc({result}),
    async serve(path, res) {
      if (path === '/metrics/slis') {
        for (const root of HEALTH_ROOTS) {
          const result = await options.health.evaluate(root);
          for (const outcome of result.outcomes) {
            const ok = outcome.state !== 'failed';
            healthcheck.set({name: outcome.name, type: root}, ok ? 1 : 0);
            healthchecks.inc({name: outcome.name, status: ok ? 'success' : 'error', type: root});
          }
        }
        return serveMetrics(res, slis);
      }
      return serveMetrics(res, registry);
    },
  };
}
