/**
 * Storage protection as a user meets it: `orch apiserver` (StorageObjectInUseProtection on by
 * default) and `orch controller-manager --controllers=pvc-protection,pv-protection` as child
 * processes, driven with kubectl. A claim a scheduled pod uses stays Terminating after `kubectl
 * delete` and goes once the pod is deleted; an unbound volume's `kubectl delete` completes, a bound
 * one stays Terminating until released.
 * Build first (`npm run build`).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {kubectl, startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';
import {startControllerManager, type ControllerManagerProcess} from '../helpers/controller-manager.js';
import {pause} from '../helpers/controller-harness.js';
import {pvProtectionFinalizer} from '../../src/api/storage-protection.js';

let server: ServerProcess;
let cm: ControllerManagerProcess;

const k = (args: string[], input?: string) => kubectl(server.orchconfigPath, args, {input, timeoutMs: 30_000});
const ok = async (args: string[], input?: string) => {
  const r = await k(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
};

beforeAll(async () => {
  server = await startApiServerProcess({engine: 'sqlite'});
  cm = await startControllerManager({name: 'cm', orchconfigPath: server.orchconfigPath, args: ['--controllers=pvc-protection,pv-protection', '--leader-elect=false']});
}, 60_000);

afterAll(async () => {
  await cm?.stop();
  await server?.stop();
});

describe('storage protection through kubectl', () => {
  it('keeps a claim Terminating while a scheduled pod uses it, and deletes it once the pod is gone', async () => {
    await ok(['apply', '-f', '-'], JSON.stringify({
      apiVersion: 'v1', kind: 'List', items: [
        {apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: {name: 'data', namespace: 'default'}, spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '1Gi'}}}},
        {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'user', namespace: 'default'},
          spec: {nodeName: 'node-1', containers: [{name: 'c', image: 'busybox'}], volumes: [{name: 'data', persistentVolumeClaim: {claimName: 'data'}}]}},
      ],
    }));
    expect(await ok(['delete', 'pvc', 'data', '--wait=false'])).toContain('deleted');
    // Time for the controller to see the deletion; it must keep the claim.
    await pause(1000);
    const claim = JSON.parse(await ok(['get', 'pvc', 'data', '-o', 'json']));
    expect(claim.metadata.deletionTimestamp).toBeDefined();
    expect(await ok(['get', 'pvc', 'data'])).toMatch(/\bTerminating\b/);

    await ok(['delete', 'pod', 'user', '--grace-period=0', '--force']);
    const waited = await k(['wait', '--for=delete', 'pvc/data', '--timeout=20s']);
    expect(waited.code).toBe(0);
  }, 60_000);

  it('deletes an unbound volume at once, and a bound one once released', async () => {
    const pv = (name: string) => JSON.stringify({
      apiVersion: 'v1', kind: 'PersistentVolume', metadata: {name}, spec: {capacity: {storage: '1Gi'}, accessModes: ['ReadWriteOnce'], hostPath: {path: `/tmp/${name}`}},
    });
    await ok(['create', '-f', '-'], pv('pv1'));
    expect(JSON.parse(await ok(['get', 'pv', 'pv1', '-o', 'json'])).metadata.finalizers).toEqual([pvProtectionFinalizer()]);
    expect(await ok(['delete', 'pv', 'pv1', '--timeout=20s'])).toContain('deleted');
    expect((await k(['get', 'pv', 'pv1'])).stderr).toContain('NotFound');

    await ok(['create', '-f', '-'], pv('pv2'));
    await ok(['patch', 'pv', 'pv2', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Bound"}}']);
    await ok(['delete', 'pv', 'pv2', '--wait=false']);
    await pause(1000);
    expect(await ok(['get', 'pv', 'pv2'])).toMatch(/\bTerminating\b/);
    await ok(['patch', 'pv', 'pv2', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Released"}}']);
    expect((await k(['wait', '--for=delete', 'pv/pv2', '--timeout=20s'])).code).toBe(0);
  }, 60_000);
});
