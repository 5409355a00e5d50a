/**
 * The garbage collector against the real REST API (in-memory store): background deletion of
 * dependents whose owner is gone (deleted, or replaced under the same name), foreground deletion
 * that waits for blocking dependents, orphaning, owners served from a CRD, and
 * --enable-garbage-collector=false. Plus table tests of the pure decision and graph.
 */
import {describe, expect, it} from '@jest/globals';
import type {RestClient} from '../../src/client/rest-client.js';
import {ApiStatusError} from '../../src/client/errors.js';
import {klog} from '../../src/lib/klog.js';
import {
  createGarbageCollectorController,
  decideForDependent,
  deletableResources,
  DependencyGraph,
  nodeFor,
  type MonitoredResource,
} from '../../src/daemons/controller-manager/controllers/garbage-collector.js';
import type {RunningController} from '../../src/daemons/controller-manager/controllers/types.js';
import {pollUntil, useControllerHarness} from '../helpers/controller-harness.js';

const NS = 'default';
const RS = `/apis/apps/v1/namespaces/${NS}/replicasets`;
const DEPLOY = `/apis/apps/v1/namespaces/${NS}/deployments`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const CMS = `/api/v1/namespaces/${NS}/configmaps`;

/** How long each wait for the collector to act may last. */
const GC_WAIT_MS = 8000;

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: {name: string; uid: string; deletionTimestamp?: string; finalizers?: string[]; ownerReferences?: {uid: string}[]};
}

const ref = (owner: Obj, block?: boolean) => ({apiVersion: owner.apiVersion, kind: owner.kind, name: owner.metadata.name, uid: owner.metadata.uid, ...(block === undefined ? {} : {blockOwnerDeletion: block})});

async function create(client: RestClient, path: string, body: Record<string, unknown>): Promise<Obj> {
  return (await client.request<Obj>({method: 'POST', path, body})).body;
}

const template = {metadata: {labels: {app: 'x'}}, spec: {containers: [{name: 'c', image: 'nginx'}]}};
const replicaSet = (client: RestClient, name: string, owners: unknown[] = []) =>
  create(client, RS, {apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: {name, ownerReferences: owners}, spec: {selector: {matchLabels: {app: 'x'}}, template}});
/** Pods without a node are deleted at once (no grace period), so the test sees them go. */
const pod = (client: RestClient, name: string, owners: unknown[], finalizers?: string[]) =>
  create(client, PODS, {apiVersion: 'v1', kind: 'Pod', metadata: {name, ownerReferences: owners, finalizers}, spec: template.spec});
const configMap = (client: RestClient, name: string, owners: unknown[] = []) =>
  create(client, CMS, {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, ownerReferences: owners}});

async function read(client: RestClient, path: string): Promise<Obj | undefined> {
  try {
    return await client.get<Obj>(path);
  } catch (error) {
    if (error instanceof ApiStatusError && error.code === 404) return undefined;
    throw error;
  }
}

const gone = (client: RestClient, path: string) => pollUntil(() => read(client, path), (o) => o === undefined, GC_WAIT_MS);
const del = (client: RestClient, path: string, propagationPolicy?: string) =>
  client.request({method: 'DELETE', path, body: propagationPolicy ? {propagationPolicy} : undefined});

// ---------------------------------------------------------------------------------------------

describe('garbage collector against the REST API', () => {
  const h = useControllerHarness({logger: klog('test')});
  const start = (options: Record<string, unknown> = {}): Promise<RunningController> =>
    h.start(createGarbageCollectorController({discoveryResyncMs: 200}), {'concurrent-gc-syncs': 4, ...options});

  it('deletes the dependents of a deleted owner, and only drops the reference when another owner remains', async () => {
    const {client} = h;
    await start();
    const rs = await replicaSet(client, 'web');
    const keeper = await configMap(client, 'keeper');
    await pod(client, 'web-1', [ref(rs)]);
    await pod(client, 'web-2', [ref(rs)]);
    await configMap(client, 'web-config', [ref(rs)]);
    await pod(client, 'shared', [ref(rs), ref(keeper)]);

    await del(client, `${RS}/web`);
    expect(await gone(client, `${PODS}/web-1`)).toBeUndefined();
    expect(await gone(client, `${PODS}/web-2`)).toBeUndefined();
    expect(await gone(client, `${CMS}/web-config`)).toBeUndefined();
    const shared = await pollUntil(() => read(client, `${PODS}/shared`), (p) => p?.metadata.ownerReferences?.length === 1, GC_WAIT_MS);
    expect(shared!.metadata.ownerReferences).toEqual([ref(keeper)]);
  });

  it('deletes dependents found at start whose owner is missing or was replaced under its name', async () => {
    const {client} = h;
    const old = await replicaSet(client, 'again');
    await del(client, `${RS}/again`);
    const replaced = await replicaSet(client, 'again');
    await pod(client, 'of-old', [ref(old)]);
    await pod(client, 'of-new', [ref(replaced)]);
    await configMap(client, 'of-nobody', [{apiVersion: 'v1', kind: 'ConfigMap', name: 'never', uid: 'no-such-uid'}]);
    await start();
    expect(await gone(client, `${PODS}/of-old`)).toBeUndefined();
    expect(await gone(client, `${CMS}/of-nobody`)).toBeUndefined();
    expect((await read(client, `${PODS}/of-new`))?.metadata.ownerReferences).toEqual([ref(replaced)]);
  });

  it('foreground: dependents go first, the owner waits for blocking ones, then goes', async () => {
    const {client} = h;
    await start();
    const deploy = await create(client, DEPLOY, {apiVersion: 'apps/v1', kind: 'Deployment', metadata: {name: 'app'}, spec: {selector: {matchLabels: {app: 'x'}}, template}});
    const rs = await replicaSet(client, 'app-1', [ref(deploy, true)]);
    // The test's own finalizer keeps this pod (and so its owners) around until the test lets go.
    await pod(client, 'app-1-a', [ref(rs, true)], ['example.com/hold']);
    await configMap(client, 'app-settings', [ref(deploy)]);

    await del(client, `${DEPLOY}/app`, 'Foreground');
    expect(await gone(client, `${CMS}/app-settings`)).toBeUndefined();
    const held = await pollUntil(() => read(client, `${PODS}/app-1-a`), (p) => p?.metadata.deletionTimestamp !== undefined, GC_WAIT_MS);
    expect(held!.metadata.deletionTimestamp).toBeDefined();
    // The blocked owners are still there, each waiting with the foregroundDeletion finalizer.
    expect((await read(client, `${RS}/app-1`))?.metadata.finalizers).toEqual(['foregroundDeletion']);
    expect((await read(client, `${DEPLOY}/app`))?.metadata.finalizers).toEqual(['foregroundDeletion']);

    await client.patch(`${PODS}/app-1-a`, 'application/merge-patch+json', {metadata: {finalizers: null}});
    expect(await gone(client, `${RS}/app-1`)).toBeUndefined();
    expect(await gone(client, `${DEPLOY}/app`)).toBeUndefined();
  });

  it('orphan: dependents lose the reference and stay, the owner goes', async () => {
    const {client} = h;
    await start();
    const rs = await replicaSet(client, 'lonely');
    const other = await configMap(client, 'other-owner');
    await pod(client, 'lonely-1', [ref(rs, true)]);
    await pod(client, 'lonely-2', [ref(other), ref(rs)]);

    await del(client, `${RS}/lonely`, 'Orphan');
    expect(await gone(client, `${RS}/lonely`)).toBeUndefined();
    const first = await read(client, `${PODS}/lonely-1`);
    expect(first).toBeDefined();
    expect(first!.metadata.ownerReferences).toBeUndefined();
    expect((await read(client, `${PODS}/lonely-2`))?.metadata.ownerReferences).toEqual([ref(other)]);
  });

  it('watches resources served from a CRD created after it started', async () => {
    const {client} = h;
    await start();
    await client.request({
      method: 'POST',
      path: '/apis/apiextensions.orch.io/v1/customresourcedefinitions',
      body: {
        apiVersion: 'apiextensions.orch.io/v1',
        kind: 'CustomResourceDefinition',
        metadata: {name: 'widgets.example.com'},
        spec: {group: 'example.com', scope: 'Namespaced', names: {plural: 'widgets', kind: 'Widget'}, versions: [{name: 'v1', served: true, storage: true, schema: {openAPIV3Schema: {type: 'object', 'x-kubernetes-preserve-unknown-fields': true}}}]},
      },
    });
    const widgets = `/apis/example.com/v1/namespaces/${NS}/widgets`;
    const widget = await create(client, widgets, {apiVersion: 'example.com/v1', kind: 'Widget', metadata: {name: 'w'}});
    // A custom resource as dependent, deleted in the foreground: the collector must watch widgets to see it.
    await create(client, widgets, {apiVersion: 'example.com/v1', kind: 'Widget', metadata: {name: 'w-part', ownerReferences: [ref(widget, true)]}});
    await configMap(client, 'w-config', [ref(widget)]);
    await del(client, `${widgets}/w`, 'Foreground');
    expect(await gone(client, `${CMS}/w-config`)).toBeUndefined();
    expect(await gone(client, `${widgets}/w-part`)).toBeUndefined();
    expect(await gone(client, `${widgets}/w`)).toBeUndefined();
  });

  it('does nothing with --enable-garbage-collector=false', async () => {
    const {api, client} = h;
    await configMap(client, 'dangling', [{apiVersion: 'v1', kind: 'ConfigMap', name: 'never', uid: 'no-such-uid'}]);
    const running = await start({'enable-garbage-collector': false});
    await running.done;
    expect(running.snapshot()).toMatchObject({workers: 0, details: {enabled: 'false'}});
    const before = api.authorizer.seen.length;
    await new Promise((r) => setTimeout(r, 300));
    // No discovery, list or watch was ever sent, and the dangling dependent is still there.
    expect(api.authorizer.seen.slice(before)).toEqual([]);
    expect(api.authorizer.seen.some((a) => (a as {verb?: string}).verb === 'watch')).toBe(false);
    expect(await read(client, `${CMS}/dangling`)).toBeDefined();
  });
});

// ---------------------------------------------------------------------------------------------
// Pure logic.

describe('decideForDependent', () => {
  const o = (state: 'solid' | 'dangling' | 'waiting', uid = state) => ({uid, state});
  it.each([
    ['a solid owner alone: keep', [o('solid')], [], false, false, {kind: 'keep'}],
    ['solid and gone owners: drop the gone references', [o('solid'), o('dangling'), o('waiting')], [], false, false, {kind: 'removeOwnerReferences', uids: ['dangling', 'waiting']}],
    ['every owner gone: background', [o('dangling')], [], false, false, {kind: 'delete', policy: 'Background', unblockFirst: false}],
    ['the object asked for orphaning itself', [o('dangling')], ['orphan'], false, false, {kind: 'delete', policy: 'Orphan', unblockFirst: false}],
    ['the object asked for foreground itself', [o('dangling')], ['foregroundDeletion'], false, false, {kind: 'delete', policy: 'Foreground', unblockFirst: false}],
    ['an owner waits and this has dependents: foreground', [o('waiting')], [], true, false, {kind: 'delete', policy: 'Foreground', unblockFirst: false}],
    ['... and one of those waits too: unblock first', [o('waiting')], [], true, true, {kind: 'delete', policy: 'Foreground', unblockFirst: true}],
    ['an owner waits, no dependents: background', [o('waiting')], [], false, false, {kind: 'delete', policy: 'Background', unblockFirst: false}],
  ])('%s', (_what, owners, finalizers, hasDependents, deleting, expected) => {
    expect(decideForDependent({owners: owners as {uid: string; state: 'solid'}[], finalizers, hasDependents, aDependentIsDeletingDependents: deleting})).toEqual(expected);
  });
});

describe('deletableResources', () => {
  it('keeps the preferred version of resources with list, watch and delete; drops subresources and events', () => {
    const all = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
    const resources = deletableResources([
      {groupVersion: 'v1', resources: [
        {name: 'pods', kind: 'Pod', namespaced: true, verbs: all},
        {name: 'pods/status', kind: 'Pod', namespaced: true, verbs: ['get', 'patch']},
        {name: 'events', kind: 'Event', namespaced: true, verbs: all},
        {name: 'bindings', kind: 'Binding', namespaced: true, verbs: ['create']},
      ]},
      {groupVersion: 'example.com/v1', resources: [{name: 'widgets', kind: 'Widget', namespaced: true, verbs: all}]},
      {groupVersion: 'example.com/v1beta1', resources: [{name: 'widgets', kind: 'Widget', namespaced: true, verbs: all}]},
    ]);
    expect(resources).toEqual([
      {group: '', version: 'v1', resource: 'pods', kind: 'Pod', namespaced: true},
      {group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true},
    ]);
  });
});

describe('DependencyGraph', () => {
  const cm: MonitoredResource = {group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true};
  const object = (uid: string, owners: {uid: string; block?: boolean}[] = [], finalizers?: string[]) => ({
    metadata: {
      name: uid,
      namespace: NS,
      uid,
      ownerReferences: owners.map((x) => ({apiVersion: 'v1', kind: 'ConfigMap', name: x.uid, uid: x.uid, blockOwnerDeletion: x.block})),
      ...(finalizers ? {deletionTimestamp: '2024-01-01T00:00:00Z', finalizers} : {}),
    },
  });

  it('checks a dependent whose owner it has not seen, and not one whose owner it has', () => {
    const graph = new DependencyGraph();
    expect(graph.upsert(nodeFor(cm, object('child', [{uid: 'owner'}]))).attemptToDelete).toEqual(['child']);
    graph.upsert(nodeFor(cm, object('owner')));
    expect(graph.upsert(nodeFor(cm, object('child2', [{uid: 'owner'}]))).attemptToDelete).toEqual([]);
  });

  it('hands the dependents of a deleted owner to attemptToDelete', () => {
    const graph = new DependencyGraph();
    graph.upsert(nodeFor(cm, object('owner')));
    graph.upsert(nodeFor(cm, object('a', [{uid: 'owner'}])));
    graph.upsert(nodeFor(cm, object('b', [{uid: 'owner'}])));
    expect(graph.remove('owner').attemptToDelete.sort()).toEqual(['a', 'b']);
  });

  it('starts orphaning and foreground deletion on their transitions, and reports blocking dependents', () => {
    const graph = new DependencyGraph();
    graph.upsert(nodeFor(cm, object('owner')));
    graph.upsert(nodeFor(cm, object('blocker', [{uid: 'owner', block: true}])));
    graph.upsert(nodeFor(cm, object('free', [{uid: 'owner'}])));
    expect(graph.blockingDependents('owner').map((n) => n.identity.uid)).toEqual(['blocker']);
    expect(graph.upsert(nodeFor(cm, object('owner', [], ['foregroundDeletion']))).attemptToDelete.sort()).toEqual(['blocker', 'free', 'owner']);
    // A blocking dependent going away wakes the waiting owner.
    expect(graph.remove('blocker').attemptToDelete).toEqual(['owner']);
    graph.upsert(nodeFor(cm, object('o2')));
    expect(graph.upsert(nodeFor(cm, object('o2', [], ['orphan'])))).toEqual({attemptToDelete: [], attemptToOrphan: ['o2']});
  });
});
