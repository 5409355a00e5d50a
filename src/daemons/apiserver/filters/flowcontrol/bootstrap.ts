/**
 * Upstream's bootstrap configuration (apiserver/pkg/apis/flowcontrol/bootstrap/default.go, v1 as of
 * 1.32): the mandatory objects (exempt and catch-all; always put back as they are) and the suggested
 * ones (created when missing; updated only while their autoupdate-spec annotation says true). User,
 * group and namespace names come from the product's name set.
 */
import {names} from '../../../../api/names.js';
import type {FlowSchema, PriorityLevelConfiguration, Subject, ResourcePolicyRule, NonResourcePolicyRule} from './types.js';

const ALL_RESOURCES: ResourcePolicyRule = {verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true};
const ALL_NON_RESOURCES: NonResourcePolicyRule = {verbs: ['*'], nonResourceURLs: ['*']};

const group = (name: string): Subject => ({kind: 'Group', group: {name}});
const user = (name: string): Subject => ({kind: 'User', user: {name}});
const serviceAccount = (namespace: string, name: string): Subject => ({kind: 'ServiceAccount', serviceAccount: {namespace, name}});

function level(name: string, shares: number, lendablePercent: number, queuing?: {queues: number; handSize: number; queueLengthLimit: number}): PriorityLevelConfiguration {
  return {
    apiVersion: `${names().groups.flowcontrol}/v1`,
    kind: 'PriorityLevelConfiguration',
    metadata: {name},
    spec: {
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: shares,
        lendablePercent,
        limitResponse: queuing ? {type: 'Queue', queuing} : {type: 'Reject'},
      },
    },
  };
}

function schema(
  name: string,
  levelName: string,
  matchingPrecedence: number,
  distinguisher: 'ByUser' | 'ByNamespace' | undefined,
  subjects: Subject[],
  resourceRules: ResourcePolicyRule[] = [ALL_RESOURCES],
  nonResourceRules: NonResourcePolicyRule[] = [ALL_NON_RESOURCES],
): FlowSchema {
  return {
    apiVersion: `${names().groups.flowcontrol}/v1`,
    kind: 'FlowSchema',
    metadata: {name},
    spec: {
      priorityLevelConfiguration: {name: levelName},
      matchingPrecedence,
      ...(distinguisher ? {distinguisherMethod: {type: distinguisher}} : {}),
      rules: [{subjects, ...(resourceRules.length ? {resourceRules} : {}), ...(nonResourceRules.length ? {nonResourceRules} : {})}],
    },
  };
}

export function mandatoryPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    {
      apiVersion: `${names().groups.flowcontrol}/v1`,
      kind: 'PriorityLevelConfiguration',
      metadata: {name: 'exempt'},
      spec: {type: 'Exempt', exempt: {nominalConcurrencyShares: 0, lendablePercent: 0}},
    },
    level('catch-all', 5, 0),
  ];
}

export function mandatoryFlowSchemas(): FlowSchema[] {
  return [
    schema('exempt', 'exempt', 1, undefined, [group('system:masters')]),
    schema('catch-all', 'catch-all', 10000, 'ByUser', [group('system:unauthenticated'), group('system:authenticated')]),
  ];
}

export function suggestedPriorityLevels(): PriorityLevelConfiguration[] {
  return [
    level('system', 30, 33, {queues: 64, handSize: 6, queueLengthLimit: 50}),
    level('node-high', 40, 25, {queues: 64, handSize: 6, queueLengthLimit: 50}),
    level('leader-election', 10, 0, {queues: 16, handSize: 4, queueLengthLimit: 50}),
    level('workload-high', 40, 50, {queues: 128, handSize: 6, queueLengthLimit: 50}),
    level('workload-low', 100, 90, {queues: 128, handSize: 6, queueLengthLimit: 50}),
    level('global-default', 20, 50, {queues: 128, handSize: 6, queueLengthLimit: 50}),
  ];
}

export function suggestedFlowSchemas(): FlowSchema[] {
  const n = names();
  const system = n.namespaces.system;
  const leaderElection = (namespaces: string[]): ResourcePolicyRule[] => [
    {verbs: ['get', 'create', 'update'], apiGroups: [''], resources: ['endpoints', 'configmaps'], namespaces},
    {verbs: ['get', 'create', 'update'], apiGroups: [n.groups.coordination], resources: ['leases'], namespaces: ['*']},
  ];
  return [
    schema('system-nodes', 'system', 500, 'ByUser', [group(n.users.nodesGroup)]),
    schema('system-node-high', 'node-high', 400, 'ByUser', [group(n.users.nodesGroup)], [
      {verbs: ['*'], apiGroups: [''], resources: ['nodes', 'nodes/status'], namespaces: ['*'], clusterScope: true},
      {verbs: ['*'], apiGroups: [n.groups.coordination], resources: ['leases'], namespaces: ['*']},
    ], []),
    schema('probes', 'exempt', 2, undefined, [group('system:unauthenticated'), group('system:authenticated')], [], [
      {verbs: ['get'], nonResourceURLs: ['/healthz', '/readyz', '/livez']},
    ]),
    schema('system-leader-election', 'leader-election', 100, 'ByUser',
      [user(n.users.controllerManager), user(n.users.scheduler), serviceAccount(system, '*')], leaderElection([system]), []),
    schema('endpoint-controller', 'workload-high', 150, 'ByUser',
      [user(n.users.controllerManager), serviceAccount(system, 'endpoint-controller')],
      [{verbs: ['get', 'create', 'update'], apiGroups: [''], resources: ['endpoints'], namespaces: ['*']}], []),
    schema('workload-leader-election', 'leader-election', 200, 'ByUser', [serviceAccount(system, '*')], leaderElection(['*']), []),
    schema('kube-controller-manager', 'workload-high', 800, 'ByNamespace', [user(n.users.controllerManager)]),
    schema('kube-scheduler', 'workload-high', 800, 'ByNamespace', [user(n.users.scheduler)]),
    schema('kube-system-service-accounts', 'workload-high', 900, 'ByNamespace', [serviceAccount(system, '*')]),
    schema('service-accounts', 'workload-low', 9000, 'ByUser', [group('system:serviceaccounts')]),
    schema('global-default', 'global-default', 9900, 'ByUser', [group('system:unauthenticated'), group('system:authenticated')]),
  ];
}
