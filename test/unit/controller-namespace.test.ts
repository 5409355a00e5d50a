/**
 * The namespace controller against the real REST API (startTestApi): a deleted namespace is
 * emptied across groups and goes away, other namespaces are untouched, content held by a
 * finalizer keeps the namespace Terminating with upstream's conditions until the finalizer goes;
 * plus table tests of the pure parts (which resources, which conditions, how long to wait).
 */
import { describe, expect, it } from '@jest/globals';
import type { RunningController } from '../../src/daemons/controller-manager/controllers/types.js';
import {
  collectionPath,
  deletableResources,
  namespaceController,
  podGraceEstimateSeconds,
  remainingRequeueSeconds,
  updateConditions,
  type DeletionFindings,
} from '../../src/daemons/controller-manager/controllers/namespace.js';
import { call } from '../helpers/memory-store.js';
import { eventually as eventuallyWithin, useControllerHarness } from '../helpers/controller-harness.js';

const eventually = <T,>(probe: () => Promise<T | undefined | false>) => eventuallyWithin(probe, 8000);

const h = useControllerHarness();

function startController(options: Record<string, unknown>): Promise<RunningController> {
  return h.start(namespaceController, options);
}

const configMap = (name: string, extra: Record<string, unknown> = {}) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, ...extra }, data: { k: 'v' } });

async function create(path: string, body: unknown): Promise<void> {
  const reply = await call(h.api, 'POST', path, { body });
  if (reply.status !== 201) throw new Error(`POST ${path}: ${reply.status} ${reply.text}`);
}

async function fill(ns: string): Promise<void> {
  await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  await create(`/api/v1/namespaces/${ns}/configmaps`, configMap('settings'));
  await create(`/api/v1/namespaces/${ns}/secrets`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, stringData: { a: 'b' } });
  await create(`/api/v1/namespaces/${ns}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web' }, spec: { containers: [{ name: 'c', image: 'nginx' }] } });
  await create(`/apis/apps/v1/namespaces/${ns}/deployments`, {
    apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'web' },
    spec: { selector: { matchLabels: { app: 'web' } }, template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } } },
  });
}

const count = async (path: string) => ((await call(h.api, 'GET', path)).body?.items ?? []).length;

describe('namespace controller (against the REST API)', () => {
  it('empties a deleted namespace in every group, removes its finalizer so it goes away, and leaves other namespaces alone', async () => {
    await fill('doomed');
    await fill('kept');
    const controller = await startController({ 'concurrent-namespace-syncs': 3 });

    expect((await call(h.api, 'DELETE', '/api/v1/namespaces/doomed')).body.status.phase).toBe('Terminating');
    await eventually(async () => (await call(h.api, 'GET', '/api/v1/namespaces/doomed')).status === 404);

    for (const kind of ['configmaps', 'secrets', 'pods']) expect(await count(`/api/v1/namespaces/doomed/${kind}`)).toBe(0);
    expect(await count('/apis/apps/v1/namespaces/doomed/deployments')).toBe(0);
    for (const kind of ['configmaps', 'secrets', 'pods']) expect(await count(`/api/v1/namespaces/kept/${kind}`)).toBe(1);
    expect(await count('/apis/apps/v1/namespaces/kept/deployments')).toBe(1);
    expect((await call(h.api, 'GET', '/api/v1/namespaces/kept')).body.status.phase).toBe('Active');

    expect(controller.snapshot()).toMatchObject({ name: 'namespace', workers: 3, queueDepth: 0 });
  });

  it('keeps a namespace Terminating while content held by a finalizer remains, says so in its conditions, and finishes once the finalizer goes', async () => {
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'held' } });
    await create('/api/v1/namespaces/held/configmaps', configMap('pinned', { finalizers: ['example.com/hold'] }));
    await create('/api/v1/namespaces/held/configmaps', configMap('loose'));
    // A short sync period: the controller's own wait for finalizers is upstream's 8 seconds.
    await startController({ 'namespace-sync-period': { ms: 200, text: '200ms' } });
    await call(h.api, 'DELETE', '/api/v1/namespaces/held');

    const namespace = await eventually(async () => {
      const ns = (await call(h.api, 'GET', '/api/v1/namespaces/held')).body;
      return ns.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'NamespaceContentRemaining' && c.status === 'True') && ns;
    });
    const byType = Object.fromEntries(namespace.status.conditions.map((c: { type: string }) => [c.type, c]));
    expect(byType.NamespaceContentRemaining).toMatchObject({ status: 'True', reason: 'SomeResourcesRemain', message: 'Some resources are remaining: configmaps. has 1 resource instances' });
    expect(byType.NamespaceFinalizersRemaining).toMatchObject({
      status: 'True', reason: 'SomeFinalizersRemain', message: 'Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances',
    });
    expect(byType.NamespaceDeletionDiscoveryFailure).toMatchObject({ status: 'False', reason: 'ResourcesDiscovered' });
    expect(byType.NamespaceDeletionContentFailure).toMatchObject({ status: 'False', reason: 'ContentDeleted' });
    expect(namespace.spec.finalizers).toEqual(['orch']);
    expect(namespace.status.phase).toBe('Terminating');
    expect((await call(h.api, 'GET', '/api/v1/namespaces/held/configmaps/loose')).status).toBe(404);

    await call(h.api, 'PATCH', '/api/v1/namespaces/held/configmaps/pinned', { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    await eventually(async () => (await call(h.api, 'GET', '/api/v1/namespaces/held')).status === 404);
  });

  it('does nothing to a namespace that is not being deleted', async () => {
    await create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'live' } });
    await create('/api/v1/namespaces/live/configmaps', configMap('settings'));
    const controller = await startController({ 'namespace-sync-period': { ms: 50, text: '50ms' } });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const ns = (await call(h.api, 'GET', '/api/v1/namespaces/live')).body;
    expect(ns.spec.finalizers).toEqual(['orch']);
    expect(ns.status).toEqual({ phase: 'Active' });
    expect(await count('/api/v1/namespaces/live/configmaps')).toBe(1);
    expect(controller.snapshot().workers).toBe(10);
  });
});

describe('deletableResources', () => {
  const lists = [
    {
      groupVersion: 'v1',
      resources: [
        { name: 'pods', namespaced: true, kind: 'Pod', verbs: ['create', 'delete', 'deletecollection', 'get', 'list'] },
        { name: 'pods/status', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] },
        { name: 'nodes', namespaced: false, kind: 'Node', verbs: ['delete', 'list'] },
        { name: 'bindings', namespaced: true, kind: 'Binding', verbs: ['create'] },
        { name: 'events', namespaced: true, kind: 'Event', verbs: ['delete', 'list'] },
      ],
    },
    { groupVersion: 'example.io/v2', resources: [{ name: 'widgets', namespaced: true, kind: 'Widget', verbs: ['delete', 'list', 'deletecollection'] }] },
    {
      groupVersion: 'example.io/v1',
      resources: [
        { name: 'widgets', namespaced: true, kind: 'Widget', verbs: ['delete', 'list'] },
        { name: 'gadgets', namespaced: true, kind: 'Gadget', verbs: ['delete', 'list'] },
      ],
    },
  ];

  it('keeps namespaced, listable, deletable resources once each, in their preferred version', () => {
    expect(deletableResources(lists)).toEqual([
      { group: '', version: 'v1', resource: 'pods', deleteCollection: true },
      { group: '', version: 'v1', resource: 'events', deleteCollection: false },
      { group: 'example.io', version: 'v2', resource: 'widgets', deleteCollection: true },
      { group: 'example.io', version: 'v1', resource: 'gadgets', deleteCollection: false },
    ]);
  });

  it.each([
    [{ group: '', version: 'v1', resource: 'pods' }, 'ns', '/api/v1/namespaces/ns/pods'],
    [{ group: 'apps', version: 'v1', resource: 'deployments' }, 'team-a', '/apis/apps/v1/namespaces/team-a/deployments'],
  ])('collectionPath(%j, %s) = %s', (resource, ns, path) => {
    expect(collectionPath(resource, ns)).toBe(path);
  });
});

describe('updateConditions', () => {
  const clean: DeletionFindings = { discoveryErrors: [], contentErrors: [], remaining: {}, finalizers: {} };
  const T0 = '2024-01-01T00:00:00Z';
  const T1 = '2024-01-01T00:01:00Z';

  it('adds the five condition types, all ok, to a namespace without conditions', () => {
    const { conditions, changed } = updateConditions([], clean, T0);
    expect(changed).toBe(true);
    expect(conditions.map((c) => [c.type, c.status, c.reason])).toEqual([
      ['NamespaceDeletionDiscoveryFailure', 'False', 'ResourcesDiscovered'],
      ['NamespaceDeletionGroupVersionParsingFailure', 'False', 'ParsedGroupVersions'],
      ['NamespaceDeletionContentFailure', 'False', 'ContentDeleted'],
      ['NamespaceContentRemaining', 'False', 'ContentRemoved'],
      ['NamespaceFinalizersRemaining', 'False', 'ContentHasNoFinalizers'],
    ]);
    expect(conditions.every((c) => c.lastTransitionTime === T0)).toBe(true);
  });

  it('changes nothing (and keeps the transition times) when the findings are the same', () => {
    const first = updateConditions([], clean, T0).conditions;
    const again = updateConditions(first, clean, T1);
    expect(again.changed).toBe(false);
    expect(again.conditions).toEqual(first);
  });

  it.each([
    ['discovery failures', { discoveryErrors: ['apps/v1: boom', 'batch/v1: bang'] }, 'NamespaceDeletionDiscoveryFailure', 'DiscoveryFailed',
      'Discovery failed for some groups, 2 failing: unable to retrieve the complete list of server APIs: apps/v1: boom, batch/v1: bang'],
    ['one content failure', { contentErrors: ['forbidden'] }, 'NamespaceDeletionContentFailure', 'ContentDeletionFailed',
      'Failed to delete all resource types, 1 remaining: forbidden'],
    ['two content failures', { contentErrors: ['a', 'b'] }, 'NamespaceDeletionContentFailure', 'ContentDeletionFailed',
      'Failed to delete all resource types, 2 remaining: [a, b]'],
    ['remaining content, sorted', { remaining: { 'pods.': 2, 'deployments.apps': 1, 'secrets.': 0 } }, 'NamespaceContentRemaining', 'SomeResourcesRemain',
      'Some resources are remaining: deployments.apps has 1 resource instances, pods. has 2 resource instances'],
    ['remaining finalizers', { finalizers: { 'b.io/x': 1, 'a.io/y': 3 } }, 'NamespaceFinalizersRemaining', 'SomeFinalizersRemain',
      'Some content in the namespace has finalizers remaining: a.io/y in 3 resource instances, b.io/x in 1 resource instances'],
  ])('%s', (_what, findings, type, reason, message) => {
    const before = updateConditions([], clean, T0).conditions;
    const { conditions, changed } = updateConditions(before, { ...clean, ...findings }, T1);
    expect(changed).toBe(true);
    const condition = conditions.find((c) => c.type === type);
    expect(condition).toEqual({ type, status: 'True', reason, message, lastTransitionTime: T1 });
    // The other types stay ok, with their old transition time.
    expect(conditions.filter((c) => c.type !== type).every((c) => c.status === 'False' && c.lastTransitionTime === T0)).toBe(true);
  });
});

describe('waiting for content', () => {
  it.each([
    [[], 0],
    [[{ spec: { terminationGracePeriodSeconds: 30 }, status: { phase: 'Running' } }, { spec: { terminationGracePeriodSeconds: 60 }, status: { phase: 'Pending' } }], 60],
    [[{ spec: { terminationGracePeriodSeconds: 90 }, status: { phase: 'Succeeded' } }, { spec: { terminationGracePeriodSeconds: 10 } }], 10],
  ])('podGraceEstimateSeconds of %j is %d', (pods, seconds) => {
    expect(podGraceEstimateSeconds(pods)).toBe(seconds);
  });

  it.each([[0, 1], [15, 8], [30, 16]])('an estimate of %ds is looked at again after %ds (upstream: estimate/2 + 1)', (estimate, wait) => {
    expect(remainingRequeueSeconds(estimate)).toBe(wait);
  });
});
