/**
 * The `clusterrole-aggregation` controller, as upstream's (pkg/controller/clusterroleaggregation):
 * a ClusterRole with an `aggregationRule` gets as its rules the union of the rules of every cluster
 * role its selectors match (itself excluded), in the order of their names, without duplicates. This
 * is how `admin`, `edit` and `view` grow when a chart installs a role labelled
 * `rbac.<domain>/aggregate-to-view: "true"`.
 */
import { RateLimitingQueue, resourcePath } from '../../../client/informers/index.js';
import type { ResourceRef } from '../../../client/informers/index.js';
import { names } from '../../../api/names.js';
import { labelSelectorString, matchesLabels, parseLabelSelector } from '../../../api/selectors.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';
import { runQueueWorkers } from './queue-workers.js';
import { isNotFound } from './owners.js';

interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export interface ClusterRole {
  metadata: { name: string; labels?: Record<string, string>; resourceVersion?: string };
  aggregationRule?: { clusterRoleSelectors?: LabelSelector[] };
  rules?: PolicyRule[];
}

const clusterRoles = (): ResourceRef => ({ group: names().groups.rbac, version: 'v1', resource: 'clusterroles' });

/** Pure: the rules an aggregated role should carry, given every cluster role. */
export function aggregatedRules(role: ClusterRole, all: readonly ClusterRole[]): PolicyRule[] {
  const selectors = (role.aggregationRule?.clusterRoleSelectors ?? []).map((selector) => parseLabelSelector(labelSelectorString(selector)));
  const rules: PolicyRule[] = [];
  const seen = new Set<string>();
  const sources = all
    .filter((other) => other.metadata.name !== role.metadata.name)
    .filter((other) => selectors.some((requirements) => matchesLabels(requirements, other.metadata.labels ?? {})))
    .sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0));
  for (const source of sources) {
    for (const rule of source.rules ?? []) {
      const key = JSON.stringify(rule);
      if (seen.has(key)) continue;
      seen.add(key);
      rules.push(rule);
    }
  }
  return rules;
}

export function startClusterRoleAggregationController(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const ref = clusterRoles();
  const informer = ctx.informers.informerFor<ClusterRole>(ref);
  const queue = new RateLimitingQueue<string>({ name: 'ClusterRoleAggregator', metrics: ctx.metrics });
  const stats = { updated: 0 };
  // Any change may change some aggregated role: enqueue every role that aggregates (upstream does the same).
  const enqueueAggregators = () => {
    for (const role of informer.indexer.list()) if (role.aggregationRule) queue.add(role.metadata.name);
  };
  const registrations = [informer.addEventHandler({ onAdd: enqueueAggregators, onUpdate: enqueueAggregators, onDelete: enqueueAggregators })];

  const sync = async (name: string): Promise<void> => {
    const role = informer.indexer.getByKey(name);
    if (!role?.aggregationRule) return;
    const rules = aggregatedRules(role, informer.indexer.list());
    if (JSON.stringify(rules) === JSON.stringify(role.rules ?? [])) return;
    try {
      // A merge patch of rules with the resourceVersion read: a role changed since is synced again.
      await ctx.client.patch(`${resourcePath(ref)}/${encodeURIComponent(name)}`, 'application/merge-patch+json', {
        metadata: { resourceVersion: role.metadata.resourceVersion },
        rules,
      });
      stats.updated++;
      ctx.logger.v(2).info('Aggregated cluster role rules', 'clusterRole', name, 'rules', rules.length);
    } catch (error) {
      if (isNotFound(error)) return;
      throw error;
    }
  };

  const done = runQueueWorkers({ ctx, signal, queue, workers: 5, sync, name: 'clusterrole-aggregation', registrations });
  return { done, snapshot: () => ({ name: 'clusterrole-aggregation', workers: 5, queueDepth: queue.len(), details: { rolesUpdated: stats.updated } }) };
}

export const clusterRoleAggregationController: ControllerDescriptor = {
  name: 'clusterrole-aggregation',
  enabledByDefault: true,
  start: startClusterRoleAggregationController,
};
