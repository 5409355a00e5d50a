/**
 * The admission webhook plugins through the admission chain, with real webhook servers over TLS
 * on loopback and the configurations read by a watch of a real SQLite store: a mutating webhook
 * adding a label, a validating one denying with its message, timeouts under both failure policies,
 * reinvocation, v1beta1 reviews, a service reference, kubeconfig credentials per host, and bad
 * answers (malformed review, invalid patch) leaving the object unchanged.
 */
import {afterAll, afterEach, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {builtinResources, type ResourceInfo} from '../../src/api/resources.js';
import {names} from '../../src/api/names.js';
import {SqliteStore} from '../../src/daemons/apiserver/storage/sqlite.js';
import {storeWatch} from '../../src/daemons/apiserver/admission/watch.js';
import {AdmissionChain} from '../../src/daemons/apiserver/admission/chain.js';
import type {AdmissionAttributes, AdmissionPluginContext} from '../../src/daemons/apiserver/admission/interfaces.js';
import {createAdmissionWebhookPlugin, type AdmissionWebhookPlugin} from '../../src/daemons/apiserver/admission/plugins/webhook/plugin.js';
import {resourceKeyPrefix} from '../../src/daemons/apiserver/storage-keys.js';
import type {JsonObject} from '../../src/patch/types.js';
import {generateClientCertificate} from '../../src/daemons/shared/pki/certificates.js';
import {jsonPatch, startWebhook, webhookCa, type TestWebhook, type TestWebhookCa} from '../helpers/admission-webhook-server.js';

const pods = builtinResources().find((r) => r.group === '' && r.plural === 'pods') as ResourceInfo;
const group = () => names().groups.admissionregistration;

let dir: string;
let store: SqliteStore;
let tls: TestWebhookCa;
const objects = new Map<string, JsonObject>();
const plugins: AdmissionWebhookPlugin[] = [];
const webhooks: TestWebhook[] = [];
let configurations = 0;
const logs: string[] = [];

function context(configuration?: JsonObject): AdmissionPluginContext {
  return {
    configuration,
    configurationSource: 'admission.yaml',
    objects: {
      get: async (g, resource, namespace, name) => objects.get(`${g}/${resource}/${namespace}/${name}`),
      list: async () => [],
      create: async (_g, _r, _n, o) => o,
      update: async (_g, _r, _n, o) => o,
    },
    watch: storeWatch(store, '/registry', (e) => logs.push(e.message)),
    clock: {now: () => Date.now()} as AdmissionPluginContext['clock'],
    serverOptions: {},
    resourcesForKind: () => [],
    log: (message, ...kv) => logs.push(`${message} ${kv.join(' ')}`),
  };
}

async function chain(configuration?: JsonObject): Promise<AdmissionChain> {
  const mutating = await createAdmissionWebhookPlugin(context(configuration), true);
  const validating = await createAdmissionWebhookPlugin(context(configuration), false);
  plugins.push(mutating, validating);
  return new AdmissionChain([mutating, validating]);
}

/** Writes a configuration to the store (the plugins see it through their watch) and waits until they do. */
async function configure(kind: 'Mutating' | 'Validating', hooks: JsonObject[]): Promise<string> {
  const name = `config-${++configurations}`;
  const plural = kind === 'Mutating' ? 'mutatingwebhookconfigurations' : 'validatingwebhookconfigurations';
  const object = {apiVersion: `${group()}/v1`, kind: `${kind}WebhookConfiguration`, metadata: {name}, webhooks: hooks};
  await store.create(`${resourceKeyPrefix('/registry', group(), plural)}${name}`, JSON.stringify(object));
  await until(() => plugins.filter((p) => p.name.startsWith(kind)).every((p) => p.source.has(name)));
  return name;
}

async function unconfigureAll(): Promise<void> {
  for (const plural of ['mutatingwebhookconfigurations', 'validatingwebhookconfigurations']) {
    const prefix = resourceKeyPrefix('/registry', group(), plural);
    for (const item of (await store.list(prefix)).items) await store.delete(item.key);
  }
  await until(() => plugins.every((p) => p.source.webhooks().length === 0));
}

/** Polls a condition the watch makes true (bounded). */
async function until(condition: () => boolean): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 5000) throw new Error('the plugins did not see the configuration change within 5 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const hook = (name: string, url: string, extra: JsonObject = {}): JsonObject => ({
  name,
  clientConfig: {url, caBundle: tls.caBundle},
  rules: [{operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*'}],
  sideEffects: 'None',
  admissionReviewVersions: ['v1'],
  failurePolicy: 'Fail',
  matchPolicy: 'Equivalent',
  timeoutSeconds: 10,
  ...extra,
});

interface Recorded {
  warnings: string[];
  annotations: Record<string, string>;
  /** The audit level each annotation asked for (Metadata when none). */
  levels: Record<string, string>;
}

function podAttributes(labels: Record<string, string> = {}, extra: Partial<AdmissionAttributes> = {}): AdmissionAttributes & {recorded: Recorded} {
  const recorded: Recorded = {warnings: [], annotations: {}, levels: {}};
  return {
    operation: 'CREATE', resource: pods, subresource: '', namespace: 'default', name: 'web',
    object: {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'web', namespace: 'default', labels}, spec: {containers: [{name: 'c', image: 'nginx'}]}},
    user: {name: 'alice', groups: ['devs']}, dryRun: false,
    addWarning: (w) => recorded.warnings.push(w),
    addAnnotation: (k, v, level) => {
      recorded.annotations[k] = v;
      recorded.levels[k] = level ?? 'Metadata';
    },
    recorded,
    ...extra,
  };
}

/** Both phases, as the registry runs them around its own validation. */
async function admit(c: AdmissionChain, a: AdmissionAttributes): Promise<void> {
  await c.admit(a);
  await c.validate(a);
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-webhooks-'));
  store = new SqliteStore({path: join(dir, 'kv.sqlite')});
  tls = await webhookCa(['localhost', 'labeler.hooks.svc']);
  objects.set('/namespaces//default', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'default', labels: {env: 'prod'}}});
});

afterEach(async () => {
  await unconfigureAll();
  for (const w of webhooks.splice(0)) await w.close();
});

afterAll(async () => {
  for (const p of plugins) await p.close?.();
  await store.close();
  rmSync(dir, {recursive: true, force: true});
});

async function webhook(handler: Parameters<typeof startWebhook>[1], options?: Parameters<typeof startWebhook>[2]): Promise<TestWebhook> {
  const w = await startWebhook(tls, handler, options);
  webhooks.push(w);
  return w;
}

describe('admission webhooks over TLS', () => {
  let c: AdmissionChain;
  beforeAll(async () => {
    c = await chain();
  });

  it('a mutating webhook adds a label; its warning, audit annotations and the review it got are as upstream', async () => {
    const w = await webhook(() => ({
      response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'add', path: '/metadata/labels/added-by', value: 'webhook'}]), warnings: ['labelled'], auditAnnotations: {decision: 'labelled'}},
    }));
    await configure('Mutating', [hook('labeler.example.com', `${w.url}/mutate`)]);
    const a = podAttributes({app: 'web'});
    await admit(c, a);
    expect(a.object!.metadata).toMatchObject({labels: {app: 'web', 'added-by': 'webhook'}});
    expect(a.recorded.warnings).toEqual(['labelled']);
    expect(a.recorded.annotations['labeler.example.com/decision']).toBe('labelled');
    expect(JSON.parse(a.recorded.annotations[`mutation.webhook.admission.${names().domain}/round_0_index_0`]!)).toMatchObject({webhook: 'labeler.example.com', mutated: true});
    // The patch goes to audit events of level Request and up only.
    const patchKey = `patch.webhook.admission.${names().domain}/round_0_index_0`;
    expect(a.recorded.annotations[patchKey]).toBe(
      `{"configuration":"${a.recorded.annotations[`mutation.webhook.admission.${names().domain}/round_0_index_0`]!.match(/"configuration":"([^"]+)"/)![1]}","webhook":"labeler.example.com","patch":[{"op":"add","path":"/metadata/labels/added-by","value":"webhook"}],"patchType":"JSONPatch"}`,
    );
    expect(a.recorded.levels[patchKey]).toBe('Request');
    const {review, url} = w.received[0]!;
    expect(url).toBe('/mutate?timeout=10s');
    expect(review).toMatchObject({
      apiVersion: `admission.${names().domain}/v1`, kind: 'AdmissionReview',
      request: {
        kind: {group: '', version: 'v1', kind: 'Pod'}, resource: {group: '', version: 'v1', resource: 'pods'},
        requestKind: {group: '', version: 'v1', kind: 'Pod'}, name: 'web', namespace: 'default', operation: 'CREATE',
        userInfo: {username: 'alice', groups: ['devs']}, dryRun: false, oldObject: null, object: {metadata: {labels: {app: 'web'}}},
      },
    });
  });

  it('a validating webhook denies with its message and code; webhooks are called at once', async () => {
    // Each webhook answers only once both have been called (or after 3 s): called one after the
    // other, the first would never see the second arrive.
    let arrived = 0;
    let release: () => void = () => {};
    const both = new Promise<void>((resolve) => (release = resolve));
    const sawBoth: boolean[] = [];
    const meet = async () => {
      if (++arrived === 2) release();
      sawBoth.push(await Promise.race([both.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 3000))]));
    };
    const allow = await webhook(async () => {
      await meet();
      return {response: {allowed: true}};
    });
    const deny = await webhook(async () => {
      await meet();
      return {response: {allowed: false, status: {code: 403, message: 'pods must not be called web'}}};
    });
    await configure('Validating', [hook('allow.example.com', allow.url), hook('deny.example.com', deny.url)]);
    await expect(admit(c, podAttributes())).rejects.toMatchObject({
      status: {code: 403, status: 'Failure', message: 'admission webhook "deny.example.com" denied the request: pods must not be called web'},
    });
    expect(sawBoth).toEqual([true, true]);
  });

  it('a webhook that does not answer in timeoutSeconds: refused under Fail, skipped under Ignore (with the failed-open annotation)', async () => {
    const w = await webhook(() => 'hang');
    await configure('Validating', [hook('slow.example.com', w.url, {timeoutSeconds: 1})]);
    const t0 = Date.now();
    await expect(admit(c, podAttributes())).rejects.toMatchObject({
      status: {code: 500, reason: 'InternalError', message: `Internal error occurred: failed calling webhook "slow.example.com": failed to call webhook: Post "${w.url}/?timeout=1s": context deadline exceeded`},
    });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    await unconfigureAll();
    await configure('Mutating', [hook('slow.example.com', w.url, {timeoutSeconds: 1, failurePolicy: 'Ignore'})]);
    const a = podAttributes({app: 'web'});
    await admit(c, a);
    expect(a.object!.metadata).toMatchObject({labels: {app: 'web'}});
    expect(a.recorded.annotations[`failed-open.mutation.webhook.admission.${names().domain}/round_0_index_0`]).toBe('slow.example.com');
  });

  it('reinvocationPolicy IfNeeded: a webhook is called again once a later webhook changed the object', async () => {
    const seen: string[][] = [];
    const first = await webhook((review) => {
      seen.push(Object.keys(review.request.object.metadata.labels ?? {}).sort());
      const labels = review.request.object.metadata.labels ?? {};
      if (labels.first) return {response: {allowed: true}};
      return {response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'add', path: '/metadata/labels/first', value: 'yes'}])}};
    });
    const second = await webhook(() => ({response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'add', path: '/metadata/labels/second', value: 'yes'}])}}));
    await configure('Mutating', [hook('a-first.example.com', first.url, {reinvocationPolicy: 'IfNeeded'}), hook('b-second.example.com', second.url)]);
    const a = podAttributes({app: 'web'});
    await admit(c, a);
    expect(seen).toEqual([['app'], ['app', 'first', 'second']]);
    expect(second.received).toHaveLength(1);
    expect(a.object!.metadata).toMatchObject({labels: {app: 'web', first: 'yes', second: 'yes'}});
  });

  it('AdmissionReview v1beta1 for a webhook that only accepts it; a service reference goes to its endpoint', async () => {
    const w = await webhook((review) => ({
      apiVersion: review.apiVersion,
      response: {allowed: true, patch: jsonPatch([{op: 'add', path: '/metadata/labels/beta', value: 'yes'}])},
    }));
    objects.set('/services/hooks/labeler', {apiVersion: 'v1', kind: 'Service', metadata: {name: 'labeler', namespace: 'hooks'}, spec: {ports: [{name: 'https', port: 443}]}});
    objects.set('/endpoints/hooks/labeler', {apiVersion: 'v1', kind: 'Endpoints', metadata: {name: 'labeler'}, subsets: [{addresses: [{ip: '127.0.0.1'}], ports: [{name: 'https', port: w.port}]}]});
    await configure('Mutating', [hook('beta.example.com', '', {clientConfig: {service: {namespace: 'hooks', name: 'labeler', path: '/beta', port: 443}, caBundle: tls.caBundle}, admissionReviewVersions: ['v1beta1']})]);
    const a = podAttributes();
    await admit(c, a);
    expect(a.object!.metadata).toMatchObject({labels: {beta: 'yes'}});
    expect(w.received[0]!.review.apiVersion).toBe(`admission.${names().domain}/v1beta1`);
    expect(w.received[0]!.url).toBe('/beta?timeout=10s');
  });

  it('a webhook whose certificate the caBundle does not trust fails the call', async () => {
    const other = await webhookCa();
    const w = await webhook(() => ({response: {allowed: true}}));
    await configure('Validating', [hook('untrusted.example.com', w.url, {clientConfig: {url: w.url, caBundle: other.caBundle}})]);
    await expect(admit(c, podAttributes())).rejects.toMatchObject({status: {code: 500, message: expect.stringContaining('failed calling webhook "untrusted.example.com": failed to call webhook: Post')}});
  });

  it('namespace and object selectors leave out what they do not select', async () => {
    const w = await webhook(() => ({response: {allowed: false, status: {code: 403, message: 'no'}}}));
    await configure('Validating', [
      hook('ns.example.com', w.url, {namespaceSelector: {matchLabels: {env: 'dev'}}}),
      hook('obj.example.com', w.url, {objectSelector: {matchLabels: {checked: 'true'}}}),
    ]);
    await admit(c, podAttributes());
    expect(w.received).toHaveLength(0);
    await expect(admit(c, podAttributes({checked: 'true'}))).rejects.toMatchObject({status: {code: 403}});
  });

  it('dry run: a webhook with side effects NoneOnDryRun is called with dryRun true; one with side effects refuses the dry run', async () => {
    const w = await webhook(() => ({response: {allowed: true}}));
    await configure('Validating', [hook('dry.example.com', w.url, {sideEffects: 'NoneOnDryRun'})]);
    await admit(c, podAttributes({}, {dryRun: true}));
    expect(w.received[0]!.review.request.dryRun).toBe(true);
    await unconfigureAll();
    // v1 only accepts None and NoneOnDryRun; a configuration stored by an older version may say Some.
    await configure('Mutating', [hook('effects.example.com', w.url, {sideEffects: 'Some'})]);
    await expect(admit(c, podAttributes({}, {dryRun: true}))).rejects.toMatchObject({
      status: {code: 400, reason: 'BadRequest', message: 'admission webhook "effects.example.com" does not support dry run'},
    });
    expect(w.received).toHaveLength(1);
  });
});

describe('DELETE', () => {
  let c: AdmissionChain;
  beforeAll(async () => {
    c = await chain();
  });

  it('sends the old object and the options; a patch on a delete is refused as upstream', async () => {
    const w = await webhook(() => ({response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'add', path: '/metadata/labels/x', value: 'y'}])}}));
    await configure('Mutating', [hook('deleter.example.com', w.url, {rules: [{operations: ['DELETE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: '*'}]})]);
    const old = podAttributes({app: 'web'}).object!;
    const a = podAttributes({}, {operation: 'DELETE', object: undefined, oldObject: old, operationOptions: {kind: 'DeleteOptions', apiVersion: 'meta.k8s.io/v1', gracePeriodSeconds: 0}});
    await expect(admit(c, a)).rejects.toMatchObject({
      status: {code: 500, message: 'Internal error occurred: admission webhook "deleter.example.com" attempted to modify the object, which is not supported for this operation'},
    });
    expect(w.received[0]!.review.request).toMatchObject({operation: 'DELETE', object: null, oldObject: {metadata: {name: 'web'}}, options: {kind: 'DeleteOptions', gracePeriodSeconds: 0}});
  });
});

describe('bad answers leave the object unchanged', () => {
  let c: AdmissionChain;
  beforeAll(async () => {
    c = await chain();
  });

  it.each<[string, unknown, string]>([
    ['a malformed review (not JSON)', {raw: 'this is not json'}, 'failed calling webhook "bad.example.com": failed to call webhook: Unexpected token'],
    ['a review without a response', {raw: JSON.stringify({apiVersion: `admission.${names().domain}/v1`, kind: 'AdmissionReview'})}, 'failed calling webhook "bad.example.com": received invalid webhook response: webhook response was absent'],
    ['a patch that is not JSON', {response: {allowed: true, patchType: 'JSONPatch', patch: Buffer.from('{{').toString('base64')}}, 'failed calling webhook "bad.example.com": received undecodable patch in webhook response'],
    ['a patch that does not apply', {response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'replace', path: '/spec/nothing/here', value: 1}])}}, 'Internal error occurred: replace operation does not apply: doc is missing path: /spec/nothing/here: missing value'],
    ['a server error', {raw: 'boom', status: 500}, 'failed to call webhook: an error on the server ("boom") has prevented the request from succeeding'],
  ])('%s', async (_name, answer, message) => {
    const w = await webhook(() => answer as never);
    await configure('Mutating', [hook('bad.example.com', w.url)]);
    const a = podAttributes({app: 'web'});
    const before = structuredClone(a.object);
    await expect(admit(c, a)).rejects.toMatchObject({status: {code: 500, message: expect.stringContaining(message)}});
    expect(a.object).toEqual(before);
  });

  it('the same failures under failurePolicy Ignore let the request through untouched, except a patch that does not apply', async () => {
    const garbage = await webhook(() => ({raw: 'garbage'}));
    await configure('Mutating', [hook('bad.example.com', garbage.url, {failurePolicy: 'Ignore'})]);
    const a = podAttributes({app: 'web'});
    await admit(c, a);
    expect(a.object!.metadata).toMatchObject({labels: {app: 'web'}});
    await unconfigureAll();
    // The webhook did answer: its patch failing to apply is the server's error, which no policy ignores (as upstream).
    const badPatch = await webhook(() => ({response: {allowed: true, patchType: 'JSONPatch', patch: jsonPatch([{op: 'remove', path: '/nope'}])}}));
    await configure('Mutating', [hook('bad.example.com', badPatch.url, {failurePolicy: 'Ignore'})]);
    await expect(admit(c, podAttributes())).rejects.toMatchObject({status: {code: 500}});
  });
});

describe('credentials from the plugin configuration', () => {
  it('sends each webhook host its kubeconfig user: a bearer token to the host named exactly, a client certificate to the others ("*")', async () => {
    const withToken = await webhook(() => ({response: {allowed: true}}));
    const withCertificate = await webhook(() => ({response: {allowed: true}}), {requestCert: true});
    const client = await generateClientCertificate(tls.ca, {user: 'webhook-caller', groups: []});
    const kubeconfig = join(dir, 'webhook-kubeconfig.yaml');
    writeFileSync(kubeconfig, [
      'apiVersion: v1',
      'kind: Config',
      'users:',
      `- name: "127.0.0.1:${withToken.port}"`,
      '  user: {token: secret-token}',
      '- name: "*"',
      `  user: {client-certificate-data: ${Buffer.from(client.certPem).toString('base64')}, client-key-data: ${Buffer.from(client.keyPem).toString('base64')}}`,
    ].join('\n'));
    const c = await chain({apiVersion: `apiserver.config.${names().domain}/v1`, kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig});
    await configure('Validating', [hook('token.example.com', withToken.url), hook('cert.example.com', withCertificate.url)]);
    await admit(c, podAttributes());
    expect(withToken.received[0]!.headers.authorization).toBe('Bearer secret-token');
    expect(withToken.received[0]!.peerCn).toBeUndefined();
    expect(withCertificate.received[0]!.headers.authorization).toBeUndefined();
    expect(withCertificate.received[0]!.peerCn).toBe('webhook-caller');
  });

  it('a relative kubeConfigFile stops the start with a message naming the plugin', async () => {
    await expect(createAdmissionWebhookPlugin(context({kubeConfigFile: 'webhooks/kubeconfig'}), true)).rejects.toThrow(
      'admission.yaml: plugin MutatingAdmissionWebhook: kubeConfigFile: Invalid value: "webhooks/kubeconfig": must be an absolute file path',
    );
  });

  it('a kubeConfigFile that cannot be read stops the start', async () => {
    await expect(createAdmissionWebhookPlugin(context({kubeConfigFile: join(dir, 'missing.yaml')}), false)).rejects.toThrow(/plugin ValidatingAdmissionWebhook: kubeConfigFile .*missing\.yaml: ENOENT/);
  });
});
