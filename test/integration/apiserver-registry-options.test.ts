/**
 * Registry options of a real API server, through kubectl and HTTPS: --allow-privileged (off, as the
 * seed's default: privileged containers are invalid with upstream's message), --enable-garbage-collector
 * (off: a delete's propagationPolicy adds no finalizer), --delete-collection-workers (a DELETE
 * collection with several workers deletes every object and answers them all), and
 * --external-hostname (the address discovery hands out).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {kubectl, startApiServer, type InProcessServer} from '../helpers/apiserver.js';

const pod = (name: string, privileged: boolean, finalizers?: string[]) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: {name, ...(finalizers ? {finalizers} : {})},
  spec: {initContainers: [{name: 'i', image: 'busybox'}], containers: [{name: 'c', image: 'busybox', securityContext: {privileged}}]},
});

describe('registry options at their seed defaults, with an external hostname', () => {
  let s: InProcessServer;
  beforeAll(async () => {
    s = await startApiServer({engine: 'sqlite', config: {externalHostname: 'api.example.test', deleteCollectionWorkers: 4}});
  }, 30_000);
  afterAll(async () => s?.stop());

  it('refuses a privileged container, in a pod and in a deployment template, with upstream\'s message', async () => {
    const refused = await kubectl(s.orchconfigPath, ['create', '-f', '-'], {input: JSON.stringify(pod('priv', true))});
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('Pod "priv" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy');
    const deployment = {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: {name: 'd'},
      spec: {selector: {matchLabels: {a: 'b'}}, template: {metadata: {labels: {a: 'b'}}, spec: {containers: [{name: 'c', image: 'busybox', securityContext: {privileged: true}}]}}},
    };
    const d = await s.client.post('/apis/apps/v1/namespaces/default/deployments', deployment);
    expect(d.status).toBe(422);
    expect(d.body.details.causes[0]).toMatchObject({field: 'spec.template.spec.containers[0].securityContext.privileged', reason: 'FieldValueForbidden'});
    expect((await s.client.post('/api/v1/namespaces/default/pods', pod('plain', false))).status).toBe(201);
  });

  it('deletes a whole collection with several workers and answers every deleted object', async () => {
    for (let i = 0; i < 12; i++) {
      expect((await s.client.post('/api/v1/namespaces/default/configmaps', {metadata: {name: `cm-${i}`, labels: {batch: 'x'}}})).status).toBe(201);
    }
    const deleted = await s.client.delete('/api/v1/namespaces/default/configmaps?labelSelector=batch%3Dx');
    expect(deleted.status).toBe(200);
    expect(deleted.body.items.map((o: {metadata: {name: string}}) => o.metadata.name).sort()).toEqual(Array.from({length: 12}, (_, i) => `cm-${i}`).sort());
    expect((await s.client.get('/api/v1/namespaces/default/configmaps?labelSelector=batch%3Dx')).body.items).toEqual([]);
  });

  it('keeps the garbage collector\'s finalizer for propagationPolicy=Orphan when it is on', async () => {
    await s.client.post('/api/v1/namespaces/default/configmaps', {metadata: {name: 'orphaned', finalizers: ['example.com/hold']}});
    const deleted = await s.client.delete('/api/v1/namespaces/default/configmaps/orphaned?propagationPolicy=Orphan');
    expect(deleted.body.metadata.finalizers).toEqual(['example.com/hold', 'orphan']);
  });

  it('hands out the external hostname in discovery', async () => {
    const api = await s.client.get('/api');
    const port = new URL(s.client.credentials.server).port;
    expect(api.body.serverAddressByClientCIDRs).toEqual([{clientCIDR: '0.0.0.0/0', serverAddress: `api.example.test:${port}`}]);
  });
});

describe('--allow-privileged and --enable-garbage-collector=false', () => {
  let s: InProcessServer;
  beforeAll(async () => {
    s = await startApiServer({engine: 'sqlite', config: {allowPrivileged: true, enableGarbageCollector: false}});
  }, 30_000);
  afterAll(async () => s?.stop());

  it('accepts a privileged container', async () => {
    expect((await s.client.post('/api/v1/namespaces/default/pods', pod('priv', true))).status).toBe(201);
  });

  it('ignores propagationPolicy: no garbage collector finalizer is added', async () => {
    await s.client.post('/api/v1/namespaces/default/configmaps', {metadata: {name: 'kept', finalizers: ['example.com/hold']}});
    const deleted = await s.client.delete('/api/v1/namespaces/default/configmaps/kept?propagationPolicy=Foreground');
    expect(deleted.status).toBe(200);
    expect(deleted.body.metadata.finalizers).toEqual(['example.com/hold']);
    // Without a finalizer of its own, the object goes at once instead of waiting for a garbage collector.
    await s.client.post('/api/v1/namespaces/default/configmaps', {metadata: {name: 'gone'}});
    expect((await s.client.delete('/api/v1/namespaces/default/configmaps/gone?propagationPolicy=Orphan')).status).toBe(200);
    expect((await s.client.get('/api/v1/namespaces/default/configmaps/gone')).status).toBe(404);
  });
});
