/**
 * ResourceQuota admission: what each kind uses (pods with init containers and sidecars, services,
 * claims, object counts), upstream's decision and messages for one write against a namespace's
 * quotas (table), the configuration's errors, and the plugin inside the REST API: the fourth pod
 * refused with upstream's message, usage charged to status.used, concurrent creates never
 * overcharging, a dry run charging nothing, and a stale quota write retried.
 */
import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {RestClient} from '../../src/client/rest-client.js';
import {FakeClock, systemClock} from '../../src/daemons/shared/clock.js';
import {evaluatorFor, podEvaluator, serviceEvaluator, persistentVolumeClaimEvaluator} from '../../src/daemons/shared/quota/evaluators.js';
import {formatResourceList, parseResourceList} from '../../src/daemons/shared/quota/resources.js';
import {checkRequest, quotaState, type LimitedResource, type QuotaRequest} from '../../src/daemons/apiserver/admission/plugins/resource-quota/check.js';
import {parseResourceQuotaConfiguration} from '../../src/daemons/apiserver/admission/plugins/resource-quota/config.js';
import {QuotaChargeQueue, type QuotaAccess} from '../../src/daemons/apiserver/admission/plugins/resource-quota/evaluator.js';
import {ResourceQuotaAdmission, registryQuotaAccess} from '../../src/daemons/apiserver/admission/plugins/resource-quota/index.js';
import type {JsonObject} from '../../src/patch/types.js';
import {restAdmissionObjects} from '../helpers/admission-objects.js';
import {call, startTestApi, type TestApi} from '../helpers/memory-store.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const usage = (list: Record<string, {milli: bigint; format: 'DecimalSI' | 'BinarySI'}>) => formatResourceList(list);

function pod(name: string, containers: JsonObject[], extra: JsonObject = {}): JsonObject {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name, namespace: 'ns'}, spec: {containers, ...extra}};
}
const container = (name: string, requests?: Record<string, string>, limits?: Record<string, string>): JsonObject => ({
  name, image: 'busybox', resources: {...(requests ? {requests} : {}), ...(limits ? {limits} : {})},
});

function quota(name: string, hard: Record<string, string>, used?: Record<string, string>, spec: JsonObject = {}): JsonObject {
  return {
    apiVersion: 'v1', kind: 'ResourceQuota', metadata: {name, namespace: 'ns', resourceVersion: '5'},
    spec: {hard, ...spec}, status: {hard, ...(used ? {used} : {})},
  };
}

const createPod = (object: JsonObject): QuotaRequest => ({operation: 'CREATE', subresource: '', group: '', resource: 'pods', namespace: 'ns', name: String((object.metadata as JsonObject).name), object});

function decide(quotas: JsonObject[], request: QuotaRequest, limited: LimitedResource[] = []): Record<string, string>[] | string {
  try {
    return checkRequest(quotas.map(quotaState), request, evaluatorFor(request.group, request.resource), limited, NOW).map((q) => formatResourceList(q.used));
  } catch (error) {
    return `${(error as {code?: number}).code} ${(error as Error).message}`;
  }
}

describe('what objects use', () => {
  it.each([
    ['one container with requests and limits', pod('p', [container('a', {cpu: '250m', memory: '64Mi'}, {cpu: '500m', memory: '128Mi'})]),
      {'count/pods': '1', cpu: '250m', 'limits.cpu': '500m', 'limits.memory': '128Mi', memory: '64Mi', pods: '1', 'requests.cpu': '250m', 'requests.memory': '64Mi'}],
    ['containers add up, a bigger init container wins', pod('p', [container('a', {cpu: '100m'}), container('b', {cpu: '200m'})], {initContainers: [container('i', {cpu: '1'})]}),
      {'count/pods': '1', cpu: '1', pods: '1', 'requests.cpu': '1'}],
    ['a sidecar runs beside the containers', pod('p', [container('a', {cpu: '100m'})], {initContainers: [{...container('s', {cpu: '50m'}), restartPolicy: 'Always'}]}),
      {'count/pods': '1', cpu: '150m', pods: '1', 'requests.cpu': '150m'}],
    ['limits alone stand for requests', pod('p', [container('a', undefined, {memory: '1Gi'})]),
      {'count/pods': '1', 'limits.memory': '1Gi', memory: '1Gi', pods: '1', 'requests.memory': '1Gi'}],
    ['a succeeded pod counts only as an object', {...pod('p', [container('a', {cpu: '1'})]), status: {phase: 'Succeeded'}}, {'count/pods': '1'}],
    ['a pod past its deletion grace period no longer counts',
      {...pod('p', [container('a', {cpu: '1'})]), metadata: {name: 'p', deletionTimestamp: '2025-12-31T23:59:00Z', deletionGracePeriodSeconds: 30}}, {'count/pods': '1'}],
  ])('pod: %s', (_name, object, expected) => {
    expect(usage(podEvaluator.usage(object, NOW))).toEqual(expected);
  });

  it.each([
    ['ClusterIP', {type: 'ClusterIP', ports: [{port: 80}]}, {'count/services': '1', services: '1', 'services.loadbalancers': '0', 'services.nodeports': '0'}],
    ['NodePort with two ports', {type: 'NodePort', ports: [{port: 80}, {port: 443}]}, {'count/services': '1', services: '1', 'services.loadbalancers': '0', 'services.nodeports': '2'}],
    ['LoadBalancer', {type: 'LoadBalancer', ports: [{port: 80}]}, {'count/services': '1', services: '1', 'services.loadbalancers': '1', 'services.nodeports': '1'}],
  ])('service: %s', (_name, spec, expected) => {
    expect(usage(serviceEvaluator.usage({metadata: {name: 's'}, spec}, NOW))).toEqual(expected);
  });

  it('claim: storage per class, rounded up to whole bytes', () => {
    const claim = {metadata: {name: 'c'}, spec: {storageClassName: 'gold', resources: {requests: {storage: '1500m'}}}};
    const suffix = `.storageclass.${names().groups.storage}/`;
    expect(usage(persistentVolumeClaimEvaluator.usage(claim, NOW))).toEqual({
      'count/persistentvolumeclaims': '1', persistentvolumeclaims: '1', 'requests.storage': '2',
      [`gold${suffix}persistentvolumeclaims`]: '1', [`gold${suffix}requests.storage`]: '2',
    });
  });

  it('other kinds: count/<resource>.<group>, legacy names for configmaps and secrets', () => {
    expect(usage(evaluatorFor('apps', 'deployments').usage({}, NOW))).toEqual({'count/deployments.apps': '1'});
    expect(usage(evaluatorFor('', 'secrets').usage({}, NOW))).toEqual({'count/secrets': '1', secrets: '1'});
  });
});

describe('the admission decision', () => {
  const small = pod('p4', [container('a', {cpu: '100m', memory: '32Mi'}, {cpu: '200m', memory: '64Mi'})]);
  const bestEffort = pod('be', [container('a')]);
  const cases: [string, JsonObject[], QuotaRequest, Record<string, string>[] | string, LimitedResource[]?][] = [
    ['the fourth pod over pods=3', [quota('q', {pods: '3'}, {pods: '3'})], createPod(small),
      '403 pods "p4" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3'],
    ['a pod that fits is charged', [quota('q', {pods: '3', 'requests.cpu': '1'}, {pods: '1', 'requests.cpu': '500m'})], createPod(small),
      [{pods: '2', 'requests.cpu': '600m'}]],
    ['several names over at once, sorted', [quota('q', {'requests.cpu': '150m', 'limits.memory': '100Mi'}, {'requests.cpu': '100m', 'limits.memory': '50Mi'})], createPod(small),
      '403 pods "p4" is forbidden: exceeded quota: q, requested: limits.memory=64Mi,requests.cpu=100m, used: limits.memory=50Mi,requests.cpu=100m, limited: limits.memory=100Mi,requests.cpu=150m'],
    ['a cpu quota needs every container to declare it', [quota('q', {'limits.cpu': '2', 'requests.cpu': '1'}, {'limits.cpu': '0', 'requests.cpu': '0'})],
      createPod(pod('p', [container('a', {cpu: '100m'}), container('b')])),
      '403 pods "p" is forbidden: failed quota: q: must specify limits.cpu for: a,b; requests.cpu for: b'],
    ['a quota without usage yet', [quota('q', {pods: '3'})], createPod(small), '403 pods "p4" is forbidden: status unknown for quota: q, resources: pods'],
    ['a BestEffort quota ignores a pod with requests', [quota('q', {pods: '1'}, {pods: '1'}, {scopes: ['BestEffort']})], createPod(small), [{pods: '1'}]],
    ['a BestEffort quota counts a best-effort pod', [quota('q', {pods: '1'}, {pods: '1'}, {scopes: ['BestEffort']})], createPod(bestEffort),
      '403 pods "be" is forbidden: exceeded quota: q, requested: pods=1, used: pods=1, limited: pods=1'],
    ['Terminating: pods with an active deadline', [quota('q', {pods: '5'}, {pods: '0'}, {scopes: ['Terminating']})],
      createPod(pod('t', [container('a')], {activeDeadlineSeconds: 30})), [{pods: '1'}]],
    ['a PriorityClass selector matches the class', [quota('q', {pods: '5'}, {pods: '2'}, {scopeSelector: {matchExpressions: [{scopeName: 'PriorityClass', operator: 'In', values: ['high']}]}})],
      createPod(pod('h', [container('a')], {priorityClassName: 'high'})), [{pods: '3'}]],
    ['a PriorityClass selector ignores another class', [quota('q', {pods: '5'}, {pods: '2'}, {scopeSelector: {matchExpressions: [{scopeName: 'PriorityClass', operator: 'In', values: ['high']}]}})],
      createPod(pod('l', [container('a')], {priorityClassName: 'low'})), [{pods: '2'}]],
    ['a count/ quota of another kind is not charged by a pod', [quota('q', {'count/configmaps': '1'}, {'count/configmaps': '1'})], createPod(small), [{'count/configmaps': '1'}]],
    ['configmaps count under their legacy name', [quota('q', {configmaps: '2'}, {configmaps: '2'})],
      {operation: 'CREATE', subresource: '', group: '', resource: 'configmaps', namespace: 'ns', name: 'cm', object: {metadata: {name: 'cm'}}},
      '403 configmaps "cm" is forbidden: exceeded quota: q, requested: configmaps=1, used: configmaps=2, limited: configmaps=2'],
    ['a service turning NodePort pays its ports only', [quota('q', {'services.nodeports': '2', services: '5'}, {'services.nodeports': '0', services: '1'})],
      {operation: 'UPDATE', subresource: '', group: '', resource: 'services', namespace: 'ns', name: 's',
        object: {metadata: {name: 's', resourceVersion: '3'}, spec: {type: 'NodePort', ports: [{port: 80}]}},
        oldObject: {metadata: {name: 's', resourceVersion: '3'}, spec: {type: 'ClusterIP', ports: [{port: 80}]}}},
      [{'services.nodeports': '1', services: '1'}]],
    ['limitedResources: no covering quota', [], {operation: 'CREATE', subresource: '', group: '', resource: 'persistentvolumeclaims', namespace: 'ns', name: 'c',
      object: {metadata: {name: 'c'}, spec: {storageClassName: 'gold', resources: {requests: {storage: '1Gi'}}}}},
      `403 persistentvolumeclaims "c" is forbidden: insufficient quota to consume: gold.storageclass.${names().groups.storage}/requests.storage`,
      [{apiGroup: '', resource: 'persistentvolumeclaims', matchContains: [`.storageclass.${names().groups.storage}/requests.storage`], matchScopes: []}]],
    ['limitedResources: a scope without a quota', [], createPod(pod('h', [container('a')], {priorityClassName: 'cluster-services'})),
      '500 insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]',
      [{apiGroup: '', resource: 'pods', matchContains: [], matchScopes: [{scopeName: 'PriorityClass', operator: 'In', values: ['cluster-services']}]}]],
  ];
  // Rest parameters: jest reads a test function of more parameters than the row has as one taking `done`.
  it.each(cases)('%s', (...[, quotas, request, expected, limited]) => {
    expect(decide(quotas, request, limited ?? [])).toEqual(expected);
  });
});

describe('configuration', () => {
  const domain = () => names().domain;
  it('reads limitedResources from the v1 and the older API versions', () => {
    for (const [apiVersion, kind] of [[`apiserver.config.${domain()}/v1`, 'ResourceQuotaConfiguration'], [`resourcequota.admission.${domain()}/v1beta1`, 'Configuration']]) {
      const config = parseResourceQuotaConfiguration({apiVersion, kind, limitedResources: [{resource: 'pods', matchScopes: [{scopeName: 'PriorityClass', operator: 'In', values: ['x']}]}]});
      expect(config.limitedResources).toEqual([{apiGroup: '', resource: 'pods', matchContains: [], matchScopes: [{scopeName: 'PriorityClass', operator: 'In', values: ['x']}]}]);
    }
    expect(parseResourceQuotaConfiguration(undefined)).toEqual({limitedResources: []});
  });

  it.each([
    ['a missing resource', {limitedResources: [{matchContains: ['x']}]}, 'limitedResources[0].resource: Required value'],
    ['an unknown field', {limitedResources: [{resource: 'pods', matchContain: ['x']}]}, 'unknown field "limitedResources[0].matchContain"'],
    ['a wrong kind', {kind: 'Configuration'}, 'no kind "Configuration" is registered for version'],
    ['a bad operator', {limitedResources: [{resource: 'pods', matchScopes: [{scopeName: 'PriorityClass', operator: 'Equals'}]}]}, 'operator: Unsupported value: "Equals"'],
  ])('%s is refused naming the plugin, the source and the field', (_name, body, message) => {
    const configuration = {apiVersion: `apiserver.config.${domain()}/v1`, kind: 'ResourceQuotaConfiguration', ...body};
    expect(() => parseResourceQuotaConfiguration(configuration as JsonObject, '/etc/admission.yaml')).toThrow(`admission plugin ResourceQuota: /etc/admission.yaml: `);
    expect(() => parseResourceQuotaConfiguration(configuration as JsonObject)).toThrow(message);
  });
});

describe('ResourceQuota in the REST API', () => {
  let api: TestApi;
  let client: RestClient;
  let plugin: ResourceQuotaAdmission;
  const QUOTAS = '/api/v1/namespaces/default/resourcequotas';
  const PODS = '/api/v1/namespaces/default/pods';
  const podBody = (name: string) => ({apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {containers: [{name: 'c', image: 'busybox', resources: {requests: {cpu: '100m'}}}]}});

  beforeEach(async () => {
    const objects = restAdmissionObjects(() => client);
    plugin = new ResourceQuotaAdmission({clock: systemClock}, registryQuotaAccess(objects));
    api = await startTestApi({admissionPlugins: [plugin]});
    client = new RestClient({config: {server: api.url, insecure: false}});
  });
  afterEach(async () => {
    plugin.close();
    client.close();
    await api.close();
  });

  /** A quota with its usage known (the controller's job in a cluster). */
  async function makeQuota(hard: Record<string, string>): Promise<void> {
    await call(api, 'POST', QUOTAS, {body: {apiVersion: 'v1', kind: 'ResourceQuota', metadata: {name: 'q'}, spec: {hard}}});
    const current = (await call(api, 'GET', `${QUOTAS}/q`)).body;
    const used = Object.fromEntries(Object.keys(hard).map((n) => [n, '0']));
    const reply = await call(api, 'PUT', `${QUOTAS}/q/status`, {body: {...current, status: {hard, used}}});
    expect(reply.status).toBe(200);
  }

  it('refuses the fourth pod with upstream message and records the usage', async () => {
    await makeQuota({pods: '3', 'requests.cpu': '1'});
    for (const name of ['p1', 'p2', 'p3']) expect((await call(api, 'POST', PODS, {body: podBody(name)})).status).toBe(201);
    const fourth = await call(api, 'POST', PODS, {body: podBody('p4')});
    expect(fourth.status).toBe(403);
    expect(fourth.body).toMatchObject({reason: 'Forbidden', message: 'pods "p4" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3'});
    expect((await call(api, 'GET', `${PODS}/p4`)).status).toBe(404);
    expect((await call(api, 'GET', `${QUOTAS}/q`)).body.status.used).toEqual({pods: '3', 'requests.cpu': '300m'});
  });

  it('admits exactly as many concurrent creates as the quota allows', async () => {
    await makeQuota({pods: '5'});
    const replies = await Promise.all(Array.from({length: 12}, (_, i) => call(api, 'POST', PODS, {body: podBody(`c${i}`)})));
    expect(replies.filter((r) => r.status === 201)).toHaveLength(5);
    expect(replies.filter((r) => r.status === 403)).toHaveLength(7);
    expect((await call(api, 'GET', `${QUOTAS}/q`)).body.status.used).toEqual({pods: '5'});
    expect((await call(api, 'GET', PODS)).body.items).toHaveLength(5);
  });

  it('events are never counted, as upstream ignores them', async () => {
    await makeQuota({'count/events': '0'});
    const event = {apiVersion: 'v1', kind: 'Event', metadata: {name: 'e'}, involvedObject: {kind: 'Pod', name: 'p', namespace: 'default'}, reason: 'R', message: 'm'};
    expect((await call(api, 'POST', '/api/v1/namespaces/default/events', {body: event})).status).toBe(201);
  });

  it('a dry run is checked but charges nothing', async () => {
    await makeQuota({pods: '1'});
    expect((await call(api, 'POST', `${PODS}?dryRun=All`, {body: podBody('d')})).status).toBe(201);
    expect((await call(api, 'GET', `${QUOTAS}/q`)).body.status.used).toEqual({pods: '0'});
  });
});

describe('charging with optimistic concurrency', () => {
  const request = createPod(pod('p', [container('a')]));

  /** Quotas kept in memory with resourceVersion preconditions; `interfere` writes before the plugin's next status write. */
  function memoryAccess(initial: JsonObject, interfere?: (stored: JsonObject) => void): QuotaAccess & {stored: JsonObject; writes: number} {
    const access = {
      stored: initial,
      writes: 0,
      list: async () => [structuredClone(access.stored)],
      async updateStatus(next: JsonObject) {
        access.writes++;
        if (interfere) {
          interfere(access.stored);
          interfere = undefined;
        }
        const current = (access.stored.metadata as JsonObject).resourceVersion;
        if ((next.metadata as JsonObject).resourceVersion !== current) throw Object.assign(new Error('conflict'), {code: 409});
        access.stored = {...next, metadata: {...(next.metadata as JsonObject), resourceVersion: String(Number(current) + 1)}};
        return access.stored;
      },
    };
    return access;
  }

  it('a conflict re-reads the quota and charges on top of the other write', async () => {
    // Another writer (the controller, another server) charges one pod between our read and our write.
    const access = memoryAccess(quota('q', {pods: '3'}, {pods: '1'}), (stored) => {
      stored.status = {hard: {pods: '3'}, used: {pods: '2'}};
      (stored.metadata as JsonObject).resourceVersion = '6';
    });
    await new QuotaChargeQueue(access, [], systemClock).evaluate(request, podEvaluator, false);
    expect(access.writes).toBe(2);
    expect((access.stored.status as JsonObject).used).toEqual({pods: '3'});
  });

  it('a conflict that leaves no room refuses the write', async () => {
    const access = memoryAccess(quota('q', {pods: '2'}, {pods: '1'}), (stored) => {
      stored.status = {hard: {pods: '2'}, used: {pods: '2'}};
      (stored.metadata as JsonObject).resourceVersion = '6';
    });
    await expect(new QuotaChargeQueue(access, [], systemClock).evaluate(request, podEvaluator, false)).rejects.toThrow(
      'exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2',
    );
  });

  it('a write that never lands times out after upstream ten seconds', async () => {
    const clock = new FakeClock(NOW);
    const stuck: QuotaAccess = {list: () => new Promise(() => undefined), updateStatus: async (q) => q};
    const outcome = new QuotaChargeQueue(stuck, [], clock).evaluate(request, podEvaluator, false).catch((e: Error) => e.message);
    await clock.advance(10_000);
    expect(await outcome).toBe('Internal error occurred: resource quota evaluation timed out');
  });
});

describe('resource lists', () => {
  it('sums keep the first non-zero format (memory stays binary)', () => {
    const list = parseResourceList({memory: '1Gi', cpu: '1.5'});
    expect(formatResourceList(list)).toEqual({cpu: '1500m', memory: '1Gi'});
  });
});

describe('ResourceQuota admission without quotas in the namespace', () => {
  const pod = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p', namespace: 'free'}, spec: {containers: [{name: 'c', image: 'x'}]}} as JsonObject;
  const attributes = (namespace: string) => ({
    operation: 'CREATE' as const, resource: {group: '', version: 'v1', kind: 'Pod', plural: 'pods', singular: 'pod', namespaced: true, verbs: [], subresources: [], storagePrefix: 'pods'},
    subresource: '', namespace, name: 'p', object: pod, user: {name: 'u', groups: []}, dryRun: false,
  });

  it('reads no quota where its watch says the namespace has none, and reads them where it has', async () => {
    let handlers: {apply(o: JsonObject): void; remove(o: JsonObject): void} | undefined;
    const watch = {synced: false, stop() {}};
    const reads: string[] = [];
    const access: QuotaAccess = {list: async (namespace) => (reads.push(namespace), []), updateStatus: async (q) => q};
    const plugin = new ResourceQuotaAdmission({clock: systemClock, watch: (_g, _r, h) => ((handlers = h), watch)}, access);
    await plugin.validate(attributes('free'));
    expect(reads).toEqual(['free']); // not synced yet: read as before
    watch.synced = true;
    handlers!.apply({metadata: {namespace: 'limited', name: 'q'}});
    await plugin.validate(attributes('free'));
    await plugin.validate(attributes('limited'));
    expect(reads).toEqual(['free', 'limited']);
    handlers!.remove({metadata: {namespace: 'limited', name: 'q'}});
    await plugin.validate(attributes('limited'));
    expect(reads).toEqual(['free', 'limited']);
    plugin.close();
  });
});
