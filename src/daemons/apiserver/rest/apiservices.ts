/**
 * Upstream's autoregister and local-availability controllers, at start: one APIService per served
 * built-in group version (`v1.`, `v1.apps`, `v2.autoscaling`, ...), marked automanaged, with
 * upstream's group and version priorities and an `Available` condition (local APIServices are
 * always available), so `kubectl get apiservices` lists them as upstream does. Idempotent.
 */
import { names } from '../../../api/names.js';
import { builtinResources, type ResourceInfo } from '../../../api/resources.js';
import { ApiError } from '../../../api/status.js';
import type { JsonObject } from '../../../patch/types.js';
import type { Store } from '../storage/store.js';
import { AdmissionChain } from '../admission/chain.js';
import { rfc3339 } from './objects.js';
import { RegistryStore, type WriteContext } from './registry-store.js';
import { systemClock, type Clock } from './types.js';

const WRITER: WriteContext = { user: { name: 'system:apiserver', groups: ['system:masters'] }, dryRun: false, fieldManager: 'orch-apiserver' };

/** Upstream's apiVersionPriorities, by the group's key in the name set (`''` core, plain names as they are). */
function priority(group: string, version: string): { group: number; version: number } {
  const g = names().groups;
  const table: Record<string, number> = {
    '': 18000, apps: 17800, [g.events]: 17750, [g.authentication]: 17700, [g.authorization]: 17600, autoscaling: 17500, batch: 17400,
    [g.certificates]: 17300, [g.networking]: 17200, policy: 17100, [g.rbac]: 17000, [g.storage]: 16800, [g.apiextensions]: 16700,
    [g.admissionregistration]: 16700, [g.scheduling]: 16600, [g.coordination]: 16500, [g.node]: 16300, [g.discovery]: 16200,
    [g.flowcontrol]: 16100, [g.resource]: 15900, [g.apiregistration]: 18000,
  };
  // Stable versions above betas above alphas; autoscaling/v2 above v1, as upstream.
  const versionPriority = group === '' ? 1 : group === 'autoscaling' && version === 'v2' ? 30 : version.includes('alpha') ? 1 : version.includes('beta') ? 9 : 15;
  return { group: table[group] ?? 15000, version: versionPriority };
}

export async function registerLocalApiServices(store: Store, keyPrefix: string, served: readonly ResourceInfo[] = builtinResources(), clock: Clock = systemClock): Promise<number> {
  const info = builtinResources().find((r) => r.plural === 'apiservices') as ResourceInfo;
  const apiservices = new RegistryStore(info, { store, clock, keyPrefix: keyPrefix.replace(/\/+$/, ''), admission: new AdmissionChain([]) });
  const versions = new Map<string, { group: string; version: string }>();
  for (const r of served) versions.set(`${r.version}.${r.group}`, { group: r.group, version: r.version });
  await removeStaleLocal(apiservices, versions);
  let created = 0;
  for (const [name, gv] of versions) {
    const p = priority(gv.group, gv.version);
    const object: JsonObject = {
      apiVersion: `${info.group}/${info.version}`, kind: 'APIService',
      metadata: { name, labels: { [`kube-aggregator.${names().labelDomain}/automanaged`]: 'onstart' } },
      spec: { ...(gv.group ? { group: gv.group } : {}), version: gv.version, groupPriorityMinimum: p.group, versionPriority: p.version },
    };
    try {
      await apiservices.create('', object, WRITER);
      created++;
    } catch (error) {
      if (!(error instanceof ApiError && error.status.reason === 'AlreadyExists')) throw error;
    }
    const available = { type: 'Available', status: 'True', lastTransitionTime: rfc3339(clock.now()), reason: 'Local', message: 'Local APIServices are always available' };
    await apiservices.update('', name, { ...WRITER, subresource: 'status' }, (current) => {
      const conditions = Array.isArray((current.status as JsonObject | undefined)?.conditions) ? ((current.status as JsonObject).conditions as JsonObject[]) : [];
      const existing = conditions.find((c) => c.type === 'Available');
      if (existing?.status === 'True' && existing.reason === 'Local') return current;
      current.status = { conditions: [...conditions.filter((c) => c.type !== 'Available'), available] };
      delete (current.metadata as JsonObject).resourceVersion;
      return current;
    });
  }
  return created;
}

/**
 * upstream's autoregister drops the `onstart` APIServices of group versions no longer served (a
 * --runtime-config switched them off since the last start); APIServices with a service are the
 * user's and stay.
 */
async function removeStaleLocal(apiservices: RegistryStore, served: Map<string, unknown>): Promise<void> {
  const label = `kube-aggregator.${names().labelDomain}/automanaged`;
  const list = await apiservices.list('', { labelSelector: [], fieldSelector: [], limit: 0, allowWatchBookmarks: false });
  for (const item of (list.items ?? []) as JsonObject[]) {
    const meta = item.metadata as JsonObject;
    const name = meta.name as string;
    if ((meta.labels as JsonObject | undefined)?.[label] !== 'onstart' || (item.spec as JsonObject | undefined)?.service || served.has(name)) continue;
    await apiservices.delete('', name, {}, WRITER).catch((error) => {
      if (!(error instanceof ApiError && error.status.reason === 'NotFound')) throw error;
    });
  }
}
