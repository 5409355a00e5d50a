/**
 * The admission plugins read namespaces, service accounts, limit ranges and priority classes from
 * memory (the watch cache, decoded once per revision: admission/decoded-objects.ts). What a client
 * wrote must still count for its very next request, as upstream's plugins guarantee with their
 * live lookups: a namespace being deleted refuses new content at once, a LimitRange, a changed
 * LimitRange, a ServiceAccount and a default PriorityClass act on the pod created right after them.
 * Each round writes and creates back to back, with no wait, on SQLite and on etcd (whose watch
 * reaches the cache later than SQLite's). And what mutating admission adds to a pod is no manager's
 * field (upstream records the writer's fields before mutating admission).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {type ApiClient, type Engine, type InProcessServer, pod, startApiServer} from '../helpers/apiserver.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';
import {names} from '../../src/api/names.js';

const ROUNDS = 8;

describe.each<Engine>(['sqlite', 'etcd'])('admission reads its own writes at once (%s)', (engine) => {
  let etcd: EtcdServer | undefined;
  let api: InProcessServer;
  let client: ApiClient;

  beforeAll(async () => {
    if (engine === 'etcd') etcd = await startEtcd();
    // ServiceAccount on (the helper leaves it out): each namespace here gets its accounts from the test.
    api = await startApiServer({engine, etcdEndpoint: etcd?.endpoint, config: {admission: {disable: ['TaintNodesByCondition']}}});
    client = api.client;
  }, 60_000);
  afterAll(async () => {
    await api?.stop();
    await etcd?.stop();
  });

  const created = async (path: string, body: unknown) => {
    const r = await client.post(path, body);
    if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const namespaceWithAccount = async (ns: string) => {
    await created('/api/v1/namespaces', {apiVersion: 'v1', kind: 'Namespace', metadata: {name: ns}});
    await created(`/api/v1/namespaces/${ns}/serviceaccounts`, {apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name: 'default'}});
  };

  it('refuses a pod in a namespace the moment its deletion was accepted, and admits one in a namespace just created', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const ns = `gone-${i}`;
      await namespaceWithAccount(ns);
      await created(`/api/v1/namespaces/${ns}/pods`, pod('before'));
      expect((await client.delete(`/api/v1/namespaces/${ns}`)).status).toBe(200);
      const refused = await client.post(`/api/v1/namespaces/${ns}/pods`, pod('after'));
      expect(refused.status).toBe(403);
      expect(refused.body.message).toContain(`unable to create new content in namespace ${ns} because it is being terminated`);
    }
  });

  it('gives a pod the defaults of a LimitRange created, then changed, just before it', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const ns = `limits-${i}`;
      await namespaceWithAccount(ns);
      const range = await created(`/api/v1/namespaces/${ns}/limitranges`, {
        apiVersion: 'v1', kind: 'LimitRange', metadata: {name: 'limits'}, spec: {limits: [{type: 'Container', default: {cpu: '300m'}}]},
      });
      const first = await created(`/api/v1/namespaces/${ns}/pods`, pod('first'));
      expect(first.spec.containers[0].resources).toEqual({limits: {cpu: '300m'}, requests: {cpu: '300m'}});
      range.spec.limits[0].default.cpu = '700m';
      range.spec.limits[0].defaultRequest.cpu = '700m';
      expect((await client.put(`/api/v1/namespaces/${ns}/limitranges/limits`, range)).status).toBe(200);
      const second = await created(`/api/v1/namespaces/${ns}/pods`, pod('second'));
      expect(second.spec.containers[0].resources).toEqual({limits: {cpu: '700m'}, requests: {cpu: '700m'}});
      expect((await client.delete(`/api/v1/namespaces/${ns}/limitranges/limits`)).status).toBe(200);
      const third = await created(`/api/v1/namespaces/${ns}/pods`, pod('third'));
      expect(third.spec.containers[0].resources).toEqual({});
    }
  });

  it('admits a pod naming a ServiceAccount created just before it, and refuses one whose account was just deleted', async () => {
    for (let i = 0; i < ROUNDS; i++) {
      const ns = `accounts-${i}`;
      await namespaceWithAccount(ns);
      await created(`/api/v1/namespaces/${ns}/serviceaccounts`, {
        apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name: 'builder'}, imagePullSecrets: [{name: 'registry'}],
      });
      const withAccount = {...pod('built'), spec: {serviceAccountName: 'builder', containers: [{name: 'app', image: 'nginx:1.27'}]}};
      const admitted = await created(`/api/v1/namespaces/${ns}/pods`, withAccount);
      expect(admitted.spec.imagePullSecrets).toEqual([{name: 'registry'}]);
      expect((await client.delete(`/api/v1/namespaces/${ns}/serviceaccounts/builder`)).status).toBe(200);
      const refused = await client.post(`/api/v1/namespaces/${ns}/pods`, {...withAccount, metadata: {name: 'orphan'}});
      expect(refused.status).toBe(403);
      expect(refused.body.message).toContain(`error looking up service account ${ns}/builder`);
    }
  });

  it("records the writer's fields in managedFields, not what admission added", async () => {
    await namespaceWithAccount('owned');
    const admitted = await created('/api/v1/namespaces/owned/pods?fieldManager=tester', pod('owned'));
    // Admission added the account, its token volume and mount, and the default tolerations...
    expect(admitted.spec.serviceAccountName).toBe('default');
    expect(admitted.spec.volumes).toHaveLength(1);
    expect(admitted.spec.tolerations).toHaveLength(2);
    // ...which are no manager's; the request's fields and their defaults are the writer's.
    expect(admitted.metadata.managedFields).toHaveLength(1);
    const [entry] = admitted.metadata.managedFields;
    expect(entry).toMatchObject({manager: 'tester', operation: 'Update', apiVersion: 'v1'});
    const spec = entry.fieldsV1['f:spec'];
    expect(Object.keys(spec)).toEqual(expect.arrayContaining(['f:containers', 'f:dnsPolicy', 'f:restartPolicy']));
    for (const added of ['f:serviceAccountName', 'f:volumes', 'f:tolerations']) expect(spec).not.toHaveProperty([added]);
    const container = spec['f:containers']['k:{"name":"app"}'];
    expect(container).toHaveProperty(['f:image']);
    expect(container).not.toHaveProperty(['f:volumeMounts']);
  });

  it('gives a pod the priority of a default PriorityClass created just before it', async () => {
    const scheduling = names().groups.scheduling;
    await namespaceWithAccount('priorities');
    for (let i = 0; i < ROUNDS; i++) {
      const name = `default-${i}`;
      await created(`/apis/${scheduling}/v1/priorityclasses`, {apiVersion: `${scheduling}/v1`, kind: 'PriorityClass', metadata: {name}, value: 1000 + i, globalDefault: true});
      const admitted = await created('/api/v1/namespaces/priorities/pods', pod(`p-${i}`));
      expect(admitted.spec.priorityClassName).toBe(name);
      expect(admitted.spec.priority).toBe(1000 + i);
      // Only one class may be the global default.
      expect((await client.delete(`/apis/${scheduling}/v1/priorityclasses/${name}`)).status).toBe(200);
    }
  });
});
