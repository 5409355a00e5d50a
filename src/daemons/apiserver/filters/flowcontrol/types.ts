/**
 * The flowcontrol/v1 objects as the API server reads them (only the fields priority and fairness
 * uses; stored objects carry everything else untouched).
 */

export interface ObjectMeta {
  name: string;
  uid?: string;
  resourceVersion?: string;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount';
  user?: {name: string};
  group?: {name: string};
  serviceAccount?: {namespace: string; name: string};
}

export interface ResourcePolicyRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}

export interface NonResourcePolicyRule {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface PolicyRulesWithSubjects {
  subjects: Subject[];
  resourceRules?: ResourcePolicyRule[];
  nonResourceRules?: NonResourcePolicyRule[];
}

export interface FlowSchemaCondition {
  type: string;
  status: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface FlowSchema {
  apiVersion: string;
  kind: 'FlowSchema';
  metadata: ObjectMeta;
  spec: {
    priorityLevelConfiguration: {name: string};
    matchingPrecedence?: number;
    distinguisherMethod?: {type: 'ByUser' | 'ByNamespace'};
    rules?: PolicyRulesWithSubjects[];
  };
  status?: {conditions?: FlowSchemaCondition[]};
}

export interface LimitResponse {
  type: 'Queue' | 'Reject';
  queuing?: {queues?: number; handSize?: number; queueLengthLimit?: number};
}

export interface PriorityLevelConfiguration {
  apiVersion: string;
  kind: 'PriorityLevelConfiguration';
  metadata: ObjectMeta;
  spec: {
    type: 'Exempt' | 'Limited';
    limited?: {nominalConcurrencyShares?: number; lendablePercent?: number; borrowingLimitPercent?: number; limitResponse?: LimitResponse};
    exempt?: {nominalConcurrencyShares?: number; lendablePercent?: number};
  };
  status?: Record<string, unknown>;
}
