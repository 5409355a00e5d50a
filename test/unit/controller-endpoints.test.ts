/**
 * The endpoints controller against the real REST API (in-memory store): Endpoints follow the
 * service's pods (readiness, IPs, ports resolved by name), services without selectors keep
 * hand-written Endpoints, and Endpoints of deleted services go away. No agent runs, so the test
 * writes pod IPs and readiness into pod status itself. Plus table tests of the pure subset logic.
 */
import {describe, expect, it} from '@jest/globals';
import type {RestClient} from '../../src/client/rest-client.js';
import {ApiStatusError} from '../../src/client/errors.js';
import {klog} from '../../src/lib/klog.js';
import {
  endpointIPFor,
  endpointsController,
  findPort,
  repackSubsets,
  subsetsFor,
  truncateSubsets,
  type EndpointSubset,
  type Pod,
  type Service,
} from '../../src/daemons/controller-manager/controllers/endpoints.js';
import type {RunningController} from '../../src/daemons/controller-manager/controllers/types.js';
import {pollUntil, useControllerHarness} from '../helpers/controller-harness.js';

const NS = 'default';

async function createService(client: RestClient, name: string, spec: Record<string, unknown>, labels?: Record<string, string>) {
  return client.request({method: 'POST', path: `/api/v1/namespaces/${NS}/services`, body: {apiVersion: 'v1', kind: 'Service', metadata: {name, labels}, spec}});
}

async function createPod(client: RestClient, name: string, labels: Record<string, string>, ports: {name: string; containerPort: number}[] = []): Promise<Pod> {
  const response = await client.request<Pod>({
    method: 'POST',
    path: `/api/v1/namespaces/${NS}/pods`,
    body: {apiVersion: 'v1', kind: 'Pod', metadata: {name, labels}, spec: {nodeName: 'node-a', containers: [{name: 'app', image: 'nginx', ports}]}},
  });
  return response.body;
}

/** What the agent would write: an IP and the Ready condition. */
async function setPodStatus(client: RestClient, name: string, ip: string | undefined, ready: boolean) {
  const status = {phase: 'Running', ...(ip ? {podIP: ip, podIPs: [{ip}]} : {}), conditions: [{type: 'Ready', status: ready ? 'True' : 'False'}]};
  await client.patch(`/api/v1/namespaces/${NS}/pods/${name}/status`, 'application/merge-patch+json', {status});
}

async function getEndpoints(client: RestClient, name: string): Promise<any | undefined> {
  try {
    return await client.get(`/api/v1/namespaces/${NS}/endpoints/${name}`);
  } catch (error) {
    if (error instanceof ApiStatusError && error.code === 404) return undefined;
    throw error;
  }
}

const ips = (addresses: {ip: string}[] | undefined) => (addresses ?? []).map((a) => a.ip);

// ---------------------------------------------------------------------------------------------

describe('endpoints controller against the REST API', () => {
  const h = useControllerHarness({logger: klog('test')});
  const startController = (options: Record<string, unknown> = {}): Promise<RunningController> =>
    h.start(endpointsController, {'concurrent-endpoint-syncs': 2, ...options});

  it('lists ready and not-ready pods with their node, reference and resolved ports', async () => {
    const {client} = h;
    await startController();
    await createService(client, 'web', {
      selector: {app: 'web'},
      ports: [
        {name: 'http', port: 80, targetPort: 'http-alt'},
        {name: 'metrics', port: 9090, targetPort: 9091},
      ],
    }, {tier: 'front'});
    const ready = await createPod(client, 'web-ready', {app: 'web'}, [{name: 'http-alt', containerPort: 8080}]);
    await createPod(client, 'web-starting', {app: 'web'}, [{name: 'http-alt', containerPort: 8080}]);
    await createPod(client, 'web-no-ip', {app: 'web'}, [{name: 'http-alt', containerPort: 8080}]);
    await createPod(client, 'other', {app: 'other'}, [{name: 'http-alt', containerPort: 8080}]);
    await setPodStatus(client, 'web-ready', '10.1.0.1', true);
    await setPodStatus(client, 'web-starting', '10.1.0.2', false);
    await setPodStatus(client, 'web-no-ip', undefined, true);
    await setPodStatus(client, 'other', '10.1.0.9', true);

    const endpoints = await pollUntil(() => getEndpoints(client, 'web'), (e) => e?.subsets?.[0]?.notReadyAddresses?.length === 1);
    expect(endpoints.metadata.labels).toEqual({tier: 'front'});
    expect(endpoints.subsets).toEqual([
      {
        addresses: [{ip: '10.1.0.1', nodeName: 'node-a', targetRef: {kind: 'Pod', namespace: NS, name: 'web-ready', uid: ready.metadata!.uid}}],
        notReadyAddresses: [expect.objectContaining({ip: '10.1.0.2', nodeName: 'node-a'})],
        ports: [
          {name: 'http', port: 8080, protocol: 'TCP'},
          {name: 'metrics', port: 9091, protocol: 'TCP'},
        ],
      },
    ]);
  });

  it('follows readiness, label changes and deletions of pods', async () => {
    const {client} = h;
    await startController();
    await createService(client, 'api', {selector: {app: 'api'}, ports: [{port: 80}]});
    for (const [name, ip] of [['api-1', '10.2.0.1'], ['api-2', '10.2.0.2']] as const) {
      await createPod(client, name, {app: 'api'});
      await setPodStatus(client, name, ip, false);
    }
    let endpoints = await pollUntil(() => getEndpoints(client, 'api'), (e) => ips(e?.subsets?.[0]?.notReadyAddresses).length === 2);
    expect(ips(endpoints.subsets[0].notReadyAddresses)).toEqual(['10.2.0.1', '10.2.0.2']);

    await setPodStatus(client, 'api-1', '10.2.0.1', true);
    endpoints = await pollUntil(() => getEndpoints(client, 'api'), (e) => ips(e?.subsets?.[0]?.addresses).length === 1);
    expect(ips(endpoints.subsets[0].addresses)).toEqual(['10.2.0.1']);
    expect(ips(endpoints.subsets[0].notReadyAddresses)).toEqual(['10.2.0.2']);

    // Relabelled away from the selector: out of the service.
    await client.patch(`/api/v1/namespaces/${NS}/pods/api-2`, 'application/merge-patch+json', {metadata: {labels: {app: 'elsewhere'}}});
    endpoints = await pollUntil(() => getEndpoints(client, 'api'), (e) => e?.subsets?.[0]?.notReadyAddresses === undefined);
    expect(endpoints.subsets).toEqual([{addresses: [expect.objectContaining({ip: '10.2.0.1'})], ports: [{port: 80, protocol: 'TCP'}]}]);

    // Graceful deletion marks the pod terminating at once (it has a node): it leaves the Endpoints.
    await client.request({method: 'DELETE', path: `/api/v1/namespaces/${NS}/pods/api-1`});
    endpoints = await pollUntil(() => getEndpoints(client, 'api'), (e) => e !== undefined && e.subsets === undefined);
    expect(endpoints.subsets).toBeUndefined();
  });

  it('publishes not-ready pods as ready when the service says publishNotReadyAddresses', async () => {
    const {client} = h;
    await startController();
    await createService(client, 'peers', {selector: {app: 'db'}, clusterIP: 'None', publishNotReadyAddresses: true, ports: [{port: 5432}]});
    await createPod(client, 'db-0', {app: 'db'});
    await setPodStatus(client, 'db-0', '10.3.0.1', false);
    const endpoints = await pollUntil(() => getEndpoints(client, 'peers'), (e) => e?.subsets?.length === 1);
    expect(ips(endpoints.subsets[0].addresses)).toEqual(['10.3.0.1']);
    expect(endpoints.metadata.labels).toEqual({'service.orch.io/headless': ''});
  });

  it('leaves services without a selector alone and removes Endpoints of deleted services', async () => {
    const {client} = h;
    // Endpoints left over from a service deleted while no controller ran.
    await client.request({method: 'POST', path: `/api/v1/namespaces/${NS}/endpoints`, body: {metadata: {name: 'gone'}, subsets: [{addresses: [{ip: '10.9.9.9'}], ports: [{port: 1}]}]}});
    await createService(client, 'external-db', {ports: [{port: 5432}]});
    const manual = await client.request<any>({
      method: 'POST',
      path: `/api/v1/namespaces/${NS}/endpoints`,
      body: {metadata: {name: 'external-db'}, subsets: [{addresses: [{ip: '192.168.1.5'}], ports: [{port: 5432}]}]},
    });
    await startController();

    expect(await pollUntil(() => getEndpoints(client, 'gone'), (e) => e === undefined)).toBeUndefined();

    await createService(client, 'cache', {selector: {app: 'cache'}, ports: [{port: 6379}]});
    const cache = await pollUntil(() => getEndpoints(client, 'cache'), (e) => e !== undefined);
    expect(cache.subsets).toBeUndefined();
    // The selector-less service was synced at start like every service; its Endpoints are untouched.
    const external = await getEndpoints(client, 'external-db');
    expect(external.metadata.resourceVersion).toBe(manual.body.metadata.resourceVersion);
    expect(external.subsets[0].addresses).toEqual([{ip: '192.168.1.5'}]);

    await client.request({method: 'DELETE', path: `/api/v1/namespaces/${NS}/services/cache`});
    expect(await pollUntil(() => getEndpoints(client, 'cache'), (e) => e === undefined)).toBeUndefined();
    // Deleting the Endpoints of a live service with a selector brings them back.
    await createService(client, 'cache2', {selector: {app: 'cache'}, ports: [{port: 6379}]});
    const first = await pollUntil(() => getEndpoints(client, 'cache2'), (e) => e !== undefined);
    await client.request({method: 'DELETE', path: `/api/v1/namespaces/${NS}/endpoints/cache2`});
    const again = await pollUntil(() => getEndpoints(client, 'cache2'), (e) => e !== undefined && e.metadata.uid !== first.metadata.uid);
    expect(again.metadata.uid).not.toBe(first.metadata.uid);
  });

  it('waits --endpoint-updates-batch-period before acting on pod changes', async () => {
    const {client} = h;
    await startController({'endpoint-updates-batch-period': {ms: 400, text: '400ms'}});
    await createService(client, 'batch', {selector: {app: 'batch'}, ports: [{port: 80}]});
    await pollUntil(() => getEndpoints(client, 'batch'), (e) => e !== undefined);
    await createPod(client, 'batch-1', {app: 'batch'});
    const changed = Date.now();
    await setPodStatus(client, 'batch-1', '10.4.0.1', true);
    const endpoints = await pollUntil(() => getEndpoints(client, 'batch'), (e) => e?.subsets?.length === 1);
    expect(ips(endpoints.subsets[0].addresses)).toEqual(['10.4.0.1']);
    expect(Date.now() - changed).toBeGreaterThanOrEqual(350);
  });
});

// ---------------------------------------------------------------------------------------------
// Pure logic.

const pod = (name: string, ip: string | undefined, options: {ready?: boolean; ports?: {name: string; containerPort: number; protocol?: string}[]; phase?: string; deleting?: boolean; ips?: string[]} = {}): Pod => ({
  metadata: {name, namespace: NS, uid: `uid-${name}`, labels: {app: 'x'}, ...(options.deleting ? {deletionTimestamp: '2024-01-01T00:00:00Z'} : {})},
  spec: {containers: [{name: 'c', ports: options.ports ?? []}]},
  status: {
    phase: options.phase ?? 'Running',
    ...(ip ? {podIP: ip} : {}),
    ...(options.ips ? {podIPs: options.ips.map((i) => ({ip: i}))} : {}),
    conditions: [{type: 'Ready', status: options.ready === false ? 'False' : 'True'}],
  },
});

const service = (spec: Service['spec']): Service => ({metadata: {name: 's', namespace: NS}, spec: {selector: {app: 'x'}, ...spec}});

describe('findPort', () => {
  const p = pod('p', '10.0.0.1', {ports: [{name: 'web', containerPort: 8080}, {name: 'dns', containerPort: 53, protocol: 'UDP'}]});
  it.each([
    ['a number', {port: 80, targetPort: 9000}, 9000],
    ['a numeric string', {port: 80, targetPort: '9001'}, 9001],
    ['the port itself when no targetPort', {port: 81}, 81],
    ['a container port by name', {port: 80, targetPort: 'web'}, 8080],
    ['a named port of the right protocol', {port: 53, targetPort: 'dns', protocol: 'UDP'}, 53],
    ['no match for another protocol', {port: 53, targetPort: 'dns', protocol: 'TCP'}, undefined],
    ['no match for an unknown name', {port: 80, targetPort: 'nope'}, undefined],
  ])('%s', (_what, servicePort, expected) => {
    expect(findPort(p, servicePort)).toBe(expected);
  });
});

describe('endpointIPFor', () => {
  const dual = pod('p', undefined, {ips: ['10.0.0.1', 'fd00::1']});
  it.each([
    ['the first ipFamily', {ipFamilies: ['IPv6']}, 'fd00::1'],
    ['the cluster IP family', {clusterIP: '10.96.0.10'}, '10.0.0.1'],
    ['an IPv6 cluster IP', {clusterIP: 'fd00:96::a'}, 'fd00::1'],
    ['the first pod IP for a headless service', {clusterIP: 'None'}, '10.0.0.1'],
  ])('%s', (_what, spec, expected) => {
    expect(endpointIPFor(service(spec), dual)).toBe(expected);
  });
});

describe('subsetsFor and repackSubsets', () => {
  const named = [{name: 'web', containerPort: 8080}];
  it.each<[string, Service['spec'], Pod[], unknown]>([
    ['no pods: no subsets', {ports: [{port: 80}]}, [], []],
    [
      'pods offering different ports land in different subsets',
      {ports: [{name: 'w', port: 80, targetPort: 'web'}, {name: 'n', port: 81, targetPort: 81}]},
      [pod('a', '10.0.0.1', {ports: named}), pod('b', '10.0.0.2')],
      [
        {addresses: [expect.objectContaining({ip: '10.0.0.1'}), expect.objectContaining({ip: '10.0.0.2'})], ports: [{name: 'n', port: 81, protocol: 'TCP'}]},
        {addresses: [expect.objectContaining({ip: '10.0.0.1'})], ports: [{name: 'w', port: 8080, protocol: 'TCP'}]},
      ],
    ],
    [
      'terminal, IP-less and terminating pods are left out',
      {ports: [{port: 80}]},
      [pod('done', '10.0.0.1', {phase: 'Succeeded'}), pod('noip', undefined), pod('bye', '10.0.0.3', {deleting: true}), pod('ok', '10.0.0.4', {ready: false})],
      [{notReadyAddresses: [expect.objectContaining({ip: '10.0.0.4'})], ports: [{port: 80, protocol: 'TCP'}]}],
    ],
    [
      'a headless service without ports publishes bare addresses',
      {clusterIP: 'None'},
      [pod('a', '10.0.0.1')],
      [{addresses: [expect.objectContaining({ip: '10.0.0.1'})]}],
    ],
    ['a service with a cluster IP and no ports publishes nothing', {clusterIP: '10.96.0.1'}, [pod('a', '10.0.0.1')], []],
  ])('%s', (_what, spec, pods, expected) => {
    expect(subsetsFor(service(spec), pods)).toEqual(expected);
  });

  it('keeps an address not ready when it is not ready on any port', () => {
    const address = {ip: '10.0.0.1', targetRef: {kind: 'Pod', name: 'a', uid: 'u'}};
    const subsets = repackSubsets([
      {address, ready: true, port: {port: 80, protocol: 'TCP'}},
      {address, ready: false, port: {port: 80, protocol: 'TCP'}},
    ]);
    expect(subsets).toEqual([{notReadyAddresses: [address], ports: [{port: 80, protocol: 'TCP'}]}]);
  });
});

describe('truncateSubsets', () => {
  const addrs = (n: number, base: number) => Array.from({length: n}, (_, i) => ({ip: `10.0.${base}.${i}`}));
  it.each([
    ['under capacity: untouched', [{addresses: addrs(3, 0), notReadyAddresses: addrs(2, 1)}], 10, false, [3], [2]],
    ['not-ready addresses go first', [{addresses: addrs(6, 0), notReadyAddresses: addrs(6, 1)}], 10, true, [6], [4]],
    ['ready ones are cut in proportion when they alone overflow', [{addresses: addrs(8, 0)}, {addresses: addrs(4, 1), notReadyAddresses: addrs(3, 2)}], 6, true, [4, 2], [0, 0]],
  ])('%s', (_what, subsets, capacity, truncated, ready, notReady) => {
    const copy = structuredClone(subsets) as EndpointSubset[];
    expect(truncateSubsets(copy, capacity)).toBe(truncated);
    expect(copy.map((s) => s.addresses?.length ?? 0)).toEqual(ready);
    expect(copy.map((s) => s.notReadyAddresses?.length ?? 0)).toEqual(notReady);
  });
});
