/**
 * The REST API over HTTPS with the admin client certificate of the generated orchconfig, on both
 * engines, with the server in this process: CRUD, resourceVersion semantics (watch resume, 410 Gone,
 * 409 Conflict), dry runs, selectors, paging, readyz following etcd, and authentication/authorization.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {type ApiClient, type Engine, type InProcessServer, configMap, sleep, startApiServer} from '../helpers/apiserver.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';

const CM = '/api/v1/namespaces/default/configmaps';
const names = (list: {items: {metadata: {name: string}}[]}) => list.items.map((i) => i.metadata.name);

describe.each<Engine>(['sqlite', 'etcd'])('the REST API on %s', (engine) => {
  let etcd: EtcdServer | undefined;
  let api: InProcessServer;
  let client: ApiClient;

  beforeAll(async () => {
    if (engine === 'etcd') etcd = await startEtcd();
    // A short compaction interval and a small configmaps watch window, so that old resourceVersions
    // become "too old" within the test.
    api = await startApiServer({engine, etcdEndpoint: etcd?.endpoint, config: {storage: {compactionIntervalMs: 300, watchCacheSizes: ['configmaps#5']}}});
    client = api.client;
  });
  afterAll(async () => {
    await api?.stop();
    await etcd?.stop();
  });

  it('creates, reads, replaces and deletes a ConfigMap', async () => {
    const created = await client.post(`${CM}`, configMap('crud', {a: '1'}));
    expect(created.status).toBe(201);
    expect(created.body.metadata).toMatchObject({name: 'crud', namespace: 'default', uid: expect.any(String), resourceVersion: expect.stringMatching(/^\d+$/)});

    const read = await client.get(`${CM}/crud`);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(created.body);

    const replaced = await client.put(`${CM}/crud`, {...read.body, data: {a: '2'}});
    expect(replaced.status).toBe(200);
    expect(replaced.body.data).toEqual({a: '2'});
    expect(replaced.body.metadata.uid).toBe(created.body.metadata.uid);
    expect(Number(replaced.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.body.metadata.resourceVersion));

    const deleted = await client.delete(`${CM}/crud`);
    expect(deleted.status).toBe(200);
    const gone = await client.get(`${CM}/crud`);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({kind: 'Status', reason: 'NotFound', message: 'configmaps "crud" not found', code: 404});
  });

  it('refuses a second create with 409 AlreadyExists', async () => {
    expect((await client.post(CM, configMap('twice'))).status).toBe(201);
    const again = await client.post(CM, configMap('twice'));
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({kind: 'Status', reason: 'AlreadyExists', message: 'configmaps "twice" already exists'});
  });

  it('refuses an update carrying a stale resourceVersion with 409 Conflict', async () => {
    const v1 = (await client.post(CM, configMap('stale', {n: '0'}))).body;
    expect((await client.put(`${CM}/stale`, {...v1, data: {n: '1'}})).status).toBe(200);
    const conflict = await client.put(`${CM}/stale`, {...v1, data: {n: 'lost'}});
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({
      kind: 'Status',
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on configmaps "stale": the object has been modified; please apply your changes to the latest version and try again',
    });
    expect((await client.get(`${CM}/stale`)).body.data).toEqual({n: '1'});
  });

  it.each([
    ['create', 'POST', `${CM}?dryRun=All`, configMap('dry-new', {x: '1'})],
    ['update', 'PUT', `${CM}/dry-existing?dryRun=All`, undefined],
    ['delete', 'DELETE', `${CM}/dry-existing?dryRun=All`, undefined],
  ])('does not persist a dry-run %s', async (verb, method, path, body) => {
    const existing = await client.get(`${CM}/dry-existing`);
    const original = existing.status === 200 ? existing.body : (await client.post(CM, configMap('dry-existing', {x: 'original'}))).body;
    const answer = await client.request(method, path, {body: body ?? (method === 'PUT' ? {...original, data: {x: 'changed'}} : undefined)});
    expect(answer.status).toBeLessThan(300);
    if (verb === 'create') expect((await client.get(`${CM}/dry-new`)).status).toBe(404);
    else expect((await client.get(`${CM}/dry-existing`)).body).toEqual(original);
  });

  it('filters lists by label and field selectors', async () => {
    for (const [name, tier] of [['sel-a', 'front'], ['sel-b', 'back'], ['sel-c', 'front']]) {
      expect((await client.post(CM, configMap(name, {}, {suite: 'selectors', tier}))).status).toBe(201);
    }
    const cases: Array<[string, string[]]> = [
      ['labelSelector=suite%3Dselectors', ['sel-a', 'sel-b', 'sel-c']],
      ['labelSelector=suite%3Dselectors,tier%3Dfront', ['sel-a', 'sel-c']],
      ['labelSelector=suite%3Dselectors,tier!%3Dfront', ['sel-b']],
      ['labelSelector=tier+in+(back)', ['sel-b']],
      ['labelSelector=suite%3Dselectors&fieldSelector=metadata.name%3Dsel-c', ['sel-c']],
      ['labelSelector=suite%3Dselectors&fieldSelector=metadata.name!%3Dsel-c', ['sel-a', 'sel-b']],
    ];
    for (const [query, expected] of cases) {
      const list = await client.get(`${CM}?${query}`);
      expect({query, status: list.status, names: names(list.body)}).toEqual({query, status: 200, names: expected});
    }
    const bad = await client.get(`${CM}?fieldSelector=data.x%3Dy`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({kind: 'Status', reason: 'BadRequest'});
  });

  it('pages a list with limit and continue, missing and repeating nothing', async () => {
    await Promise.all(Array.from({length: 7}, (_, i) => client.post(CM, configMap(`page-${i}`, {}, {suite: 'paging'}))));
    const seen: string[] = [];
    let token = '';
    let pages = 0;
    do {
      const page = await client.get(`${CM}?labelSelector=suite%3Dpaging&limit=3${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(3);
      seen.push(...names(page.body));
      token = page.body.metadata.continue ?? '';
      pages++;
    } while (token && pages < 10);
    expect(pages).toBe(3);
    expect(seen).toEqual(Array.from({length: 7}, (_, i) => `page-${i}`));
    const badToken = await client.get(`${CM}?limit=3&continue=not-a-token`);
    expect(badToken.status).toBe(400);
  });

  it('resumes a watch from a resourceVersion, replaying the events after it', async () => {
    const first = (await client.post(CM, configMap('resume', {v: '1'}))).body;
    const rv = first.metadata.resourceVersion;
    await client.put(`${CM}/resume`, {...first, data: {v: '2'}});
    await client.delete(`${CM}/resume`);

    const watch = client.watch(`${CM}?watch=1&fieldSelector=metadata.name%3Dresume&resourceVersion=${rv}`);
    try {
      expect(await watch.status).toBe(200);
      await watch.next((e) => e.type === 'DELETED');
      expect(watch.events.map((e) => [e.type, e.object.data?.v])).toEqual([
        ['MODIFIED', '2'],
        ['DELETED', '2'],
      ]);
      // Then live events follow.
      await client.post(CM, configMap('resume', {v: '3'}));
      const added = await watch.next((e) => e.type === 'ADDED');
      expect(added.object.data).toEqual({v: '3'});
    } finally {
      watch.close();
    }
  });

  it('answers 410 Gone for a resourceVersion older than the watch window and the compacted history', async () => {
    const old = (await client.post(CM, configMap('compacted'))).body.metadata.resourceVersion;
    // More configmap events than the watch cache keeps (5), then time for the compactor (300ms
    // interval) to drop the store's history up to a revision after `old`.
    const deadline = Date.now() + 10_000;
    let expired: {type: string; object: any} | undefined;
    let exact: {status: number; body: any} | undefined;
    for (let round = 0; (!expired || exact?.status !== 410) && Date.now() < deadline; round++) {
      for (let i = 0; i < 6; i++) await client.put(`${CM}/compacted`, {...(await client.get(`${CM}/compacted`)).body, data: {round: String(round), i: String(i)}});
      await sleep(300);
      const watch = client.watch(`${CM}?watch=1&resourceVersion=${old}`);
      const first = await watch.next(() => true, 5000).catch(() => undefined);
      watch.close();
      if (first?.type === 'ERROR') expired = first;
      exact = await client.get(`${CM}?resourceVersion=${old}&resourceVersionMatch=Exact`);
    }
    expect(expired?.object).toMatchObject({kind: 'Status', code: 410, reason: 'Expired', message: expect.stringContaining('too old resource version')});
    expect(exact?.status).toBe(410);
    expect(exact?.body).toMatchObject({kind: 'Status', reason: 'Expired', code: 410});
  });

  if (engine === 'etcd') {
    it('fails /readyz while etcd is down and passes again once it is back', async () => {
      const ready = async () => (await client.get('/readyz?verbose', {timeoutMs: 8000})).status;
      expect(await ready()).toBe(200);
      await etcd!.kill();
      try {
        // The kvstore check pings with --kvstore-readycheck-timeout (2s): it fails within a few seconds.
        let verbose = {status: 0, text: ''};
        await client.waitFor(
          async () => {
            verbose = await client.get('/readyz?verbose', {timeoutMs: 8000});
            return verbose.text.includes('[-]kvstore failed: reason withheld');
          },
          'the kvstore readyz check to fail with etcd down',
          15_000,
        );
        expect(verbose.status).toBe(500);
        expect(verbose.text.trimEnd().split('\n').at(-1)).toBe('readyz check failed');
        // Liveness does not follow the store: a restart would not bring etcd back.
      } finally {
        await etcd!.restart();
      }
      await client.waitFor(async () => (await ready()) === 200, 'readyz to pass with etcd back', 20_000);
      expect((await client.post(CM, configMap('after-etcd-restart'))).status).toBe(201);
    }, 45_000);
  }
});

describe.each<Engine>(['sqlite', 'etcd'])('authentication and authorization on %s', (engine) => {
  let etcd: EtcdServer | undefined;
  let api: InProcessServer;
  let tokenDir: string;

  beforeAll(async () => {
    if (engine === 'etcd') etcd = await startEtcd();
    const {mkdtempSync} = await import('node:fs');
    const {tmpdir} = await import('node:os');
    tokenDir = mkdtempSync(join(tmpdir(), 'orch-tokens-'));
    const tokenFile = join(tokenDir, 'tokens.csv');
    writeFileSync(tokenFile, 'reader-token,jane,1001,"developers"\n');
    api = await startApiServer({
      engine,
      etcdEndpoint: etcd?.endpoint,
      config: {anonymousAuth: false, tokenAuthFile: tokenFile, authorizationModes: ['RBAC']},
    });
  });
  afterAll(async () => {
    await api?.stop();
    await etcd?.stop();
    const {rmSync} = await import('node:fs');
    if (tokenDir) rmSync(tokenDir, {recursive: true, force: true});
  });

  it('answers 401 to a request with no credentials when anonymous auth is off', async () => {
    const anonymous = api.client.as({clientCert: false});
    try {
      for (const path of [CM, '/readyz', '/api']) {
        const r = await anonymous.get(path);
        expect({path, status: r.status, body: r.body}).toEqual({
          path,
          status: 401,
          body: {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'Unauthorized', reason: 'Unauthorized', code: 401},
        });
      }
      expect((await anonymous.as({clientCert: false, token: 'wrong-token'}).get(CM)).status).toBe(401);
    } finally {
      anonymous.close();
    }
  });

  it('forbids a token user with no bindings (403), then allows it after a RoleBinding to view', async () => {
    const jane = api.client.as({clientCert: false, token: 'reader-token'});
    try {
      const denied = await jane.get(CM);
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({
        kind: 'Status',
        reason: 'Forbidden',
        message: 'configmaps is forbidden: User "jane" cannot list resource "configmaps" in API group "" in the namespace "default"',
        details: {kind: 'configmaps'},
      });
      // The admin (system:masters, by its client certificate) binds jane to the default `view` role.
      const binding = {
        apiVersion: 'rbac.orch.io/v1',
        kind: 'RoleBinding',
        metadata: {name: 'jane-view', namespace: 'default'},
        roleRef: {apiGroup: 'rbac.orch.io', kind: 'ClusterRole', name: 'view'},
        subjects: [{apiGroup: 'rbac.orch.io', kind: 'User', name: 'jane'}],
      };
      expect((await api.client.post('/apis/rbac.orch.io/v1/namespaces/default/rolebindings', binding)).status).toBe(201);
      await jane.waitFor(async () => (await jane.get(CM)).status === 200, 'the binding to take effect', 10_000);
      // `view` reads, never writes, and only in the bound namespace.
      expect((await jane.post(CM, configMap('by-jane'))).status).toBe(403);
      expect((await jane.get('/api/v1/namespaces/orch-system/configmaps')).status).toBe(403);
    } finally {
      jane.close();
    }
  });
});
