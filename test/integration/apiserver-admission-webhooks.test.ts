/**
 * Admission webhooks against the real API server (SQLite), driven with kubectl, the webhooks being
 * small HTTPS servers on loopback: a mutating one adding a label (its warning shown by kubectl), a
 * validating one denying with its message, one that times out under each failure policy, one
 * reinvoked, a dry run, credentials from the plugin's kubeconfig (--admission-control-config-file),
 * and bad answers (a malformed review, a patch that does not apply): a clear error, nothing
 * stored, the server still serving. Each case selects its own objects by an `case` label.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {parse, stringify} from 'yaml';
import {names} from '../../src/api/names.js';
import {auditConfig} from '../../src/daemons/apiserver/config.js';
import type {AuditEvent} from '../../src/daemons/apiserver/audit/event.js';
import type {AdmissionChain} from '../../src/daemons/apiserver/admission/chain.js';
import type {AdmissionWebhookPlugin} from '../../src/daemons/apiserver/admission/plugins/webhook/plugin.js';
import {kubectl, startApiServer, type InProcessServer} from '../helpers/apiserver.js';
import {jsonPatch, startWebhook, webhookCa, type TestWebhook, type TestWebhookCa, type WebhookAnswer} from '../helpers/admission-webhook-server.js';

let dir: string;
let server: InProcessServer;
let tls: TestWebhookCa;
const webhooks: TestWebhook[] = [];
const k = (args: string[], input?: string) => kubectl(server.orchconfigPath, args, {input});

async function webhook(handler: (review: any) => WebhookAnswer | Promise<WebhookAnswer>): Promise<TestWebhook> {
  const w = await startWebhook(tls, handler);
  webhooks.push(w);
  return w;
}

const configMap = (name: string, kase: string) => stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, labels: {case: kase}}, data: {a: 'b'}});

/** A configuration of webhooks, each selecting the config maps labelled `case: <kase>`. */
function configuration(kind: 'Mutating' | 'Validating', name: string, hooks: Array<{name: string; url: string; kase: string} & Record<string, unknown>>): string {
  return stringify({
    apiVersion: `${names().groups.admissionregistration}/v1`,
    kind: `${kind}WebhookConfiguration`,
    metadata: {name},
    webhooks: hooks.map(({name: hookName, url, kase, ...extra}) => ({
      name: hookName,
      clientConfig: {url, caBundle: tls.caBundle},
      rules: [{operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps']}],
      objectSelector: {matchLabels: {case: kase}},
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      ...extra,
    })),
  });
}

/** Applies a webhook configuration and waits until the server's plugin has it (the plugins see configurations through a watch). */
async function apply(yaml: string): Promise<void> {
  const result = await k(['apply', '-f', '-'], yaml);
  expect(result).toMatchObject({code: 0});
  const {kind, metadata} = parse(yaml) as {kind: string; metadata: {name: string}};
  const chain = (server.server as unknown as {admission: AdmissionChain}).admission;
  const plugin = chain.plugins.find((p) => kind.startsWith(p.name.replace('AdmissionWebhook', ''))) as AdmissionWebhookPlugin;
  for (let waited = 0; !plugin.source.has(metadata.name); waited += 20) {
    if (waited > 5000) throw new Error(`the ${plugin.name} plugin did not see ${metadata.name} within 5 s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

let tokenSeen: string | undefined;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-admission-webhooks-'));
  tls = await webhookCa(['localhost', 'hooks.webhooks.svc']);
  // The plugins' configuration: a kubeconfig whose "*" user is a bearer token, sent to every webhook host.
  const kubeconfig = join(dir, 'webhook-kubeconfig.yaml');
  writeFileSync(kubeconfig, stringify({apiVersion: 'v1', kind: 'Config', users: [{name: '*', user: {token: 'admission-token'}}]}));
  const admissionConfig = join(dir, 'admission.yaml');
  const webhookAdmission = {apiVersion: `apiserver.config.${names().domain}/v1`, kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig};
  writeFileSync(admissionConfig, stringify({
    apiVersion: `apiserver.config.${names().domain}/v1`,
    kind: 'AdmissionConfiguration',
    plugins: [{name: 'MutatingAdmissionWebhook', configuration: webhookAdmission}, {name: 'ValidatingAdmissionWebhook', configuration: webhookAdmission}],
  }));
  // Audited at Request level in the namespace "audited", at Metadata elsewhere.
  writeFileSync(join(dir, 'audit-policy.yaml'), stringify({apiVersion: `${names().groups.audit}/v1`, kind: 'Policy', rules: [{level: 'Request', namespaces: ['audited']}, {level: 'Metadata'}]}));
  server = await startApiServer({
    engine: 'sqlite',
    config: {admission: {configFile: admissionConfig}, audit: auditConfig({'audit-policy-file': join(dir, 'audit-policy.yaml'), 'audit-log-path': join(dir, 'audit.log')})},
  });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  for (const w of webhooks) await w.close();
  rmSync(dir, {recursive: true, force: true});
});

describe('admission webhooks with kubectl', () => {
  it('a mutating webhook adds a label; kubectl shows its warning; the webhook got the kubeconfig token', async () => {
    const w = await webhook((review) => {
      return {response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'add', path: '/metadata/labels/added-by', value: 'webhook'}]), warnings: ['labelled by the webhook']}};
    });
    await apply(configuration('Mutating', 'labeler', [{name: 'labeler.example.com', url: w.url, kase: 'label'}]));
    const created = await k(['apply', '-f', '-'], configMap('labelled', 'label'));
    expect(created.code).toBe(0);
    expect(created.stderr).toContain('Warning: labelled by the webhook');
    const labels = await k(['get', 'configmap', 'labelled', '-o', 'jsonpath={.metadata.labels}']);
    expect(JSON.parse(labels.stdout)).toEqual({case: 'label', 'added-by': 'webhook'});
    tokenSeen = w.received[0]!.headers.authorization;
    expect(tokenSeen).toBe('Bearer admission-token');

    // A server-side dry run reaches the webhook (sideEffects None) marked as such, and stores nothing.
    const dry = await k(['apply', '--dry-run=server', '-f', '-'], configMap('dry', 'label'));
    expect(dry.code).toBe(0);
    expect(w.received.at(-1)!.review.request.dryRun).toBe(true);
    expect((await k(['get', 'configmap', 'dry'])).stderr).toContain('NotFound');
  });

  it('a validating webhook denies: kubectl shows its message; nothing is stored', async () => {
    const w = await webhook(() => ({response: {allowed: false, status: {code: 403, message: 'config maps of this case are not allowed'}}}));
    await apply(configuration('Validating', 'denier', [{name: 'deny.example.com', url: w.url, kase: 'deny'}]));
    const result = await k(['apply', '-f', '-'], configMap('denied', 'deny'));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('admission webhook "deny.example.com" denied the request: config maps of this case are not allowed');
    expect((await k(['get', 'configmap', 'denied'])).stderr).toContain('NotFound');
  });

  it('a webhook that times out refuses under failurePolicy Fail and is skipped under Ignore', async () => {
    const w = await webhook(() => 'hang');
    await apply(configuration('Validating', 'hanging', [
      {name: 'hang-fail.example.com', url: w.url, kase: 'timeout-fail', timeoutSeconds: 1, failurePolicy: 'Fail'},
      {name: 'hang-ignore.example.com', url: w.url, kase: 'timeout-ignore', timeoutSeconds: 1, failurePolicy: 'Ignore'},
    ]));
    const refused = await k(['apply', '-f', '-'], configMap('timed-out', 'timeout-fail'));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Internal error occurred: failed calling webhook "hang-fail.example.com": failed to call webhook: Post "${w.url}/?timeout=1s": context deadline exceeded`);
    const ignored = await k(['apply', '-f', '-'], configMap('ignored', 'timeout-ignore'));
    expect(ignored).toMatchObject({code: 0});
    expect((await k(['get', 'configmap', 'ignored', '-o', 'name'])).stdout.trim()).toBe('configmap/ignored');
  });

  it('a webhook with reinvocationPolicy IfNeeded is called again after a later webhook changed the object', async () => {
    const seen: string[][] = [];
    const first = await webhook((review) => {
      const labels = review.request.object.metadata.labels ?? {};
      seen.push(Object.keys(labels).sort());
      return labels.first ? {response: {allowed: true}} : {response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'add', path: '/metadata/labels/first', value: 'yes'}])}};
    });
    const second = await webhook(() => ({response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'add', path: '/metadata/labels/second', value: 'yes'}])}}));
    await apply(configuration('Mutating', 'reinvoked', [
      {name: 'first.example.com', url: first.url, kase: 'reinvoke', reinvocationPolicy: 'IfNeeded'},
      {name: 'second.example.com', url: second.url, kase: 'reinvoke'},
    ]));
    expect(await k(['apply', '-f', '-'], configMap('reinvoked', 'reinvoke'))).toMatchObject({code: 0});
    expect(seen).toEqual([['case'], ['case', 'first', 'second']]);
    const labels = await k(['get', 'configmap', 'reinvoked', '-o', 'jsonpath={.metadata.labels}']);
    expect(JSON.parse(labels.stdout)).toEqual({case: 'reinvoke', first: 'yes', second: 'yes'});
  });
});

describe('audit', () => {
  it("the webhook's audit annotations and the mutation are in the audit event; the patch only at level Request", async () => {
    const w = await webhook(() => ({
      response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'add', path: '/data/added', value: 'yes'}]), auditAnnotations: {verdict: 'patched'}},
    }));
    await apply(configuration('Mutating', 'audited', [{name: 'auditor.example.com', url: w.url, kase: 'audit'}]));
    await k(['create', 'namespace', 'audited']);
    expect(await k(['apply', '-f', '-'], configMap('metadata-level', 'audit'))).toMatchObject({code: 0});
    expect(await k(['apply', '-n', 'audited', '-f', '-'], configMap('request-level', 'audit'))).toMatchObject({code: 0});
    const domain = names().domain;
    const annotationsOf = async (name: string) => {
      for (let waited = 0; ; waited += 100) {
        const events = readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditEvent);
        const event = events.find((e) => e.verb === 'create' && e.objectRef?.name === name && e.stage === 'ResponseComplete');
        if (event) return event.annotations ?? {};
        if (waited > 5000) throw new Error(`no audit event for ${name}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const metadata = await annotationsOf('metadata-level');
    expect(metadata).toMatchObject({'auditor.example.com/verdict': 'patched', [`mutation.webhook.admission.${domain}/round_0_index_0`]: '{"configuration":"audited","webhook":"auditor.example.com","mutated":true}'});
    expect(metadata[`patch.webhook.admission.${domain}/round_0_index_0`]).toBeUndefined();
    const request = await annotationsOf('request-level');
    expect(request[`patch.webhook.admission.${domain}/round_0_index_0`]).toBe(
      '{"configuration":"audited","webhook":"auditor.example.com","patch":[{"op":"add","path":"/data/added","value":"yes"}],"patchType":"JSONPatch"}',
    );
  });
});

describe('matching', () => {
  it('a webhook named by a Service reaches it through its endpoints; matchPolicy Equivalent sends an autoscaling/v1 write as autoscaling/v2', async () => {
    const w = await webhook(() => ({response: {allowed: true, warnings: ['seen by the service webhook']}}));
    await k(['create', 'namespace', 'webhooks']);
    const service = {apiVersion: 'v1', kind: 'Service', metadata: {name: 'hooks', namespace: 'webhooks'}, spec: {ports: [{name: 'https', port: 443}]}};
    const endpoints = {apiVersion: 'v1', kind: 'Endpoints', metadata: {name: 'hooks', namespace: 'webhooks'}, subsets: [{addresses: [{ip: '127.0.0.1'}], ports: [{name: 'https', port: w.port}]}]};
    expect(await k(['apply', '-f', '-'], [stringify(service), stringify(endpoints)].join('---\n'))).toMatchObject({code: 0});
    await apply(stringify({
      apiVersion: `${names().groups.admissionregistration}/v1`,
      kind: 'ValidatingWebhookConfiguration',
      metadata: {name: 'hpa-v2'},
      webhooks: [{
        name: 'hpa.example.com',
        clientConfig: {service: {namespace: 'webhooks', name: 'hooks', path: '/hpa'}, caBundle: tls.caBundle},
        rules: [{operations: ['CREATE'], apiGroups: ['autoscaling'], apiVersions: ['v2'], resources: ['horizontalpodautoscalers']}],
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
      }],
    }));
    const hpa = {
      apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: {name: 'web'},
      spec: {scaleTargetRef: {apiVersion: 'apps/v1', kind: 'Deployment', name: 'web'}, minReplicas: 1, maxReplicas: 3, targetCPUUtilizationPercentage: 70},
    };
    const created = await k(['apply', '-f', '-'], stringify(hpa));
    expect(created).toMatchObject({code: 0});
    expect(created.stderr).toContain('Warning: seen by the service webhook');
    const {review, url} = w.received[0]!;
    expect(url).toBe('/hpa?timeout=10s');
    expect(review.request).toMatchObject({
      kind: {group: 'autoscaling', version: 'v2', kind: 'HorizontalPodAutoscaler'},
      resource: {group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers'},
      requestKind: {group: 'autoscaling', version: 'v1', kind: 'HorizontalPodAutoscaler'},
      object: {apiVersion: 'autoscaling/v2', spec: {metrics: [{type: 'Resource', resource: {name: 'cpu', target: {type: 'Utilization', averageUtilization: 70}}}]}},
    });
  });

  it('a namespace selector calls the webhook only for objects of the namespaces it selects', async () => {
    const w = await webhook(() => ({response: {allowed: false, status: {code: 403, message: 'frozen namespace'}}}));
    await k(['create', 'namespace', 'frozen']);
    await k(['label', 'namespace', 'frozen', 'state=frozen']);
    await apply(configuration('Validating', 'frozen', [{name: 'frozen.example.com', url: w.url, kase: 'frozen', namespaceSelector: {matchLabels: {state: 'frozen'}}}]));
    expect(await k(['apply', '-f', '-'], configMap('thawed', 'frozen'))).toMatchObject({code: 0});
    const refused = await k(['apply', '-n', 'frozen', '-f', '-'], configMap('cold', 'frozen'));
    expect(refused.stderr).toContain('admission webhook "frozen.example.com" denied the request: frozen namespace');
    expect(w.received).toHaveLength(1);
  });
});

describe('bad answers: a clear error, nothing stored, the server still serving', () => {
  it.each<[string, WebhookAnswer, string]>([
    ['a malformed review', {raw: '{"apiVersion": "nonsense"'}, 'failed calling webhook "bad.example.com": failed to call webhook: '],
    ['a review of another kind', {response: {allowed: true}, kind: 'ConversionReview'}, `failed calling webhook "bad.example.com": received invalid webhook response: expected webhook response of admission.${names().domain}/v1, Kind=AdmissionReview, got admission.${names().domain}/v1, Kind=ConversionReview`],
    ['a patch that does not apply', {response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'remove', path: '/data/missing'}])}}, "Internal error occurred: error in remove for path: '/data/missing': Unable to remove nonexistent key: missing: missing value"],
  ])('%s', async (name, answer, message) => {
    const kase = name.replace(/ /g, '-');
    const w = await webhook(() => answer);
    await apply(configuration('Mutating', kase, [{name: 'bad.example.com', url: w.url, kase}]));
    const result = await k(['apply', '-f', '-'], configMap(kase, kase));
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(message);
    expect((await k(['get', 'configmap', kase])).stderr).toContain('NotFound');
    expect(await k(['get', 'namespace', 'default', '-o', 'name'])).toMatchObject({code: 0, stdout: 'namespace/default\n'});
  });
});

describe('a bad webhook configuration', () => {
  it('is refused by the API with the field and the problem (a match condition that does not compile, an http URL)', async () => {
    const bad = configuration('Validating', 'broken', [{name: 'broken.example.com', url: 'http://127.0.0.1:1/', kase: 'broken', matchConditions: [{name: 'c', expression: 'object.metadata.name =='}]}]);
    const result = await k(['apply', '-f', '-'], bad);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`webhooks[0].clientConfig.url: Invalid value: "http://127.0.0.1:1/": 'https' is the only allowed URL scheme`);
    expect(result.stderr).toContain('webhooks[0].matchConditions[0].expression: Invalid value: "object.metadata.name ==": compilation failed: ');
    expect((await k(['get', 'validatingwebhookconfiguration', 'broken'])).stderr).toContain('NotFound');
  });
});

describe('a bad plugin configuration', () => {
  it('stops the start with the plugin and the problem named', async () => {
    const file = join(dir, 'bad-admission.yaml');
    writeFileSync(file, stringify({
      apiVersion: `apiserver.config.${names().domain}/v1`,
      kind: 'AdmissionConfiguration',
      plugins: [{name: 'ValidatingAdmissionWebhook', configuration: {apiVersion: `apiserver.config.${names().domain}/v1`, kind: 'WebhookAdmissionConfiguration', kubeConfigFile: 'relative/kubeconfig'}}],
    }));
    await expect(startApiServer({engine: 'sqlite', config: {admission: {configFile: file}}})).rejects.toThrow(
      /ValidatingAdmissionWebhook: kubeConfigFile: Invalid value: "relative\/kubeconfig": must be an absolute file path/,
    );
  });
});
