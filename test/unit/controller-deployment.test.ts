/**
 * The deployment controller: table tests of its pure planning (maxSurge/maxUnavailable rounding,
 * new and old replica set sizes, the template hash), then the deployment and replicaset
 * controllers together against the real REST API (startTestApi). No agent runs there: a simulated
 * agent in this file marks pods Running and Ready by writing their status.
 */
import { describe, expect, it } from '@jest/globals';
import type { RestClient } from '../../src/client/rest-client.js';
import { replicaSetController } from '../../src/daemons/controller-manager/controllers/replicaset.js';
import {
  computeTemplateHash,
  deploymentController,
  equalIgnoreHash,
  newRSNewReplicas,
  planOldReplicaSetsScaleDown,
  planProportionalScale,
  resolveFenceposts,
  type Deployment,
  type ReplicaSet,
} from '../../src/daemons/controller-manager/controllers/deployment.js';
import type { Pod } from '../../src/daemons/controller-manager/controllers/replica-set-core.js';
import { eventually, useControllerHarness, type ControllerHarness } from '../helpers/controller-harness.js';

// ---------------------------------------------------------------------------------------------
// Pure planning.

describe('resolveFenceposts', () => {
  it.each([
    // [maxSurge, maxUnavailable, desired, expected [surge, unavailable]]
    ['25%', '25%', 10, [3, 2]],
    ['25%', '25%', 3, [1, 0]],
    ['25%', '25%', 1, [1, 0]],
    [0, 0, 5, [0, 1]],
    ['0%', '0%', 5, [0, 1]],
    [2, '50%', 5, [2, 2]],
    ['100%', 0, 4, [4, 0]],
    ['10%', '10%', 25, [3, 2]],
  ] as const)('maxSurge %p maxUnavailable %p of %p -> %p', (surge, unavailable, desired, expected) => {
    expect(resolveFenceposts(surge, unavailable, desired)).toEqual(expected);
  });

  it('rejects a string that is not a percentage', () => {
    expect(() => resolveFenceposts('3', 0, 5)).toThrow(/percentage/);
  });
});

const rsFixture = (name: string, replicas: number, available: number, created: string, extra: Partial<ReplicaSet['metadata']> = {}): ReplicaSet => ({
  metadata: { name, uid: name, creationTimestamp: created, ...extra },
  spec: { replicas },
  status: { replicas, availableReplicas: available },
});
const deploymentFixture = (replicas: number, strategy: Deployment['spec']['strategy'] = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } }): Deployment => ({
  metadata: { name: 'web', generation: 1 },
  spec: { replicas, strategy },
});

describe('newRSNewReplicas', () => {
  it.each([
    // desired 10 (surge 3): old 10 + new 0 -> new may grow to 3
    [10, [10], 0, 3],
    // total already at 13: no growth
    [10, [10], 3, 3],
    // old scaled down to 5, new 3: 5 more allowed, capped by what is missing (7)
    [10, [5], 3, 8],
    // never beyond the desired count
    [10, [0], 9, 10],
  ])('desired %p, old %p, new %p -> %p', (desired, olds, current, expected) => {
    const d = deploymentFixture(desired);
    const newRS = rsFixture('new', current, 0, '2024-01-02T00:00:00Z');
    const oldRSs = olds.map((n, i) => rsFixture(`old${i}`, n, n, '2024-01-01T00:00:00Z'));
    expect(newRSNewReplicas(d, [...oldRSs, newRS], newRS)).toBe(expected);
  });

  it('Recreate goes straight to the desired count', () => {
    expect(newRSNewReplicas(deploymentFixture(4, { type: 'Recreate' }), [], rsFixture('new', 0, 0, 'x'))).toBe(4);
  });
});

describe('planOldReplicaSetsScaleDown', () => {
  it('scales unavailable old pods first, then available ones within maxUnavailable, oldest first', () => {
    const d = deploymentFixture(10); // maxUnavailable 2 -> minAvailable 8
    const newRS = rsFixture('new', 3, 0, '2024-01-03T00:00:00Z');
    const older = rsFixture('older', 4, 2, '2024-01-01T00:00:00Z'); // 2 unavailable
    const old = rsFixture('old', 6, 6, '2024-01-02T00:00:00Z');
    const steps = planOldReplicaSetsScaleDown(d, newRS, [old, older]);
    // all 13, minAvailable 8, new unavailable 3 -> up to 2 may go; the 2 unavailable of `older` go first.
    expect(steps.map((s) => [s.rs.metadata.name, s.replicas])).toEqual([['older', 2]]);
  });

  it('scales available old pods down once new ones are available', () => {
    const d = deploymentFixture(4); // surge 1, unavailable 1 -> minAvailable 3
    const newRS = rsFixture('new', 1, 1, '2024-01-02T00:00:00Z');
    const old = rsFixture('old', 4, 4, '2024-01-01T00:00:00Z');
    expect(planOldReplicaSetsScaleDown(d, newRS, [old]).map((s) => s.replicas)).toEqual([2]);
  });

  it('holds while the new pods are not available and nothing may go', () => {
    const d = deploymentFixture(4);
    const newRS = rsFixture('new', 1, 0, '2024-01-02T00:00:00Z');
    const old = rsFixture('old', 3, 3, '2024-01-01T00:00:00Z');
    // all 4, minAvailable 3, new unavailable 1 -> 0 may go.
    expect(planOldReplicaSetsScaleDown(d, newRS, [old])).toEqual([]);
  });
});

describe('planProportionalScale', () => {
  it('gives the whole size to the only active replica set', () => {
    const d = deploymentFixture(6);
    const steps = planProportionalScale(d, rsFixture('new', 3, 3, 'b'), [rsFixture('old', 0, 0, 'a')]);
    expect(steps.map((s) => [s.rs.metadata.name, s.replicas])).toEqual([['new', 6]]);
  });

  it('shares a resize mid-rollout in proportion to size', () => {
    // 10 -> 20 replicas during a rollout: old 8 and new 5 were sized for 10 + surge 3 = 13.
    const d = deploymentFixture(20);
    d.status = { replicas: 13 };
    const annotations = { 'deployment.orch.io/max-replicas': '13', 'deployment.orch.io/desired-replicas': '10' };
    const old = rsFixture('old', 8, 8, '2024-01-01T00:00:00Z', { annotations });
    const fresh = rsFixture('new', 5, 0, '2024-01-02T00:00:00Z', { annotations });
    const steps = planProportionalScale(d, fresh, [old]);
    const sizes = Object.fromEntries(steps.map((s) => [s.rs.metadata.name, s.replicas]));
    // allowed 20 + 5 = 25: old 8 -> round(8*25/13)=15, new 5 -> round(5*25/13)=10.
    expect(sizes).toEqual({ old: 15, new: 10 });
  });
});

describe('computeTemplateHash', () => {
  const template = { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } };
  it('is stable across key order, changes with the template and the collision count', () => {
    const reordered = { spec: { containers: [{ image: 'nginx', name: 'c' }] }, metadata: { labels: { app: 'web' } } };
    expect(computeTemplateHash(template)).toBe(computeTemplateHash(reordered));
    expect(computeTemplateHash(template)).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]{1,10}$/);
    expect(computeTemplateHash({ ...template, spec: { containers: [{ name: 'c', image: 'nginx:2' }] } })).not.toBe(computeTemplateHash(template));
    expect(computeTemplateHash(template, 1)).not.toBe(computeTemplateHash(template));
  });

  it('equalIgnoreHash ignores the pod-template-hash label only', () => {
    const hashed = { ...template, metadata: { labels: { app: 'web', 'pod-template-hash': 'abc' } } };
    expect(equalIgnoreHash(template, hashed)).toBe(true);
    expect(equalIgnoreHash(template, { ...template, metadata: { labels: { app: 'api' } } })).toBe(false);
  });

  it('equalIgnoreHash takes creationTimestamp: null (as kubectl rollout undo sends it) for no timestamp', () => {
    expect(equalIgnoreHash(template, { ...template, metadata: { ...template.metadata, creationTimestamp: null } } as never)).toBe(true);
    expect(equalIgnoreHash({ spec: template.spec }, { metadata: { creationTimestamp: null }, spec: template.spec } as never)).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Against the REST API.

interface Cluster {
  client: RestClient;
  /** When true the simulated agent marks every pod Running and Ready. */
  agent: { ready: boolean };
}

/** Starts the replicaset and deployment controllers on `h`, and the simulated agent (stopped first at teardown). */
async function startCluster(h: ControllerHarness): Promise<Cluster> {
  const { client } = h;
  const options = { 'concurrent-replicaset-syncs': 5, 'concurrent-deployment-syncs': 5 };
  await h.start(replicaSetController, options);
  await h.start(deploymentController, options);
  const agent = { ready: true };
  let agentRunning = true;
  const agentLoop = (async () => {
    while (agentRunning) {
      if (agent.ready) {
        const pods = (await client.get<{ items: Pod[] }>('/api/v1/namespaces/default/pods')).items;
        for (const pod of pods.filter((p) => p.status?.phase !== 'Running')) {
          await client
            .patch(`/api/v1/namespaces/default/pods/${pod.metadata.name}/status`, 'application/merge-patch+json', {
              status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z') }] },
            })
            .catch(() => undefined); // deleted meanwhile
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  h.onTeardown(async () => {
    agentRunning = false;
    await agentLoop;
  });
  return { client, agent };
}

/** Polls `probe` until it returns a value; fails after `timeoutMs` naming `what`. */
const waitFor = <T,>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 15_000) => eventually(probe, timeoutMs, what);

const D_PATH = '/apis/apps/v1/namespaces/default/deployments';
const RS_PATH = '/apis/apps/v1/namespaces/default/replicasets';

function deploymentBody(name: string, replicas: number, image: string, spec: Record<string, unknown> = {}) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'app', image }] } },
      ...spec,
    },
  };
}

const getDeployment = (c: Cluster, name: string) => c.client.get<Deployment>(`${D_PATH}/${name}`);
const listReplicaSets = async (c: Cluster) => (await c.client.get<{ items: ReplicaSet[] }>(RS_PATH)).items;
const listPods = async (c: Cluster, selector: string) => (await c.client.get<{ items: Pod[] }>('/api/v1/namespaces/default/pods', { labelSelector: selector })).items;
const setImage = (c: Cluster, name: string, image: string) =>
  c.client.patch(`${D_PATH}/${name}`, 'application/strategic-merge-patch+json', { spec: { template: { spec: { containers: [{ name: 'app', image }] } } } });

/** Waits until the deployment's rollout is complete: every replica updated and available, observed. */
async function rolledOut(c: Cluster, name: string, replicas: number): Promise<Deployment> {
  return waitFor(`rollout of ${name}`, async () => {
    const d = await getDeployment(c, name);
    const s = d.status ?? {};
    const progressing = s.conditions?.find((x) => x.type === 'Progressing');
    const done =
      s.observedGeneration === d.metadata.generation && s.updatedReplicas === replicas && s.replicas === replicas && s.availableReplicas === replicas &&
      progressing?.reason === 'NewReplicaSetAvailable';
    return done ? d : undefined;
  });
}

describe('deployment controller', () => {
  const h = useControllerHarness();

  it('creates a hashed replica set, reports status and conditions, and follows a resize', async () => {
    const c = await startCluster(h);
    await c.client.request({ method: 'POST', path: D_PATH, body: deploymentBody('web', 3, 'nginx:1.26') });
    const d = await rolledOut(c, 'web', 3);
    const [rs, ...others] = await listReplicaSets(c);
    expect(others).toEqual([]);
    const hash = rs!.metadata.labels!['pod-template-hash'];
    expect(rs!.metadata.name).toBe(`web-${hash}`);
    expect(rs!.spec!.selector).toEqual({ matchLabels: { app: 'web', 'pod-template-hash': hash } });
    expect(rs!.metadata.ownerReferences).toEqual([{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', uid: d.metadata.uid, controller: true, blockOwnerDeletion: true }]);
    expect(rs!.metadata.annotations).toMatchObject({
      'deployment.orch.io/revision': '1',
      'deployment.orch.io/desired-replicas': '3',
      'deployment.orch.io/max-replicas': '4',
    });
    expect(d.metadata.annotations?.['deployment.orch.io/revision']).toBe('1');
    expect(d.status).toMatchObject({ replicas: 3, updatedReplicas: 3, readyReplicas: 3, availableReplicas: 3 });
    expect(d.status?.unavailableReplicas).toBeUndefined();
    const conditions = Object.fromEntries((d.status?.conditions ?? []).map((x) => [x.type, x]));
    expect(conditions.Available).toMatchObject({ status: 'True', reason: 'MinimumReplicasAvailable', message: 'Deployment has minimum availability.' });
    expect(conditions.Progressing).toMatchObject({ status: 'True', reason: 'NewReplicaSetAvailable', message: `ReplicaSet "web-${hash}" has successfully progressed.` });
    for (const pod of await listPods(c, 'app=web')) expect(pod.metadata.labels!['pod-template-hash']).toBe(hash);

    await c.client.patch(`${D_PATH}/web`, 'application/merge-patch+json', { spec: { replicas: 5 } });
    await rolledOut(c, 'web', 5);
    const scaled = await listReplicaSets(c);
    expect(scaled.map((r) => [r.metadata.name, r.spec!.replicas, r.metadata.annotations!['deployment.orch.io/desired-replicas']])).toEqual([[`web-${hash}`, 5, '5']]);
    // What `kubectl describe deployment web` shows.
    const messages = await waitFor('the scaling events', async () => {
      const list = (await c.client.request<any>({ method: 'GET', path: '/api/v1/namespaces/default/events', query: { fieldSelector: 'involvedObject.kind=Deployment,involvedObject.name=web' } })).body;
      const found = list.items.filter((e: any) => e.reason === 'ScalingReplicaSet').map((e: any) => e.message);
      return found.length >= 2 ? found : undefined;
    });
    expect(messages).toEqual([`Scaled up replica set web-${hash} to 3 from 0`, `Scaled up replica set web-${hash} to 5 from 3`]);
  }, 30_000);

  it('rolls a template change through a new replica set within maxSurge and maxUnavailable', async () => {
    const c = await startCluster(h);
    await c.client.request({
      method: 'POST',
      path: D_PATH,
      body: deploymentBody('web', 4, 'nginx:1.26', { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } }),
    });
    await rolledOut(c, 'web', 4);
    const [first] = await listReplicaSets(c);

    // Watch the sizes during the rollout: never more than 4 + 1 pods asked for, never fewer than 4 available.
    let sampling = true;
    let maxTotal = 0;
    let minAvailable = Infinity;
    const sampler = (async () => {
      while (sampling) {
        const sets = await listReplicaSets(c);
        maxTotal = Math.max(maxTotal, sets.reduce((n, r) => n + (r.spec?.replicas ?? 0), 0));
        minAvailable = Math.min(minAvailable, sets.reduce((n, r) => n + (r.status?.availableReplicas ?? 0), 0));
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await setImage(c, 'web', 'nginx:1.27');
    const d = await rolledOut(c, 'web', 4);
    sampling = false;
    await sampler;

    const sets = await listReplicaSets(c);
    expect(sets).toHaveLength(2);
    const next = sets.find((r) => r.metadata.uid !== first!.metadata.uid)!;
    const old = sets.find((r) => r.metadata.uid === first!.metadata.uid)!;
    expect(next.spec!.replicas).toBe(4);
    expect(old.spec!.replicas).toBe(0);
    expect(next.metadata.annotations!['deployment.orch.io/revision']).toBe('2');
    expect(old.metadata.annotations!['deployment.orch.io/revision']).toBe('1');
    expect(d.metadata.annotations!['deployment.orch.io/revision']).toBe('2');
    expect(maxTotal).toBeLessThanOrEqual(5);
    expect(minAvailable).toBeGreaterThanOrEqual(4);
    const pods = await waitFor('old pods gone', async () => {
      const ps = await listPods(c, 'app=web');
      return ps.length === 4 ? ps : undefined;
    });
    for (const pod of pods) {
      expect(pod.metadata.labels!['pod-template-hash']).toBe(next.metadata.labels!['pod-template-hash']);
      expect((pod.spec as any).containers[0].image).toBe('nginx:1.27');
    }
  }, 30_000);

  it('Recreate removes every old pod before creating new ones', async () => {
    const c = await startCluster(h);
    await c.client.request({ method: 'POST', path: D_PATH, body: deploymentBody('db', 2, 'postgres:16', { strategy: { type: 'Recreate' } }) });
    await rolledOut(c, 'db', 2);
    const [first] = await listReplicaSets(c);
    const oldHash = first!.metadata.labels!['pod-template-hash'];

    let sampling = true;
    let mixed = false;
    const sampler = (async () => {
      while (sampling) {
        const hashes = new Set((await listPods(c, 'app=db')).map((p) => p.metadata.labels!['pod-template-hash']));
        if (hashes.size > 1) mixed = true;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await setImage(c, 'db', 'postgres:17');
    await rolledOut(c, 'db', 2);
    sampling = false;
    await sampler;
    expect(mixed).toBe(false);
    const pods = await listPods(c, 'app=db');
    expect(pods).toHaveLength(2);
    expect(pods.every((p) => p.metadata.labels!['pod-template-hash'] !== oldHash)).toBe(true);
    const old = (await listReplicaSets(c)).find((r) => r.metadata.uid === first!.metadata.uid)!;
    expect(old.spec!.replicas).toBe(0);
  }, 30_000);

  it('keeps at most revisionHistoryLimit old replica sets, deleting the oldest revisions', async () => {
    const c = await startCluster(h);
    await c.client.request({ method: 'POST', path: D_PATH, body: deploymentBody('web', 1, 'nginx:1', { revisionHistoryLimit: 1 }) });
    await rolledOut(c, 'web', 1);
    for (const image of ['nginx:2', 'nginx:3', 'nginx:4']) {
      await setImage(c, 'web', image);
      await rolledOut(c, 'web', 1);
    }
    const sets = await waitFor('cleanup', async () => {
      const rs = await listReplicaSets(c);
      return rs.length === 2 ? rs : undefined;
    });
    const revisions = sets.map((r) => r.metadata.annotations!['deployment.orch.io/revision']).sort();
    expect(revisions).toEqual(['3', '4']);
  }, 40_000);

  it('does not roll a paused deployment, and rolls it once resumed', async () => {
    const c = await startCluster(h);
    await c.client.request({ method: 'POST', path: D_PATH, body: deploymentBody('web', 2, 'nginx:1') });
    await rolledOut(c, 'web', 2);
    await c.client.patch(`${D_PATH}/web`, 'application/merge-patch+json', { spec: { paused: true } });
    await setImage(c, 'web', 'nginx:2');
    const paused = await waitFor('paused condition', async () => {
      const d = await getDeployment(c, 'web');
      const progressing = d.status?.conditions?.find((x) => x.type === 'Progressing');
      return progressing?.reason === 'DeploymentPaused' && d.status?.observedGeneration === d.metadata.generation ? progressing : undefined;
    });
    expect(paused).toMatchObject({ status: 'Unknown', message: 'Deployment is paused' });
    await new Promise((r) => setTimeout(r, 300));
    expect(await listReplicaSets(c)).toHaveLength(1);

    await c.client.patch(`${D_PATH}/web`, 'application/merge-patch+json', { spec: { paused: false } });
    await rolledOut(c, 'web', 2);
    expect(await listReplicaSets(c)).toHaveLength(2);
  }, 30_000);
});
