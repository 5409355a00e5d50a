/**
 * The pvc-protection and pv-protection controllers: which claims and volumes may lose the finalizer
 * StorageObjectInUseProtection gives them, and, on a real REST API, a claim whose deletion waits
 * for the pod using it to go, and a volume whose deletion waits until it is no longer Bound.
 */
import {describe, expect, it} from '@jest/globals';
import {
  claimReleasable, podUsesClaim, pvcFinalizer, pvcProtectionController, pvFinalizer, pvProtectionController, volumeReleasable,
} from '../../src/daemons/controller-manager/controllers/storage-protection.js';
import {eventually, useControllerHarness} from '../helpers/controller-harness.js';

const deleting = (finalizers: string[]) => ({name: 'data', namespace: 'default', deletionTimestamp: '2026-01-01T00:00:00Z', finalizers});
const pod = (nodeName: string | undefined, claim: string, phase = 'Running') =>
  ({metadata: {name: 'p', namespace: 'default'}, spec: {...(nodeName ? {nodeName} : {}), volumes: [{name: 'v', persistentVolumeClaim: {claimName: claim}}]}, status: {phase}});

describe('what the protection controllers release', () => {
  it.each([
    ['a scheduled pod using it', [pod('n1', 'data')], false],
    ['a pod not scheduled yet', [pod(undefined, 'data')], true],
    ['a pod using another claim', [pod('n1', 'other')], true],
    ['no pod', [], true],
  ])('a claim being deleted, with %s', (_what, pods, releasable) => {
    expect(claimReleasable({metadata: deleting([pvcFinalizer()])}, pods)).toBe(releasable);
  });

  it('keeps claims that are not being deleted or carry no finalizer of ours', () => {
    expect(claimReleasable({metadata: {name: 'data', finalizers: [pvcFinalizer()]}}, [])).toBe(false);
    expect(claimReleasable({metadata: deleting(['other'])}, [])).toBe(false);
  });

  it('counts a generic ephemeral volume only while its pod runs', () => {
    const ephemeral = (phase: string) => ({metadata: {name: 'web'}, spec: {nodeName: 'n1', volumes: [{name: 'scratch', ephemeral: {}}]}, status: {phase}});
    expect(podUsesClaim(ephemeral('Running'), 'web-scratch')).toBe(true);
    expect(podUsesClaim(ephemeral('Succeeded'), 'web-scratch')).toBe(false);
  });

  it.each([['Bound', false], ['Released', true], ['Available', true]])('a volume being deleted while %s', (phase, releasable) => {
    expect(volumeReleasable({metadata: deleting([pvFinalizer()]), status: {phase}})).toBe(releasable);
  });
});

const h = useControllerHarness();

describe('pvc-protection and pv-protection controllers', () => {
  it('lets a claim go once its pod is gone, and a volume once it is not bound', async () => {
    const claims = '/api/v1/namespaces/default/persistentvolumeclaims';
    await h.client.request({method: 'POST', path: claims, body: {
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: {name: 'data', finalizers: [pvcFinalizer()]},
      spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '1Gi'}}},
    }});
    await h.client.request({method: 'POST', path: '/api/v1/namespaces/default/pods', body: {
      apiVersion: 'v1', kind: 'Pod', metadata: {name: 'user'},
      spec: {nodeName: 'n1', containers: [{name: 'c', image: 'busybox'}], volumes: [{name: 'v', persistentVolumeClaim: {claimName: 'data'}}]},
    }});
    await h.client.request({method: 'POST', path: '/api/v1/persistentvolumes', body: {
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: {name: 'vol', finalizers: [pvFinalizer()]},
      spec: {capacity: {storage: '1Gi'}, accessModes: ['ReadWriteOnce'], hostPath: {path: '/tmp/vol'}},
    }});
    await h.client.request({method: 'PUT', path: '/api/v1/persistentvolumes/vol/status', body: {
      ...(await h.client.get<object>('/api/v1/persistentvolumes/vol')), status: {phase: 'Bound'},
    }});
    await h.start(pvcProtectionController);
    await h.start(pvProtectionController);
    await h.client.request({method: 'DELETE', path: `${claims}/data`});
    await h.client.request({method: 'DELETE', path: '/api/v1/persistentvolumes/vol'});

    const exists = async (path: string) => {
      try {
        return await h.client.get<{metadata: {deletionTimestamp?: string}}>(path);
      } catch {
        return undefined;
      }
    };
    // In use and bound: both wait, being deleted.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await exists(`${claims}/data`))?.metadata.deletionTimestamp).toBeDefined();
    expect((await exists('/api/v1/persistentvolumes/vol'))?.metadata.deletionTimestamp).toBeDefined();

    await h.client.request({method: 'DELETE', path: '/api/v1/namespaces/default/pods/user', query: {gracePeriodSeconds: '0'}});
    await eventually(async () => !(await exists(`${claims}/data`)) || undefined, 5000, 'the claim deleted once its pod is gone');
    await h.client.request({method: 'PUT', path: '/api/v1/persistentvolumes/vol/status', body: {
      ...(await h.client.get<object>('/api/v1/persistentvolumes/vol')), status: {phase: 'Released'},
    }});
    await eventually(async () => !(await exists('/api/v1/persistentvolumes/vol')) || undefined, 5000, 'the volume deleted once released');
  });
});
