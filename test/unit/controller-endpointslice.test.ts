/**
 * The endpointslice controller against the real REST API (in-memory store): slices follow the
 * service's pods with ready/serving/terminating conditions, split at --max-endpoints-per-slice,
 * shrink back, keep a placeholder for a service without pods, and go with their service. No agent
 * runs, so the test writes pod IPs and readiness itself. Plus table tests of the pure planner.
 */
import {describe, expect, it} from '@jest/globals';
import type {RestClient} from '../../src/client/rest-client.js';
import {klog} from '../../src/lib/klog.js';
import {
  addressTypesFor,
  desiredGroups,
  endpointSliceController,
  planAddressType,
  type EndpointSlice,
  type SliceEndpoint,
} from '../../src/daemons/controller-manager/controllers/endpointslice.js';
import type {Pod, Service} from '../../src/daemons/controller-manager/controllers/endpoints.js';
import {pollUntil, useControllerHarness} from '../helpers/controller-harness.js';

const NS = 'default';

const createService = (client: RestClient, name: string, spec: Record<string, unknown>, labels?: Record<string, string>) =>
  client.request<Service>({method: 'POST', path: `/api/v1/namespaces/${NS}/services`, body: {apiVersion: 'v1', kind: 'Service', metadata: {name, labels}, spec}});

async function createPod(client: RestClient, name: string, labels: Record<string, string>, ip: string, ready: boolean, nodeName = 'node-a'): Promise<Pod> {
  const {body} = await client.request<Pod>({
    method: 'POST',
    path: `/api/v1/namespaces/${NS}/pods`,
    body: {apiVersion: 'v1', kind: 'Pod', metadata: {name, labels}, spec: {nodeName, containers: [{name: 'app', image: 'nginx', ports: [{name: 'web', containerPort: 8080}]}]}},
  });
  const status = {phase: 'Running', podIP: ip, podIPs: [{ip}], conditions: [{type: 'Ready', status: ready ? 'True' : 'False'}]};
  await client.patch(`/api/v1/namespaces/${NS}/pods/${name}/status`, 'application/merge-patch+json', {status});
  return body;
}

async function slicesOf(client: RestClient, service: string): Promise<EndpointSlice[]> {
  const list = await client.get<{items: EndpointSlice[]}>(`/apis/discovery.orch.io/v1/namespaces/${NS}/endpointslices`, {labelSelector: `orch.io/service-name=${service}`});
  return list.items;
}

const allEndpoints = (slices: EndpointSlice[]) => slices.flatMap((s) => s.endpoints ?? []);
const names = (endpoints: SliceEndpoint[]) => endpoints.map((e) => e.targetRef?.name).sort();

// ---------------------------------------------------------------------------------------------

describe('endpointslice controller against the REST API', () => {
  const h = useControllerHarness({logger: klog('test')});
  /** Starts the controller; returns the client the test drives the API with. */
  async function start(options: Record<string, unknown> = {}): Promise<RestClient> {
    await h.start(endpointSliceController, {'concurrent-service-endpoint-syncs': 2, ...options});
    return h.client;
  }

  it('serves endpointslices in discovery.orch.io/v1', async () => {
    const client = await start();
    const list = await client.get<{resources: {name: string; kind: string; namespaced: boolean}[]}>('/apis/discovery.orch.io/v1');
    expect(list.resources).toContainEqual(expect.objectContaining({name: 'endpointslices', kind: 'EndpointSlice', namespaced: true}));
  });

  it('writes a slice with the labels, owner, address type, conditions, zone and ports upstream writes', async () => {
    await h.client.request({method: 'POST', path: '/api/v1/nodes', body: {metadata: {name: 'node-a', labels: {'topology.orch.io/zone': 'zone-1'}}}});
    const client = await start();
    const {body: service} = await createService(client, 'web', {selector: {app: 'web'}, ports: [{name: 'http', port: 80, targetPort: 'web'}]}, {team: 'a'});
    const ready = await createPod(client, 'web-1', {app: 'web'}, '10.1.0.1', true);
    await createPod(client, 'web-2', {app: 'web'}, '10.1.0.2', false);
    await createPod(client, 'web-3', {app: 'web'}, '10.1.0.3', true);
    // Graceful deletion (the pod has a node): terminating, still serving, no longer ready.
    await client.request({method: 'DELETE', path: `/api/v1/namespaces/${NS}/pods/web-3`});

    const slices = await pollUntil(() => slicesOf(client, 'web'), (s) => s.length === 1 && allEndpoints(s).some((e) => e.conditions.terminating));
    const [slice] = slices;
    expect(slice!.metadata!.name).toMatch(/^web-[a-z0-9]{5}$/);
    expect(slice!.metadata!.labels).toEqual({team: 'a', 'orch.io/service-name': 'web', 'endpointslice.orch.io/managed-by': 'endpointslice-controller.orch.io'});
    expect(slice!.metadata!.ownerReferences).toEqual([{apiVersion: 'v1', kind: 'Service', name: 'web', uid: service.metadata!.uid, controller: true, blockOwnerDeletion: true}]);
    expect(slice!.addressType).toBe('IPv4');
    expect(slice!.ports).toEqual([{name: 'http', protocol: 'TCP', port: 8080}]);
    const byName = Object.fromEntries(slice!.endpoints!.map((e) => [e.targetRef!.name, e]));
    expect(byName['web-1']).toEqual({
      addresses: ['10.1.0.1'],
      conditions: {ready: true, serving: true, terminating: false},
      targetRef: {kind: 'Pod', namespace: NS, name: 'web-1', uid: ready.metadata!.uid},
      nodeName: 'node-a',
      zone: 'zone-1',
    });
    expect(byName['web-2']!.conditions).toEqual({ready: false, serving: false, terminating: false});
    expect(byName['web-3']!.conditions).toEqual({ready: false, serving: true, terminating: true});
  });

  it('splits at --max-endpoints-per-slice and shrinks back as pods go', async () => {
    const client = await start({'max-endpoints-per-slice': 2});
    await createService(client, 'big', {selector: {app: 'big'}, ports: [{port: 80}]});
    for (let i = 1; i <= 5; i++) await createPod(client, `big-${i}`, {app: 'big'}, `10.2.0.${i}`, true, '');
    let slices = await pollUntil(() => slicesOf(client, 'big'), (s) => allEndpoints(s).length === 5);
    expect(slices.map((s) => s.endpoints!.length).sort()).toEqual([1, 2, 2]);
    expect(names(allEndpoints(slices))).toEqual(['big-1', 'big-2', 'big-3', 'big-4', 'big-5']);

    // Pods without a node are deleted at once.
    for (const i of [1, 2, 3, 5]) await client.request({method: 'DELETE', path: `/api/v1/namespaces/${NS}/pods/big-${i}`});
    slices = await pollUntil(() => slicesOf(client, 'big'), (s) => s.length === 1 && allEndpoints(s).length === 1);
    expect(slices).toHaveLength(1);
    expect(names(allEndpoints(slices))).toEqual(['big-4']);
  });

  it('keeps a placeholder for a service without pods, skips services without selectors, and removes slices with their service', async () => {
    const client = await start();
    await createService(client, 'manual', {ports: [{port: 80}]});
    await createService(client, 'empty', {selector: {app: 'none'}, ports: [{port: 80}]});
    const slices = await pollUntil(() => slicesOf(client, 'empty'), (s) => s.length === 1);
    expect(slices[0]!.endpoints ?? []).toEqual([]);
    expect(slices[0]!.ports ?? []).toEqual([]);
    // The selector-less service was queued before `empty`, whose slice is there now: it got none.
    expect(await slicesOf(client, 'manual')).toEqual([]);

    // A pod arriving fills the placeholder rather than adding a slice.
    await createPod(client, 'p1', {app: 'none'}, '10.3.0.1', true);
    const filled = await pollUntil(() => slicesOf(client, 'empty'), (s) => allEndpoints(s).length === 1);
    expect(filled.map((s) => s.metadata!.name)).toEqual([slices[0]!.metadata!.name]);

    await client.request({method: 'DELETE', path: `/api/v1/namespaces/${NS}/services/empty`});
    expect(await pollUntil(() => slicesOf(client, 'empty'), (s) => s.length === 0)).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------
// The planner (pure).

const service: Service = {metadata: {name: 's', namespace: NS, uid: 'svc-uid'}, spec: {selector: {app: 'x'}, ports: [{port: 80}]}};
const pod = (n: number): Pod => ({
  metadata: {name: `p${n}`, namespace: NS, uid: `u${n}`, labels: {app: 'x'}},
  spec: {},
  status: {phase: 'Running', podIP: `10.0.0.${n}`, conditions: [{type: 'Ready', status: 'True'}]},
});
const pods = (...ns: number[]) => ns.map(pod);
const desired = (...ns: number[]) => desiredGroups(service, pods(...ns), 'IPv4');
/** An existing slice of `s` holding pods `ns`, as the controller would have written it. */
function existing(name: string, ...ns: number[]): EndpointSlice {
  const plan = planAddressType(service, 'IPv4', [], desired(...ns), 1000);
  const slice = plan.create[0]!;
  return {...slice, metadata: {...slice.metadata, name, generateName: undefined}};
}
const summary = (plan: ReturnType<typeof planAddressType>) => ({
  create: plan.create.map((s) => names(s.endpoints!)),
  update: plan.update.map((s) => [s.metadata!.name, names(s.endpoints!)]),
  delete: plan.delete.map((s) => s.metadata!.name),
});

describe('planAddressType', () => {
  it.each([
    ['nothing yet: slices of at most max', [], [1, 2, 3], 2, {create: [['p1', 'p2'], ['p3']], update: [], delete: []}],
    ['no change: no writes', [existing('a', 1, 2)], [1, 2], 2, {create: [], update: [], delete: []}],
    ['a new pod fills a slice with room', [existing('a', 1)], [1, 2], 2, {create: [], update: [['a', ['p1', 'p2']]], delete: []}],
    ['a gone pod leaves its slice, which is rewritten', [existing('a', 1, 2)], [1], 2, {create: [], update: [['a', ['p1']]], delete: []}],
    ['an emptied slice is deleted', [existing('a', 1, 2), existing('b', 3)], [1, 2], 2, {create: [], update: [], delete: ['b']}],
    ['an emptied slice is reused for a new one', [existing('a', 1, 2), existing('b', 3)], [1, 2, 4, 5], 2, {create: [], update: [['b', ['p4', 'p5']]], delete: []}],
    ['no pods: one placeholder is created', [], [], 2, {create: [[]], update: [], delete: []}],
    ['no pods: the last slice becomes the placeholder', [existing('a', 1)], [], 2, {create: [], update: [['a', []]], delete: []}],
  ])('%s', (_what, slices, wanted, max, expected) => {
    expect(summary(planAddressType(service, 'IPv4', slices, desired(...wanted), max))).toEqual(expected);
  });

  it('keeps an existing placeholder as is', () => {
    const placeholder = existing('a');
    expect(placeholder.endpoints).toEqual([]);
    expect(summary(planAddressType(service, 'IPv4', [placeholder], desired(), 2))).toEqual({create: [], update: [], delete: []});
  });
});

describe('addressTypesFor', () => {
  it.each<[string, Service['spec'], string[]]>([
    ['ipFamilies win', {ipFamilies: ['IPv6', 'IPv4'], clusterIP: '10.0.0.1'}, ['IPv6', 'IPv4']],
    ['else the cluster IP family', {clusterIP: 'fd00::1'}, ['IPv6']],
    ['else IPv4', {clusterIP: 'None'}, ['IPv4']],
  ])('%s', (_what, spec, expected) => {
    expect(addressTypesFor({spec})).toEqual(expected);
  });
});
