/**
 * Service ClusterIP and NodePort allocation against real API servers: addresses from
 * --service-cluster-ip-range (IPAddress objects, as upstream 1.36), node ports from
 * --service-node-port-range (a RangeAllocation bitmap), upstream's 422 messages for taken and
 * out-of-range values, headless and ExternalName services, release on delete and on type changes,
 * a full range, the `orch` service as NodePort (--orch-service-node-port), allocations kept across
 * a restart, and two API servers on one etcd never handing out one address or port twice.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {ApiClient, kubectl, startApiServer, startApiServerProcess, type InProcessServer} from '../helpers/apiserver.js';
import {startEtcd, type EtcdServer} from '../helpers/etcd.js';

const RANGE = '10.10.0.0/28'; // 14 usable addresses
const PORTS = {base: 30000, size: 100};
const ORCH_NODE_PORT = 30042;

const service = (name: string, spec: Record<string, unknown> = {}) => ({
  apiVersion: 'v1', kind: 'Service', metadata: {name},
  spec: {ports: [{name: 'http', port: 80, targetPort: 8080}], selector: {app: name}, ...spec},
});

function inRange(ip: string): boolean {
  const last = Number(ip.split('.')[3]);
  return ip.startsWith('10.10.0.') && last >= 1 && last <= 14;
}

describe('service allocation (SQLite)', () => {
  let server: InProcessServer;
  let client: ApiClient;
  const create = (body: unknown) => client.request('POST', '/api/v1/namespaces/default/services', {body});
  const del = (name: string) => client.request('DELETE', `/api/v1/namespaces/default/services/${name}`);
  const ipAddress = (ip: string) => client.request('GET', `/apis/${names().groups.networking}/v1/ipaddresses/${ip}`);

  beforeAll(async () => {
    server = await startApiServer({
      engine: 'sqlite',
      config: {serviceClusterIpRange: [RANGE], services: {nodePortRange: PORTS, orchServiceNodePort: ORCH_NODE_PORT, endpointReconcilerType: 'lease'}},
    });
    client = server.client;
  }, 30_000);
  afterAll(async () => server?.stop());

  it('gives the orch service the first address, as NodePort on --orch-service-node-port, with its IPAddress object', async () => {
    const svc = (await client.request('GET', `/api/v1/namespaces/default/services/${names().defaultService}`)).body;
    expect(svc.spec).toMatchObject({type: 'NodePort', clusterIP: '10.10.0.1', clusterIPs: ['10.10.0.1'], ports: [{name: 'https', port: 443, nodePort: ORCH_NODE_PORT}]});
    const ip = await ipAddress('10.10.0.1');
    expect(ip.status).toBe(200);
    expect(ip.body.spec.parentRef).toEqual({group: '', resource: 'services', namespace: 'default', name: names().defaultService});
    expect(ip.body.metadata.labels).toEqual({[names().labels.ipAddressFamily]: 'IPv4', [names().labels.ipAddressManagedBy]: names().ipAllocator});
  });

  it('allocates a free address in the range, honours a free requested one and refuses a taken or foreign one with 422', async () => {
    // The requested address first: a /28 has no static band, so a random pick could take it.
    const fixed = await create(service('fixed', {clusterIP: '10.10.0.5'}));
    expect(fixed.status).toBe(201);
    expect(fixed.body.spec.clusterIP).toBe('10.10.0.5');

    const web = await create(service('web'));
    expect(web.status).toBe(201);
    expect(inRange(web.body.spec.clusterIP)).toBe(true);
    expect(web.body.spec.clusterIP).not.toBe('10.10.0.5');
    expect(web.body.spec).toMatchObject({clusterIPs: [web.body.spec.clusterIP], ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack'});
    expect((await ipAddress(web.body.spec.clusterIP)).body.spec.parentRef.name).toBe('web');

    const taken = await create(service('taken', {clusterIP: '10.10.0.5'}));
    expect(taken.status).toBe(422);
    expect(taken.body.message).toBe(
      'Service "taken" is invalid: spec.clusterIPs: Invalid value: ["10.10.0.5"]: failed to allocate IP 10.10.0.5: provided IP is already allocated',
    );
    const outside = await create(service('outside', {clusterIP: '10.99.0.5'}));
    expect(outside.status).toBe(422);
    expect(outside.body.message).toContain(`failed to allocate IP 10.99.0.5: the provided IP (10.99.0.5) is not in the valid range. The range of valid IPs is ${RANGE}`);
    // A failed create leaves nothing behind.
    expect((await client.request('GET', '/api/v1/namespaces/default/services/taken')).status).toBe(404);
  });

  it('keeps headless and ExternalName services without an address', async () => {
    const headless = await create(service('headless', {clusterIP: 'None'}));
    expect(headless.status).toBe(201);
    expect(headless.body.spec).toMatchObject({clusterIP: 'None', clusterIPs: ['None']});
    const external = await create({apiVersion: 'v1', kind: 'Service', metadata: {name: 'ext'}, spec: {type: 'ExternalName', externalName: 'example.com'}});
    expect(external.status).toBe(201);
    expect(external.body.spec.clusterIP).toBeUndefined();
  });

  it('allocates node ports from the range, refuses a taken one, and releases them when the type goes back to ClusterIP', async () => {
    const np = await create(service('np', {type: 'NodePort'}));
    expect(np.status).toBe(201);
    const port = np.body.spec.ports[0].nodePort as number;
    expect(port).toBeGreaterThanOrEqual(PORTS.base);
    expect(port).toBeLessThan(PORTS.base + PORTS.size);
    expect(np.body.spec.externalTrafficPolicy).toBe('Cluster');

    const clash = await create(service('clash', {type: 'NodePort', ports: [{port: 80, nodePort: port}]}));
    expect(clash.status).toBe(422);
    expect(clash.body.message).toBe(`Service "clash" is invalid: spec.ports[0].nodePort: Invalid value: ${port}: provided port is already allocated`);
    const orchPort = await create(service('orchport', {type: 'NodePort', ports: [{port: 80, nodePort: ORCH_NODE_PORT}]}));
    expect(orchPort.status).toBe(422);
    const outside = await create(service('far', {type: 'NodePort', ports: [{port: 80, nodePort: 31999}]}));
    expect(outside.body.message).toContain('provided port is not in the valid range. The range of valid ports is 30000-30099');

    // An update that leaves nodePort out keeps it; switching to ClusterIP gives it back.
    const kept = await client.request('PATCH', '/api/v1/namespaces/default/services/np', {
      body: {spec: {ports: [{name: 'http', port: 80, targetPort: 9090}]}}, contentType: 'application/strategic-merge-patch+json',
    });
    expect(kept.body.spec.ports[0].nodePort).toBe(port);
    const toClusterIP = await client.request('PATCH', '/api/v1/namespaces/default/services/np', {
      body: [{op: 'replace', path: '/spec/type', value: 'ClusterIP'}, {op: 'remove', path: '/spec/ports/0/nodePort'}, {op: 'remove', path: '/spec/externalTrafficPolicy'}],
      contentType: 'application/json-patch+json',
    });
    expect(toClusterIP.status).toBe(200);
    expect(toClusterIP.body.spec.ports[0].nodePort).toBeUndefined();
    expect((await create(service('clash', {type: 'NodePort', ports: [{port: 80, nodePort: port}]}))).status).toBe(201);
  });

  it('refuses to change a cluster IP, and gives addresses back on delete', async () => {
    const changed = await client.request('PATCH', '/api/v1/namespaces/default/services/fixed', {
      body: {spec: {clusterIP: '10.10.0.6', clusterIPs: ['10.10.0.6']}}, contentType: 'application/merge-patch+json',
    });
    expect(changed.status).toBe(422);
    expect(changed.body.message).toContain('may not change once set');
    expect((await del('fixed')).status).toBe(200);
    expect((await ipAddress('10.10.0.5')).status).toBe(404);
    expect((await create(service('again', {clusterIP: '10.10.0.5'}))).status).toBe(201);
  });

  it('answers 500 when the range is full, then allocates again after a delete', async () => {
    const created: string[] = [];
    for (let i = 0; ; i++) {
      const r = await create(service(`fill-${i}`));
      if (r.status !== 201) {
        expect(r.status).toBe(500);
        expect(r.body.message).toContain('failed to allocate a serviceIP: range is full');
        break;
      }
      created.push(r.body.spec.clusterIP);
      expect(i).toBeLessThan(20);
    }
    const all = (await client.request('GET', '/api/v1/services')).body.items.flatMap((s: any) => (s.spec.clusterIP && s.spec.clusterIP !== 'None' ? [s.spec.clusterIP] : []));
    expect(new Set(all).size).toBe(all.length);
    expect(all.length).toBe(14);
    await del('fill-0');
    const again = await create(service('after-full'));
    expect(again.status).toBe(201);
    expect(again.body.spec.clusterIP).toBe(created[0]);
  });

  it('shows the allocation through kubectl', async () => {
    const r = await kubectl(server.orchconfigPath, ['get', 'ipaddresses', '-o', 'name']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('ipaddress.networking.orch.io/10.10.0.1');
  }, 20_000);
});

describe('service allocation shared by two API servers on one etcd', () => {
  let etcd: EtcdServer;
  const servers: InProcessServer[] = [];

  beforeAll(async () => {
    etcd = await startEtcd();
    const prefix = `/registry-services-${Date.now()}`;
    for (let i = 0; i < 2; i++) {
      servers.push(await startApiServer({
        engine: 'etcd', etcdEndpoint: etcd.endpoint,
        config: {keyPrefix: prefix, storage: {prefix}, serviceClusterIpRange: ['10.20.0.0/27'], services: {nodePortRange: {base: 31000, size: 40}}} as never,
      }));
    }
  }, 40_000);
  afterAll(async () => {
    for (const s of servers) await s.stop();
    await etcd?.stop();
  });

  it('hands out distinct addresses and node ports to concurrent creates through both servers', async () => {
    const results = await Promise.all(
      Array.from({length: 24}, (_, i) =>
        servers[i % 2]!.client.request('POST', '/api/v1/namespaces/default/services', {body: service(`svc-${i}`, {type: 'NodePort'})}),
      ),
    );
    for (const r of results) expect(r.status).toBe(201);
    const ips = results.map((r) => r.body.spec.clusterIP);
    const ports = results.map((r) => r.body.spec.ports[0].nodePort);
    expect(new Set(ips).size).toBe(24);
    expect(new Set(ports).size).toBe(24);
    // Either server sees the other's allocation.
    const clash = await servers[1]!.client.request('POST', '/api/v1/namespaces/default/services', {body: service('clash', {clusterIP: ips[0]})});
    expect(clash.status).toBe(422);
  }, 30_000);
});

describe('service allocations after kill -9', () => {
  it('keeps a taken address and node port taken when the server comes back', async () => {
    const server = await startApiServerProcess({engine: 'sqlite', args: ['--service-cluster-ip-range', '10.30.0.0/28', '--service-node-port-range', '30500-30509']});
    try {
      const first = await server.client.request('POST', '/api/v1/namespaces/default/services', {body: service('kept', {type: 'NodePort'})});
      expect(first.status).toBe(201);
      await server.kill9();
      await server.restart();
      const ip = await server.client.request('POST', '/api/v1/namespaces/default/services', {body: service('ip-again', {clusterIP: first.body.spec.clusterIP})});
      expect(ip.status).toBe(422);
      expect(ip.body.message).toContain('provided IP is already allocated');
      const port = await server.client.request('POST', '/api/v1/namespaces/default/services', {
        body: service('port-again', {type: 'NodePort', ports: [{port: 80, nodePort: first.body.spec.ports[0].nodePort}]}),
      });
      expect(port.status).toBe(422);
      expect(port.body.message).toContain('provided port is already allocated');
    } finally {
      await server.stop();
    }
  }, 45_000);
});

describe('dual-stack service ranges', () => {
  let server: InProcessServer;
  beforeAll(async () => {
    server = await startApiServer({engine: 'sqlite', config: {serviceClusterIpRange: ['10.40.0.0/28', 'fd00:10::/120']}});
  }, 30_000);
  afterAll(async () => server?.stop());
  const create = (body: unknown) => server.client.request('POST', '/api/v1/namespaces/default/services', {body});

  it('gives PreferDualStack services one address of each family, single-stack ones the first family', async () => {
    const dual = await create(service('dual', {ipFamilyPolicy: 'PreferDualStack'}));
    expect(dual.status).toBe(201);
    expect(dual.body.spec.ipFamilies).toEqual(['IPv4', 'IPv6']);
    const [v4, v6] = dual.body.spec.clusterIPs;
    expect(v4).toMatch(/^10\.40\.0\.\d+$/);
    expect(v6).toMatch(/^fd00:10::[0-9a-f]+$/);
    expect((await server.client.request('GET', `/apis/${names().groups.networking}/v1/ipaddresses/${v6}`)).body.metadata.labels[names().labels.ipAddressFamily]).toBe('IPv6');
    const single = await create(service('single'));
    expect(single.body.spec).toMatchObject({ipFamilies: ['IPv4'], ipFamilyPolicy: 'SingleStack'});
    const v6only = await create(service('v6only', {ipFamilies: ['IPv6']}));
    expect(v6only.body.spec.clusterIP).toMatch(/^fd00:10::/);
    // An address written in another form is the same address.
    const taken = await create(service('v6taken', {clusterIP: v6.replace('fd00:10::', 'fd00:0010:0:0::')}));
    expect(taken.status).toBe(422);
    expect(taken.body.message).toContain('provided IP is already allocated');
  });

  it('refuses RequireDualStack where the cluster has one family', async () => {
    const r = await (await import('../helpers/apiserver.js')).startApiServer({engine: 'sqlite', config: {serviceClusterIpRange: ['10.50.0.0/28']}});
    try {
      const refused = await r.client.request('POST', '/api/v1/namespaces/default/services', {body: service('req', {ipFamilyPolicy: 'RequireDualStack'})});
      expect(refused.status).toBe(422);
      expect(refused.body.message).toContain('spec.ipFamilyPolicy: Invalid value: "RequireDualStack": this cluster is not configured for dual-stack services');
    } finally {
      await r.stop();
    }
  }, 30_000);
});
