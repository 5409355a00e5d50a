/**
 * The clusterrole-aggregation controller: the pure union of matching roles' rules, and the
 * controller against the real REST API (a role labelled aggregate-to-view joins `view`; removing
 * the label takes it out again).
 */
import { describe, expect, it } from '@jest/globals';
import { eventually, useControllerHarness } from '../helpers/controller-harness.js';
import { aggregatedRules, clusterRoleAggregationController, type ClusterRole } from '../../src/daemons/controller-manager/controllers/clusterrole-aggregation.js';

const role = (name: string, labels: Record<string, string>, rules: ClusterRole['rules'], selectors?: Array<Record<string, unknown>>): ClusterRole => ({
  metadata: { name, labels },
  rules,
  ...(selectors ? { aggregationRule: { clusterRoleSelectors: selectors } } : {}),
});

describe('aggregatedRules', () => {
  const get = { verbs: ['get'], apiGroups: [''], resources: ['pods'] };
  const list = { verbs: ['list'], apiGroups: [''], resources: ['pods'] };
  const widgets = { verbs: ['get'], apiGroups: ['example.com'], resources: ['widgets'] };
  const view = role('view', {}, [], [{ matchLabels: { 'x/aggregate-to-view': 'true' } }]);

  it('unites the rules of every matching role in name order, without duplicates or itself', () => {
    const all = [
      view,
      role('b-widgets', { 'x/aggregate-to-view': 'true' }, [widgets, get]),
      role('a-pods', { 'x/aggregate-to-view': 'true' }, [get, list]),
      role('unlabelled', {}, [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }]),
      role('false-label', { 'x/aggregate-to-view': 'false' }, [{ verbs: ['delete'], apiGroups: [''], resources: ['pods'] }]),
    ];
    expect(aggregatedRules(view, all)).toEqual([get, list, widgets]);
  });

  it('matches by any of several selectors, with expressions', () => {
    const r = role('r', {}, [], [{ matchLabels: { a: '1' } }, { matchExpressions: [{ key: 'b', operator: 'In', values: ['x', 'y'] }] }]);
    const all = [r, role('m1', { a: '1' }, [get]), role('m2', { b: 'y' }, [list]), role('no', { b: 'z' }, [widgets])];
    expect(aggregatedRules(r, all)).toEqual([get, list]);
  });
});

const CLUSTERROLES = '/apis/rbac.orch.io/v1/clusterroles';
const h = useControllerHarness();

describe('clusterrole-aggregation controller', () => {
  it('adds a labelled role\'s rules to the aggregating role, and takes them out when the label goes', async () => {
    await h.client.request({
      method: 'POST', path: CLUSTERROLES,
      body: { apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'readers' }, aggregationRule: { clusterRoleSelectors: [{ matchLabels: { 'rbac.orch.io/aggregate-to-readers': 'true' } }] }, rules: [] },
    });
    await h.client.request({
      method: 'POST', path: CLUSTERROLES,
      body: {
        apiVersion: 'rbac.orch.io/v1', kind: 'ClusterRole', metadata: { name: 'widget-reader', labels: { 'rbac.orch.io/aggregate-to-readers': 'true' } },
        rules: [{ verbs: ['get', 'list'], apiGroups: ['example.com'], resources: ['widgets'] }],
      },
    });
    await h.start(clusterRoleAggregationController);
    const rulesOf = async () => ((await h.client.get<ClusterRole>(`${CLUSTERROLES}/readers`)).rules ?? []);
    await eventually(async () => (await rulesOf()).length === 1 || undefined, 5000, 'the rule aggregated');
    expect(await rulesOf()).toEqual([{ verbs: ['get', 'list'], apiGroups: ['example.com'], resources: ['widgets'] }]);
    await h.client.patch(`${CLUSTERROLES}/widget-reader`, 'application/merge-patch+json', { metadata: { labels: { 'rbac.orch.io/aggregate-to-readers': null } } });
    await eventually(async () => (await rulesOf()).length === 0 || undefined, 5000, 'the rule removed');
  });
});
