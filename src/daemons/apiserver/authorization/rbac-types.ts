/** The RBAC objects of the name set's RBAC group (`rbac.orch.io/v1`), in upstream's shapes (rbac.authorization.k8s.io/v1). */
import {names, type NameSet} from '../../../api/names.js';

export const rbacApiVersion = (n: NameSet = names()) => `${n.groups.rbac}/v1`;

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount' | string;
  name: string;
  namespace?: string;
  apiGroup?: string;
}

export interface RoleRef {
  apiGroup: string;
  kind: 'Role' | 'ClusterRole' | string;
  name: string;
}

export interface RbacObjectMeta {
  name: string;
  namespace?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  [key: string]: unknown;
}

export interface Role {
  apiVersion: string;
  kind: 'Role';
  metadata: RbacObjectMeta;
  rules?: PolicyRule[];
}

export interface AggregationRule {
  clusterRoleSelectors?: Array<{matchLabels?: Record<string, string>}>;
}

export interface ClusterRole {
  apiVersion: string;
  kind: 'ClusterRole';
  metadata: RbacObjectMeta;
  rules?: PolicyRule[];
  aggregationRule?: AggregationRule;
}

export interface RoleBinding {
  apiVersion: string;
  kind: 'RoleBinding';
  metadata: RbacObjectMeta;
  subjects?: Subject[];
  roleRef: RoleRef;
}

export interface ClusterRoleBinding {
  apiVersion: string;
  kind: 'ClusterRoleBinding';
  metadata: RbacObjectMeta;
  subjects?: Subject[];
  roleRef: RoleRef;
}

export type RbacObject = Role | ClusterRole | RoleBinding | ClusterRoleBinding;
