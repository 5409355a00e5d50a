/**
 * The resourcequota controller: its pure usage count (scopes, terminal pods, count/ names) and
 * status decision, then against the real REST API: a new quota gets status.hard and status.used,
 * usage drops when a pod is deleted or finishes, a new spec.hard is mirrored, count/<resource>.<group>
 * of another kind is counted through discovery, and --resource-quota-sync-period recounts a quota
 * whose status went wrong (on a fake clock).
 */
import {describe, expect, it} from '@jest/globals';
import {FakeClock} from '../../src/client/informers/index.js';
import {evaluatorFor, podEvaluator} from '../../src/daemons/shared/quota/evaluators.js';
import {formatResourceList} from '../../src/daemons/shared/quota/resources.js';
import {
  calculateUsage, desiredStatus, lacksUsage, parseObjectCountName, resourceQuotaController, startResourceQuotaController,
} from '../../src/daemons/controller-manager/controllers/resourcequota.js';
import type {JsonObject} from '../../src/patch/types.js';
import {eventually, pause, pollUntil, useControllerHarness} from '../helpers/controller-harness.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const pod = (name: string, cpu?: string, extra: JsonObject = {}): JsonObject => ({
  apiVersion: 'v1', kind: 'Pod', metadata: {name},
  spec: {containers: [{name: 'c', image: 'busybox', ...(cpu ? {resources: {requests: {cpu}, limits: {cpu}}} : {})}], ...extra},
});

describe('counting', () => {
  const pods = [pod('a', '100m'), pod('b', '200m'), pod('be'), {...pod('done', '1'), status: {phase: 'Failed'}}];
  const objectsOf = (e: {resource: string}) => (e.resource === 'pods' ? pods : e.resource === 'configmaps' ? [{}, {}] : []);
  it.each([
    ['every tracked name starts at zero', {hard: {pods: '10', 'requests.cpu': '2', 'count/secrets': '5'}}, {'count/secrets': '0', pods: '3', 'requests.cpu': '300m'}],
    ['a failed pod still counts as an object', {hard: {'count/pods': '10', pods: '10'}}, {'count/pods': '4', pods: '3'}],
    ['BestEffort scope', {hard: {pods: '10'}, scopes: ['BestEffort']}, {pods: '1'}],
    ['NotBestEffort scope', {hard: {pods: '10'}, scopes: ['NotBestEffort']}, {pods: '2'}],
    ['a scoped quota counts no configmaps', {hard: {configmaps: '10'}, scopes: ['BestEffort']}, {configmaps: '0'}],
    ['legacy configmaps name', {hard: {configmaps: '10'}}, {configmaps: '2'}],
  ])('%s', (_name, spec, expected) => {
    expect(formatResourceList(calculateUsage({spec}, objectsOf, NOW))).toEqual(expected);
  });

  it('count/ names of other kinds', () => {
    expect(parseObjectCountName('count/deployments.apps')).toEqual({group: 'apps', resource: 'deployments'});
    expect(parseObjectCountName('count/widgets.example.com')).toEqual({group: 'example.com', resource: 'widgets'});
    expect(parseObjectCountName('pods')).toBeUndefined();
    const usage = calculateUsage({spec: {hard: {'count/deployments.apps': '2'}}}, (e) => (e.resource === 'deployments' ? [{}, {}, {}] : []), NOW);
    expect(formatResourceList(usage)).toEqual({'count/deployments.apps': '3'});
  });

  it.each([
    ['a new quota', {spec: {hard: {pods: '3'}}}, true],
    ['a raised limit not mirrored yet', {spec: {hard: {pods: '5'}}, status: {hard: {pods: '3'}, used: {pods: '1'}}}, true],
    ['a limit without usage', {spec: {hard: {pods: '3'}}, status: {hard: {pods: '3'}, used: {}}}, true],
    ['a counted quota', {spec: {hard: {pods: '3'}}, status: {hard: {pods: '3'}, used: {pods: '1'}}}, false],
  ])('the priority queue takes %s: %s', (_name, quota, expected) => {
    expect(lacksUsage(quota)).toBe(expected);
  });

  it('the status is written only when it changes; hard mirrors spec.hard', () => {
    const quota = {spec: {hard: {pods: '3'}}, status: {hard: {pods: '3'}, used: {pods: '1'}}};
    expect(desiredStatus(quota, calculateUsage(quota, () => [pod('a')], NOW))).toBeUndefined();
    expect(desiredStatus(quota, calculateUsage(quota, () => [pod('a'), pod('b')], NOW))).toEqual({hard: {pods: '3'}, used: {pods: '2'}});
    const raised = {...quota, spec: {hard: {pods: '5', secrets: '1'}}};
    expect(desiredStatus(raised, calculateUsage(raised, (e) => (e === podEvaluator ? [pod('a')] : []), NOW))).toEqual({hard: {pods: '5', secrets: '1'}, used: {pods: '1', secrets: '0'}});
    expect(evaluatorFor('', 'secrets').matchingResources(['secrets'])).toEqual(['secrets']);
  });
});

describe('resourcequota controller', () => {
  const h = useControllerHarness();
  const NS = '/api/v1/namespaces/default';
  const getQuota = () => h.client.get<any>(`${NS}/resourcequotas/q`);
  const createQuota = (hard: Record<string, string>, spec: JsonObject = {}) =>
    h.client.request({method: 'POST', path: `${NS}/resourcequotas`, body: {apiVersion: 'v1', kind: 'ResourceQuota', metadata: {name: 'q'}, spec: {hard, ...spec}}});
  const usedBecomes = async (expected: Record<string, string>, timeoutMs = 5000) => {
    const quota = await pollUntil(getQuota, (q) => JSON.stringify(q.status?.used) === JSON.stringify(expected), timeoutMs);
    expect(quota.status?.used).toEqual(expected);
    return quota;
  };

  it('fills a new quota status, gives usage back when pods go, and mirrors a new spec.hard', async () => {
    for (const p of [pod('a', '100m'), pod('b', '250m'), pod('c')]) await h.client.request({method: 'POST', path: `${NS}/pods`, body: p});
    await h.client.request({method: 'POST', path: `${NS}/configmaps`, body: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'cm'}}});
    await h.start(resourceQuotaController);
    await createQuota({pods: '5', 'requests.cpu': '1', 'count/configmaps': '4'});
    const quota = await usedBecomes({'count/configmaps': '1', pods: '3', 'requests.cpu': '350m'});
    expect(quota.status.hard).toEqual({'count/configmaps': '4', pods: '5', 'requests.cpu': '1'});

    await h.client.request({method: 'DELETE', path: `${NS}/pods/b`, body: {gracePeriodSeconds: 0}});
    await usedBecomes({'count/configmaps': '1', pods: '2', 'requests.cpu': '100m'});

    // A pod that finished no longer holds its compute.
    await h.client.patch(`${NS}/pods/a/status`, 'application/merge-patch+json', {status: {phase: 'Succeeded'}});
    await usedBecomes({'count/configmaps': '1', pods: '1', 'requests.cpu': '0'});

    await h.client.patch(`${NS}/resourcequotas/q`, 'application/merge-patch+json', {spec: {hard: {pods: '9', 'requests.cpu': null, 'count/configmaps': null}}});
    const raised = await usedBecomes({pods: '1'});
    expect(raised.status.hard).toEqual({pods: '9'});
  });

  it('counts count/<resource>.<group> of a kind found through discovery', async () => {
    const deployment = (name: string) => ({
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: {name},
      spec: {selector: {matchLabels: {app: name}}, template: {metadata: {labels: {app: name}}, spec: {containers: [{name: 'c', image: 'busybox'}]}}},
    });
    for (const name of ['d1', 'd2']) await h.client.request({method: 'POST', path: '/apis/apps/v1/namespaces/default/deployments', body: deployment(name)});
    await h.start(resourceQuotaController);
    await createQuota({'count/deployments.apps': '5'});
    await usedBecomes({'count/deployments.apps': '2'});
    await h.client.request({method: 'DELETE', path: '/apis/apps/v1/namespaces/default/deployments/d1'});
    await usedBecomes({'count/deployments.apps': '1'});
  });

  it('--resource-quota-sync-period recounts every quota', async () => {
    const clock = new FakeClock(0);
    await h.client.request({method: 'POST', path: `${NS}/pods`, body: pod('a')});
    await h.start({start: (ctx, signal) => startResourceQuotaController(ctx, signal, {clock})}, {'resource-quota-sync-period': {ms: 60_000}});
    await createQuota({pods: '5'});
    const counted = await usedBecomes({pods: '1'});
    // Someone writes a wrong usage: a status write alone does not call for a recount...
    await h.client.request({method: 'PUT', path: `${NS}/resourcequotas/q/status`, body: {...counted, status: {hard: {pods: '5'}, used: {pods: '4'}}}});
    await pause(300);
    expect((await getQuota()).status.used).toEqual({pods: '4'});
    clock.advance(59_000);
    await pause(200);
    expect((await getQuota()).status.used).toEqual({pods: '4'});
    // ...the sync period does.
    clock.advance(1_000);
    await usedBecomes({pods: '1'});
  });

  it('reports its quotas and workers', async () => {
    const running = await h.start(resourceQuotaController, {'concurrent-resource-quota-syncs': 3});
    await createQuota({pods: '1'});
    await eventually(async () => Number(running.snapshot().details?.statusWrites ?? 0) > 0 || undefined, 5000, 'a status write');
    expect(running.snapshot()).toMatchObject({name: 'resourcequota', workers: 3, details: {quotas: 1}});
  });
});
