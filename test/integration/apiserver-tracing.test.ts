/**
 * --tracing-config-file: spans exported over OTLP/gRPC to a small receiver on 127.0.0.1 (the test
 * decodes the protobuf itself). Request spans named as upstream, a privileged caller's traceparent
 * joined (parent-based sampling follows its sampled flag), another user's trace only linked, store
 * requests as child spans, the trace context sent on to an admission webhook; bad files refused.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {randomBytes} from 'node:crypto';
import {startApiServer, configMap, sleep, type InProcessServer} from '../helpers/apiserver.js';
import {startOtlpReceiver, type OtlpReceiver, type ReceivedSpan} from '../helpers/otlp-receiver.js';
import {startWebhook, webhookCa, type TestWebhook} from '../helpers/admission-webhook-server.js';
import {names} from '../../src/api/names.js';

const CM_CREATE = 'POST /api/v1/namespaces/{:namespace}/configmaps';
const tracingConfig = (endpoint: string, rate: number) =>
  `apiVersion: apiserver.config.${names().domain}/v1\nkind: TracingConfiguration\nendpoint: ${endpoint}\nsamplingRatePerMillion: ${rate}\n`;

async function spansFor(receiver: OtlpReceiver, match: (s: ReceivedSpan) => boolean, timeoutMs = 10_000): Promise<ReceivedSpan[]> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const found = receiver.spans.filter(match);
    if (found.length) return found;
    await sleep(100);
  }
  return [];
}

describe('API server tracing', () => {
  let dir: string;
  let receiver: OtlpReceiver;
  let s: InProcessServer;
  let hook: TestWebhook;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-tracing-'));
    receiver = await startOtlpReceiver();
    writeFileSync(join(dir, 'tracing.yaml'), tracingConfig(receiver.endpoint, 1_000_000));
    writeFileSync(join(dir, 'tokens.csv'), 'user-token,plain-user,1\n');
    s = await startApiServer({engine: 'sqlite', config: {tracingConfigFile: join(dir, 'tracing.yaml'), tokenAuthFile: join(dir, 'tokens.csv')}});
  }, 30_000);

  afterAll(async () => {
    await s?.stop();
    await hook?.close();
    await receiver?.close();
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it("joins a privileged caller's trace: request span, then a store span beneath it", async () => {
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const res = await s.client.post('/api/v1/namespaces/default/configmaps', configMap('traced'), {headers: {traceparent: `00-${traceId}-${parent}-01`}});
    expect(res.status).toBe(201);
    const [span] = await spansFor(receiver, (x) => x.traceId === traceId && x.name === CM_CREATE);
    expect(span).toBeDefined();
    expect(span!.parentSpanId).toBe(parent);
    expect(span!.kind).toBe(2); // SERVER
    expect(span!.serviceName).toBe('apiserver');
    expect(span!.attributes['http.response.status_code']).toBe(201);
    expect(span!.attributes['audit-id']).toBe(res.headers['audit-id']);
    const [store] = await spansFor(receiver, (x) => x.traceId === traceId && x.name === 'Create etcd3');
    expect(store?.parentSpanId).toBe(span!.spanId);
    expect(store?.attributes.key).toMatch(/\/configmaps\/default\/traced$/);
  });

  it("follows the caller's sampling decision: an unsampled traceparent makes no span", async () => {
    const traceId = randomBytes(16).toString('hex');
    expect((await s.client.request('GET', '/api/v1/namespaces/default/configmaps/traced', {headers: {traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-00`}})).status).toBe(200);
    // A sampled request after it: once its span is exported, the unsampled one would have been too.
    const marker = randomBytes(16).toString('hex');
    await s.client.request('GET', '/api/v1/namespaces/default/configmaps/traced', {headers: {traceparent: `00-${marker}-${randomBytes(8).toString('hex')}-01`}});
    expect(await spansFor(receiver, (x) => x.traceId === marker)).not.toHaveLength(0);
    expect(receiver.spans.filter((x) => x.traceId === traceId)).toHaveLength(0);
  });

  it("only links another user's trace, and names non-resource requests by their method", async () => {
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const res = await s.client.as({clientCert: false, token: 'user-token'}).request('GET', '/version', {headers: {traceparent: `00-${traceId}-${parent}-01`}});
    expect(res.status).toBe(200);
    const [span] = await spansFor(receiver, (x) => x.links.some((l) => l.traceId === traceId));
    expect(span).toBeDefined();
    expect(span!.name).toBe('GET');
    expect(span!.traceId).not.toBe(traceId);
    expect(span!.parentSpanId).toBe('');
    expect(span!.links).toEqual([{traceId, spanId: parent}]);
  });

  it('sends the trace context on to admission webhooks', async () => {
    const tls = await webhookCa();
    hook = await startWebhook(tls, () => ({response: {allowed: true}}));
    const created = await s.client.post(`/apis/${names().groups.admissionregistration}/v1/validatingwebhookconfigurations`, {
      apiVersion: `${names().groups.admissionregistration}/v1`,
      kind: 'ValidatingWebhookConfiguration',
      metadata: {name: 'traced'},
      webhooks: [{
        name: 'traced.example.com',
        clientConfig: {url: `https://localhost:${hook.port}/validate`, caBundle: tls.caBundle},
        rules: [{operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      }],
    });
    expect(created.status).toBe(201);
    const traceId = randomBytes(16).toString('hex');
    for (let i = 0; i < 100 && !hook.received.some((r) => String(r.headers.traceparent ?? '').includes(traceId)); i++) {
      await s.client.post('/api/v1/namespaces/default/configmaps', configMap(`hooked-${i}`), {headers: {traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01`}});
      await sleep(50);
    }
    const seen = hook.received.find((r) => String(r.headers.traceparent ?? '').includes(traceId));
    expect(seen).toBeDefined();
    // The webhook's parent is the API server's request span of that trace.
    const spanId = String(seen!.headers.traceparent).split('-')[2];
    const [requestSpan] = await spansFor(receiver, (x) => x.traceId === traceId && x.spanId === spanId);
    expect(requestSpan?.name).toBe(CM_CREATE);
  }, 20_000);
});

describe('--tracing-config-file errors', () => {
  it.each([
    ['samplingRatePerMillion: -1', 'samplingRatePerMillion: Invalid value: -1: sampling rate must be positive'],
    ['samplingRatePerMillion: 2000000', 'samplingRatePerMillion: Invalid value: 2000000: sampling rate per million must be less than or equal to one million'],
    ['endpoint: 12', 'endpoint: Invalid value: 12: must be a string'],
    ['samplingRate: 5', 'strict decoding error: unknown field "samplingRate"'],
  ])('refuses %s, naming the field', async (line, message) => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-tracing-bad-'));
    try {
      const file = join(dir, 'tracing.yaml');
      writeFileSync(file, `apiVersion: apiserver.config.${names().domain}/v1beta1\nkind: TracingConfiguration\n${line}\n`);
      await expect(startApiServer({engine: 'sqlite', config: {tracingConfigFile: file}})).rejects.toThrow(`--tracing-config-file ${file}: ${message}`);
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  });
});
