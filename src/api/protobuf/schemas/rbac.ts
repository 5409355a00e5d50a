/** k8s.io/api/rbac/v1 messages (field numbers of its generated.proto). */
import type { SchemaTables } from '../schema.js';

export const RBAC_SCHEMAS: SchemaTables = {
  Role: { 1: 'metadata ObjectMeta', 2: 'rules []PolicyRule required' },
  ClusterRole: { 1: 'metadata ObjectMeta', 2: 'rules []PolicyRule required', 3: 'aggregationRule *AggregationRule' },
  PolicyRule: {
    1: 'verbs []string required', 2: 'apiGroups []string', 3: 'resources []string', 4: 'resourceNames []string', 5: 'nonResourceURLs []string',
  },
  AggregationRule: { 1: 'clusterRoleSelectors []LabelSelector' },
  RoleBinding: { 1: 'metadata ObjectMeta', 2: 'subjects []Subject', 3: 'roleRef RoleRef required' },
  ClusterRoleBinding: { 1: 'metadata ObjectMeta', 2: 'subjects []Subject', 3: 'roleRef RoleRef required' },
  Subject: { 1: 'kind string required', 2: 'apiGroup string', 3: 'name string required', 4: 'namespace string' },
  RoleRef: { 1: 'apiGroup string required', 2: 'kind string required', 3: 'name string required' },
};
