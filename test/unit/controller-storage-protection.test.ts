/**
 * The pvc-protection and pv-protection controllers: their pure decisions (which pod keeps which
 * claim, when a finalizer is added or removed), and the controllers against the real REST API: a
 * claim used by a scheduled pod stays while the pod is there and goes once it is deleted; a volume
 * goes once released; finalizers missing on live objects are added. Also that the controller
 * manager's bootstrap role allows every request they make.
 */
import {describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {pvcProtectionFinalizer, pvProtectionFinalizer} from '../../src/api/storage-protection.js';
import {bootstrapClusterRoleBindings, bootstrapClusterRoles} from '../../src/daemons/apiserver/authorization/bootstrap-policy.js';
import {RbacAuthorizer, RbacPolicyIndex} from '../../src/daemons/apiserver/authorization/rbac.js';
import {LivePodLists} from '../../src/daemons/controller-manager/controllers/pvc-live-pods.js';
import {changedFinalizers} from '../../src/daemons/controller-manager/controllers/protection-finalizer.js';
import {pvFinalizerChange, pvProtectionController} from '../../src/daemons/controller-manager/controllers/pv-protection.js';
import {
  claimNamesOf,
  isPodTerminated,
  podEventMayReleaseClaims,
  podUsesClaim,
  pvcFinalizerChange,
  pvcProtectionController,
  type Pod,
} from '../../src/daemons/controller-manager/controllers/pvc-protection.js';
import {clientListWatcher} from '../../src/client/informers/index.js';
import {CONTROLLERS, selectControllers} from '../../src/daemons/controller-manager/controllers/index.js';
import {eventually, pause, pollUntil, useControllerHarness} from '../helpers/controller-harness.js';

const DELETED_AT = '2026-01-01T00:00:00Z';
const claim = (name: string, extra: {deleting?: boolean; finalizers?: string[]; ownerUid?: string} = {}) => ({
  metadata: {
    name,
    namespace: 'default',
    finalizers: extra.finalizers ?? [pvcProtectionFinalizer()],
    ...(extra.deleting ? {deletionTimestamp: DELETED_AT} : {}),
    ...(extra.ownerUid ? {ownerReferences: [{apiVersion: 'v1', kind: 'Pod', name: 'p', uid: extra.ownerUid, controller: true}]} : {}),
  },
});
const pod = (volumes: NonNullable<Pod['spec']>['volumes'], extra: {nodeName?: string; phase?: string; uid?: string; shutDown?: boolean; namespace?: string} = {}): Pod => ({
  metadata: {
    name: 'p',
    namespace: extra.namespace ?? 'default',
    uid: extra.uid ?? 'pod-uid',
    ...(extra.shutDown ? {deletionTimestamp: DELETED_AT, deletionGracePeriodSeconds: 0} : {}),
  },
  spec: {nodeName: extra.nodeName ?? 'node-1', volumes},
  status: {phase: extra.phase ?? 'Running'},
});
const pvcVolume = (claimName: string) => ({name: 'data', persistentVolumeClaim: {claimName}});
const ephemeralVolume = (name: string) => ({name, ephemeral: {volumeClaimTemplate: {spec: {}}}});

describe('which pod keeps a claim (podUsesClaim)', () => {
  it.each<[string, Pod, ReturnType<typeof claim>, boolean]>([
    ['a scheduled pod naming it', pod([pvcVolume('data')]), claim('data'), true],
    ['a scheduled pod naming another claim', pod([pvcVolume('other')]), claim('data'), false],
    ['a pod not scheduled (the agent never starts it)', pod([pvcVolume('data')], {nodeName: ''}), claim('data'), false],
    ['a pod of another namespace', pod([pvcVolume('data')], {namespace: 'other'}), claim('data'), false],
    // As upstream: a finished pod's volumes may still be unmounting; only its removal frees the claim.
    ['a finished pod naming it', pod([pvcVolume('data')], {phase: 'Succeeded'}), claim('data'), true],
    ['a pod whose ephemeral volume the claim was created for', pod([ephemeralVolume('scratch')]), claim('p-scratch', {ownerUid: 'pod-uid'}), true],
    ['a pod of that name but not the claim owner (an earlier pod)', pod([ephemeralVolume('scratch')]), claim('p-scratch', {ownerUid: 'old-uid'}), false],
    ['a shut-down pod with an ephemeral volume', pod([ephemeralVolume('scratch')], {shutDown: true}), claim('p-scratch', {ownerUid: 'pod-uid'}), false],
    ['a shut-down pod naming it in a persistentVolumeClaim volume', pod([pvcVolume('data')], {shutDown: true}), claim('data'), true],
  ])('%s', (_label, p, c, expected) => {
    expect(podUsesClaim(p, c)).toBe(expected);
  });

  it('indexes a pod by the claims of its persistentVolumeClaim and ephemeral volumes', () => {
    expect(claimNamesOf(pod([pvcVolume('data'), ephemeralVolume('scratch'), {name: 'cfg'}]))).toEqual(['data', 'p-scratch']);
  });
});

describe('which pod events may free a claim', () => {
  it.each<[string, Pod, boolean, boolean]>([
    ['a running scheduled pod', pod([pvcVolume('data')]), false, false],
    ['a deleted pod', pod([pvcVolume('data')]), true, true],
    ['a finished pod', pod([pvcVolume('data')], {phase: 'Failed'}), false, true],
    ['an unscheduled pod', pod([pvcVolume('data')], {nodeName: ''}), false, true],
  ])('%s', (_label, p, deleted, expected) => {
    expect(podEventMayReleaseClaims(p, deleted)).toBe(expected);
  });

  it('counts a pod being deleted as terminated only once no container runs', () => {
    const deleting = (state: object): Pod => ({metadata: {name: 'p', deletionTimestamp: DELETED_AT}, status: {phase: 'Running', containerStatuses: [{state}]}});
    expect(isPodTerminated(deleting({running: {}}))).toBe(false);
    expect(isPodTerminated(deleting({terminated: {exitCode: 0}}))).toBe(true);
    expect(isPodTerminated({metadata: {name: 'p'}, status: {phase: 'Running', containerStatuses: [{state: {terminated: {}}}]}})).toBe(false);
  });
});

describe('finalizer decisions', () => {
  const other = 'example.com/keep';
  it.each<[string, ReturnType<typeof claim>, boolean, string | undefined]>([
    ['a claim in use being deleted keeps it', claim('c', {deleting: true}), true, undefined],
    ['an unused claim being deleted loses it', claim('c', {deleting: true}), false, 'remove'],
    ['a live claim without it gets it', claim('c', {finalizers: [other]}), false, 'add'],
    ['a live claim with it is left alone', claim('c'), true, undefined],
    ['a claim being deleted without it is left alone', claim('c', {deleting: true, finalizers: [other]}), false, undefined],
  ])('%s', (_label, c, inUse, expected) => {
    expect(pvcFinalizerChange(c, inUse)).toBe(expected);
  });

  const volume = (phase: string, deleting: boolean, finalizers = [pvProtectionFinalizer()]) => ({
    metadata: {name: 'v', finalizers, ...(deleting ? {deletionTimestamp: DELETED_AT} : {})},
    status: {phase},
  });
  it.each<[string, ReturnType<typeof volume>, string | undefined]>([
    ['a bound volume being deleted keeps it', volume('Bound', true), undefined],
    ['a released volume being deleted loses it', volume('Released', true), 'remove'],
    ['an available volume being deleted loses it', volume('Available', true), 'remove'],
    ['a live volume without it gets it', volume('Available', false, []), 'add'],
    ['a live volume with it is left alone', volume('Bound', false), undefined],
  ])('%s', (_label, v, expected) => {
    expect(pvFinalizerChange(v)).toBe(expected);
  });

  it('removes only its own finalizer and adds its own last', () => {
    expect(changedFinalizers([other, pvcProtectionFinalizer()], pvcProtectionFinalizer(), 'remove')).toEqual([other]);
    expect(changedFinalizers([other], pvcProtectionFinalizer(), 'add')).toEqual([other, pvcProtectionFinalizer()]);
  });

  it('uses the finalizer keys of the label domain', () => {
    expect(pvcProtectionFinalizer()).toBe(`${names().labelDomain}/pvc-protection`);
    expect(pvProtectionFinalizer()).toBe(`${names().labelDomain}/pv-protection`);
  });
});

describe('live pod lists shared between claims', () => {
  const lists = () => {
    const taken: string[] = [];
    let fail = false;
    const live = new LivePodLists<string>(async (namespace) => {
      taken.push(namespace);
      if (fail) throw new Error('list failed');
      return [`${namespace}-pod-${taken.length}`];
    });
    return {live, taken, failNext: (v: boolean) => (fail = v)};
  };

  it('answers every claim seen before the list from one list per namespace', async () => {
    const {live, taken} = lists();
    live.observed('a/one');
    live.observed('a/two');
    live.observed('b/one');
    expect(await live.pods('a', 'a/one')).toEqual(['a-pod-1']);
    expect(await live.pods('a', 'a/two')).toEqual(['a-pod-1']);
    expect(await live.pods('b', 'b/one')).toEqual(['b-pod-2']);
    expect(taken).toEqual(['a', 'b']);
  });

  it('lists again for a claim seen after the list, after a pod change, after a failure and after clear', async () => {
    const {live, failNext} = lists();
    live.observed('a/one');
    await live.pods('a', 'a/one');
    live.observed('a/late');
    expect(await live.pods('a', 'a/late')).toEqual(['a-pod-2']);
    live.podsChanged('a');
    expect(await live.pods('a', 'a/one')).toEqual(['a-pod-3']);
    failNext(true);
    await expect(live.pods('b', 'b/x')).rejects.toThrow('list failed');
    failNext(false);
    expect(await live.pods('b', 'b/x')).toEqual(['b-pod-5']);
    live.clear();
    expect(await live.pods('a', 'a/one')).toEqual(['a-pod-6']);
    // A claim never seen (queued by a pod event only) gets a fresh list.
    expect(await live.pods('a', 'a/unknown')).toEqual(['a-pod-7']);
  });
});

describe('registration', () => {
  it('runs both controllers by default under upstream\'s --controllers names', () => {
    const selected = selectControllers(['*']).map((c) => c.name);
    expect(selected).toEqual(expect.arrayContaining(['pvc-protection', 'pv-protection']));
    expect(selectControllers(['*', '-pvc-protection'], CONTROLLERS).map((c) => c.name)).not.toContain('pvc-protection');
  });

  it('the controller manager\'s bootstrap role allows every request they make', () => {
    const rbac = new RbacAuthorizer(RbacPolicyIndex.from([...bootstrapClusterRoles(), ...bootstrapClusterRoleBindings()]));
    const user = {name: names().users.controllerManager, groups: ['system:authenticated']};
    const requests: [string, string, string?][] = [
      ['list', 'persistentvolumeclaims'], ['watch', 'persistentvolumeclaims'], ['list', 'persistentvolumes'], ['watch', 'persistentvolumes'],
      ['list', 'pods'], ['watch', 'pods'], ['list', 'pods', 'default'], ['patch', 'persistentvolumeclaims', 'default'], ['patch', 'persistentvolumes'],
    ];
    for (const [verb, resource, namespace] of requests) {
      const decision = rbac.authorize({user, verb, resourceRequest: true, apiGroup: '', resource, namespace, name: verb === 'patch' ? 'x' : undefined}).decision;
      expect(`${verb} ${resource}: ${decision}`).toBe(`${verb} ${resource}: Allow`);
    }
  });
});

const h = useControllerHarness();

describe('the controllers against the REST API', () => {
  type Meta = {metadata: {finalizers?: string[]; deletionTimestamp?: string}};
  const read = async <T>(path: string): Promise<T | undefined> => {
    try {
      return await h.client.get<T>(path);
    } catch {
      return undefined;
    }
  };
  const create = (path: string, body: object) => h.client.request({method: 'POST', path, body});
  const claimsPath = '/api/v1/namespaces/default/persistentvolumeclaims';
  const podsPath = '/api/v1/namespaces/default/pods';
  const pvcBody = (name: string, finalizers?: string[]) => ({
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: {name, ...(finalizers ? {finalizers} : {})},
    spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '1Gi'}}},
  });

  it('keeps a claim a scheduled pod uses until the pod is deleted, and adds the missing finalizer', async () => {
    // Created without the finalizer (this API runs no admission): the controller adds it.
    await create(claimsPath, pvcBody('data'));
    await create(podsPath, {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'user'}, spec: {nodeName: 'node-1', containers: [{name: 'c', image: 'busybox'}], volumes: [pvcVolume('data')]}});
    await h.start(pvcProtectionController);
    await eventually(async () => (await read<Meta>(`${claimsPath}/data`))?.metadata.finalizers?.includes(pvcProtectionFinalizer()), 5000, 'the finalizer added');

    await h.client.request({method: 'DELETE', path: `${claimsPath}/data`});
    // The controller has seen the deletion (its queue is empty) and kept the claim: a pod uses it.
    await pollUntil(async () => h.running!.snapshot().queueDepth, (depth) => depth === 0);
    await pause(300);
    const kept = await read<Meta>(`${claimsPath}/data`);
    expect(kept?.metadata.deletionTimestamp).toBeDefined();
    expect(kept?.metadata.finalizers).toContain(pvcProtectionFinalizer());

    await h.client.request({method: 'DELETE', path: `${podsPath}/user`, query: {gracePeriodSeconds: '0'}});
    await eventually(async () => (await read(`${claimsPath}/data`)) === undefined || undefined, 5000, 'the claim removed once its pod is gone');
  });

  it('asks the API server before letting a claim go: a pod the cache does not show yet keeps it', async () => {
    // A pod watch 1 s behind the store: the pod below is in no cache when its claim is deleted.
    await h.replaceListWatcher((_ref, path) => {
      const inner = clientListWatcher(h.client, path);
      if (!path.endsWith('/pods')) return inner;
      return {
        list: (options) => inner.list(options),
        watch(options, onEvent, onEnd) {
          let closed = false;
          const handle = inner.watch(options, (event) => void setTimeout(() => !closed && onEvent(event), 1000), onEnd);
          return {close: () => ((closed = true), handle.close())};
        },
      };
    });
    await create(claimsPath, pvcBody('fresh', [pvcProtectionFinalizer()]));
    await h.start(pvcProtectionController);
    await h.factory.waitForCacheSync();
    await create(podsPath, {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'new-user'}, spec: {nodeName: 'node-1', containers: [{name: 'c', image: 'busybox'}], volumes: [pvcVolume('fresh')]}});
    await h.client.request({method: 'DELETE', path: `${claimsPath}/fresh`});
    await pause(500);
    const kept = await read<Meta>(`${claimsPath}/fresh`);
    expect(kept?.metadata.deletionTimestamp).toBeDefined();
    expect(kept?.metadata.finalizers).toEqual([pvcProtectionFinalizer()]);
  });

  it('deletes many unused claims of a namespace with far fewer live pod lists than claims', async () => {
    const count = 30;
    for (let i = 0; i < count; i++) await create(claimsPath, pvcBody(`bulk-${i}`, [pvcProtectionFinalizer()]));
    // The controller's client counts its live lists of pods.
    let podLists = 0;
    const ctx = h.context();
    const client = Object.create(ctx.client) as typeof ctx.client;
    client.get = ((path: string, ...rest: never[]) => {
      if (path === podsPath) podLists++;
      return (ctx.client.get as (...args: unknown[]) => Promise<unknown>)(path, ...rest);
    }) as typeof client.get;
    const running = await pvcProtectionController.start({...ctx, client}, h.signal);
    h.onTeardown(async () => {
      h.abort();
      await running.done;
    });
    h.factory.start();
    await h.factory.waitForCacheSync();
    await h.client.request({method: 'DELETE', path: claimsPath});
    const left = await pollUntil(async () => (await h.client.get<{items: unknown[]}>(claimsPath)).items.length, (n) => n === 0, 10_000);
    expect(left).toBe(0);
    expect(podLists).toBeGreaterThan(0);
    expect(podLists).toBeLessThan(count / 2);
  });

  it('lets an unused claim go at once and keeps the other finalizers', async () => {
    await create(claimsPath, pvcBody('idle', [pvcProtectionFinalizer(), 'example.com/keep']));
    await h.start(pvcProtectionController);
    await h.client.request({method: 'DELETE', path: `${claimsPath}/idle`});
    const left = await pollUntil(() => read<Meta>(`${claimsPath}/idle`), (c) => !c?.metadata.finalizers?.includes(pvcProtectionFinalizer()));
    expect(left?.metadata.finalizers).toEqual(['example.com/keep']);
  });

  it('keeps a bound volume being deleted and lets it go once released', async () => {
    const path = '/api/v1/persistentvolumes';
    await create(path, {apiVersion: 'v1', kind: 'PersistentVolume', metadata: {name: 'pv1'}, spec: {capacity: {storage: '1Gi'}, accessModes: ['ReadWriteOnce'], hostPath: {path: '/tmp/pv1'}}});
    await h.start(pvProtectionController);
    const withFinalizer = await eventually(async () => {
      const pv = await read<Meta & {metadata: {resourceVersion: string}}>(`${path}/pv1`);
      return pv?.metadata.finalizers?.includes(pvProtectionFinalizer()) ? pv : undefined;
    }, 5000, 'the finalizer added');
    await h.client.request({method: 'PUT', path: `${path}/pv1/status`, body: {...withFinalizer, status: {phase: 'Bound'}}});
    await h.client.request({method: 'DELETE', path: `${path}/pv1`});
    await pollUntil(async () => h.running!.snapshot().queueDepth, (depth) => depth === 0);
    await pause(300);
    expect((await read<Meta>(`${path}/pv1`))?.metadata.finalizers).toContain(pvProtectionFinalizer());

    await h.client.patch(`${path}/pv1/status`, 'application/merge-patch+json', {status: {phase: 'Released'}});
    await eventually(async () => (await read(`${path}/pv1`)) === undefined || undefined, 5000, 'the released volume removed');
  });
});
