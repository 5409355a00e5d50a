/**
 * The API server's /metrics and /metrics/slis, read by real scrapes over HTTPS: upstream's request,
 * storage, audit, authentication and authorization metrics; access behind authorization (the
 * system:monitoring group of the bootstrap policy); and the metric options: --disabled-metrics,
 * --allow-metric-labels (and its manifest, which the flag overrides), --show-hidden-metrics-for-version.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {startApiServer, configMap, sleep, type InProcessServer, type ApiClient} from '../helpers/apiserver.js';
import {auditConfig} from '../../src/daemons/apiserver/config.js';
import {names} from '../../src/api/names.js';

/** The value of the sample `name{labels}` (labels a subset of the sample's), undefined when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const match = /^[^{ ]+(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const have = Object.fromEntries([...(match[1] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total = (total ?? 0) + Number(match[2]);
  }
  return total;
}

const scrape = async (client: ApiClient, path = '/metrics') => {
  const res = await client.request('GET', path, {headers: {accept: 'text/plain'}});
  expect(res.status).toBe(200);
  return res.text;
};

const POLICY = () => [`apiVersion: ${names().groups.audit}/v1`, 'kind: Policy', 'rules:', '- level: Metadata', ''].join('\n');

describe('API server /metrics', () => {
  let dir: string;
  let s: InProcessServer;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-metrics-'));
    writeFileSync(join(dir, 'tokens.csv'), 'monitor-token,monitor,1,system:monitoring\nnobody-token,nobody,2\n');
    writeFileSync(join(dir, 'policy.yaml'), POLICY());
    // The manifest allows only configmaps; the flag (which wins, as upstream) allows configmaps and namespaces.
    writeFileSync(join(dir, 'allow.yaml'), "apiserver_request_total,resource: 'configmaps'\n");
    s = await startApiServer({
      engine: 'sqlite',
      config: {
        authorizationModes: ['RBAC'],
        tokenAuthFile: join(dir, 'tokens.csv'),
        audit: auditConfig({'audit-policy-file': join(dir, 'policy.yaml'), 'audit-log-path': join(dir, 'audit.log')}),
        metrics: {
          disabledMetrics: ['apiserver_longrunning_requests', 'process_open_fds'],
          allowMetricLabels: {'apiserver_request_total,resource': 'configmaps,namespaces'},
          allowMetricLabelsManifest: join(dir, 'allow.yaml'),
        },
        kvstoreCountMetricPollPeriodMs: 100,
        kvstoreDbMetricPollIntervalMs: 100,
      },
    });
    for (let i = 0; i < 3; i++) expect((await s.client.post('/api/v1/namespaces/default/configmaps', configMap(`cm-${i}`))).status).toBe(201);
    expect((await s.client.request('GET', '/api/v1/namespaces/default/configmaps/cm-0')).status).toBe(200);
    expect((await s.client.request('GET', '/api/v1/namespaces/default/configmaps')).status).toBe(200);
    expect((await s.client.request('GET', '/api/v1/namespaces/default/configmaps/absent')).status).toBe(404);
    expect((await s.client.request('GET', '/api/v1/namespaces/default/secrets')).status).toBe(200);
  }, 30_000);

  afterAll(async () => {
    await s?.stop();
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it('is served only to users allowed to get /metrics (system:monitoring)', async () => {
    const denied = await s.client.as({clientCert: false, token: 'nobody-token'}).request('GET', '/metrics');
    expect(denied.status).toBe(403);
    expect(denied.body.message).toContain('"/metrics"');
    const text = await scrape(s.client.as({clientCert: false, token: 'monitor-token'}));
    expect(text).toContain('# TYPE apiserver_request_total counter');
    expect((await s.client.as({clientCert: false, token: 'monitor-token'}).request('GET', '/metrics/slis')).status).toBe(200);
  });

  it('counts and times requests with upstream labels', async () => {
    const text = await scrape(s.client);
    const base = {group: '', version: 'v1', resource: 'configmaps', component: 'apiserver', dry_run: ''};
    expect(sample(text, 'apiserver_request_total', {...base, verb: 'POST', scope: 'resource', code: '201'})).toBe(3);
    expect(sample(text, 'apiserver_request_total', {...base, verb: 'GET', scope: 'resource', code: '200'})).toBe(1);
    expect(sample(text, 'apiserver_request_total', {...base, verb: 'GET', scope: 'resource', code: '404'})).toBe(1);
    expect(sample(text, 'apiserver_request_total', {...base, verb: 'LIST', scope: 'namespace', code: '200'})).toBe(1);
    expect(sample(text, 'apiserver_request_duration_seconds_count', {...base, verb: 'POST', scope: 'resource'})).toBe(3);
    // Upstream's buckets, from 5ms to 60s.
    expect(text).toMatch(/apiserver_request_duration_seconds_bucket\{[^}]*le="0.005"/);
    expect(text).toMatch(/apiserver_request_duration_seconds_bucket\{[^}]*le="60"/);
    expect(text).toMatch(/# HELP apiserver_request_total \[STABLE\] Counter of apiserver requests/);
    // This very scrape is a read-only request in flight.
    expect(sample(text, 'apiserver_current_inflight_requests', {request_kind: 'readOnly'})).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'apiserver_request_total', {verb: 'GET', subresource: '/metrics', scope: ''})).toBeGreaterThanOrEqual(1);
  });

  it('records values outside --allow-metric-labels as "unexpected" (the flag overrides the manifest)', async () => {
    const text = await scrape(s.client);
    expect(sample(text, 'apiserver_request_total', {resource: 'secrets'})).toBeUndefined();
    expect(sample(text, 'apiserver_request_total', {resource: 'unexpected', verb: 'LIST'})).toBeGreaterThanOrEqual(1);
    // namespaces is in the flag's list only: the bootstrap controller's reads of namespaces keep their name.
    expect(sample(text, 'apiserver_request_total', {resource: 'namespaces'})).toBeUndefined();
    await s.client.request('GET', '/api/v1/namespaces');
    expect(sample(await scrape(s.client), 'apiserver_request_total', {resource: 'namespaces', verb: 'LIST'})).toBe(1);
    expect(sample(text, 'cardinality_enforcement_unexpected_categorizations_total')).toBeGreaterThanOrEqual(1);
  });

  it('leaves --disabled-metrics and hidden deprecated metrics out', async () => {
    const text = await scrape(s.client);
    expect(text).not.toContain('apiserver_longrunning_requests');
    expect(text).not.toContain('process_open_fds');
    expect(sample(text, 'disabled_metrics_total')).toBe(2);
    // apiserver_storage_objects was deprecated in 1.34: hidden in the release orch emulates.
    expect(text).not.toContain('apiserver_storage_objects');
    expect(sample(text, 'hidden_metrics_total')).toBeGreaterThanOrEqual(1);
  });

  it("reports the process's memory, CPU and runtime as upstream's process and Go collectors do", async () => {
    global.gc?.();
    const text = await scrape(s.client);
    // The server runs in this process: its figures are this process's.
    const rss = sample(text, 'process_resident_memory_bytes')!;
    const own = process.memoryUsage().rss;
    expect(rss).toBeGreaterThan(own / 2);
    expect(rss).toBeLessThan(own * 2);
    expect(sample(text, 'process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(Math.abs(sample(text, 'process_start_time_seconds')! - (Date.now() - process.uptime() * 1000) / 1000)).toBeLessThan(5);
    expect(sample(text, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(1e6);
    expect(sample(text, 'nodejs_external_memory_bytes')).toBeGreaterThan(0);
    // Collections timed in buckets fine enough for a watch delivery's 100 ms.
    expect(text).toMatch(/^nodejs_gc_duration_seconds_bucket\{le="0\.05",kind="\w+"\} \d+$/m);
  });

  it('reports the stored objects, the database size and each storage request', async () => {
    await s.client.post('/api/v1/namespaces/default/configmaps', configMap('cm-late'));
    // Every namespace's (orch-system holds one of the server's own).
    const stored = (await s.client.request('GET', '/api/v1/configmaps')).body.items.length;
    expect(stored).toBeGreaterThanOrEqual(4);
    let text = '';
    for (let i = 0; i < 50 && sample(text, 'apiserver_resource_objects', {group: '', resource: 'configmaps'}) !== stored; i++) {
      await sleep(50);
      text = await scrape(s.client);
    }
    expect(sample(text, 'apiserver_resource_objects', {group: '', resource: 'configmaps'})).toBe(stored);
    expect(sample(text, 'apiserver_storage_size_bytes', {storage_cluster_id: 'sqlite-0'})).toBeGreaterThan(4096);
    expect(sample(text, 'etcd_request_duration_seconds_count', {operation: 'create', group: '', resource: 'configmaps'})).toBe(stored);
    expect(sample(text, 'etcd_requests_total', {operation: 'create', group: '', resource: 'configmaps'})).toBe(stored);
  });

  it('counts audit events, authentication attempts and authorization decisions', async () => {
    expect((await s.client.as({clientCert: false, token: 'wrong'}).request('GET', '/api/v1/namespaces')).status).toBe(401);
    const text = await scrape(s.client);
    expect(sample(text, 'apiserver_audit_event_total')).toBeGreaterThanOrEqual(10);
    expect(sample(text, 'authentication_attempts', {result: 'error'})).toBe(1);
    expect(sample(text, 'authentication_attempts', {result: 'success'})).toBeGreaterThanOrEqual(8);
    expect(sample(text, 'authorization_attempts_total', {result: 'allowed'})).toBeGreaterThanOrEqual(8);
  });

  it('serves the health checks as SLI metrics at /metrics/slis', async () => {
    const text = await scrape(s.client, '/metrics/slis');
    expect(sample(text, 'kubernetes_healthcheck', {name: 'ping', type: 'livez'})).toBe(1);
    expect(sample(text, 'kubernetes_healthchecks_total', {name: 'ping', type: 'readyz', status: 'success'})).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('apiserver_request_total');
    expect(text).not.toContain('disabled_metrics_total');
  });
});

describe('metric options', () => {
  it('--show-hidden-metrics-for-version 1.35 brings back the metrics deprecated in 1.35 and before', async () => {
    const s = await startApiServer({engine: 'sqlite', config: {metrics: {showHiddenMetricsForVersion: '1.35'}, kvstoreCountMetricPollPeriodMs: 100}});
    try {
      let text = '';
      for (let i = 0; i < 50 && sample(text, 'apiserver_storage_objects', {resource: 'namespaces'}) === undefined; i++) {
        await sleep(50);
        text = await scrape(s.client);
      }
      expect(sample(text, 'apiserver_storage_objects', {resource: 'namespaces'})).toBeGreaterThanOrEqual(1);
      expect(text).toContain('# HELP apiserver_storage_objects [STABLE] (Deprecated since 1.34.0)');
      expect(sample(text, 'hidden_metrics_total')).toBe(0);
    } finally {
      await s.stop();
    }
  }, 20_000);

  it('refuses to start with a bad option, naming it', async () => {
    await expect(startApiServer({engine: 'sqlite', config: {metrics: {showHiddenMetricsForVersion: '1.30'}}})).rejects.toThrow(
      "--show-hidden-metrics-for-version must be omitted or have the value '1.35'. Only the previous minor version is allowed",
    );
    await expect(startApiServer({engine: 'sqlite', config: {metrics: {allowMetricLabels: {'no-label-here': 'a'}}}})).rejects.toThrow('--allow-metric-labels must have a list of kv pair');
    await expect(startApiServer({engine: 'sqlite', config: {metrics: {disabledMetrics: ['bad-name']}}})).rejects.toThrow('--disabled-metrics must be fully qualified metric names');
    await expect(startApiServer({engine: 'sqlite', config: {metrics: {allowMetricLabelsManifest: '/nonexistent/allow.yaml'}}})).rejects.toThrow('--allow-metric-labels-manifest: failed to read allow list manifest /nonexistent/allow.yaml');
  }, 20_000);
});
