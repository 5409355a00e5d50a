/**
 * k8s.io/apimachinery messages: meta/v1 (ObjectMeta and friends), and the value types whose JSON
 * form is not an object (Time, MicroTime, Quantity, IntOrString, FieldsV1), rendered by
 * ../render.ts.
 */
import type { SchemaTables } from '../schema.js';

export const META_SCHEMAS: SchemaTables = {
  ObjectMeta: {
    1: 'name string',
    2: 'generateName string',
    3: 'namespace string',
    4: 'selfLink string',
    5: 'uid string',
    6: 'resourceVersion string',
    7: 'generation int64',
    8: 'creationTimestamp Time',
    9: 'deletionTimestamp *Time',
    10: 'deletionGracePeriodSeconds *int64',
    11: 'labels map[string]string',
    12: 'annotations map[string]string',
    13: 'ownerReferences []OwnerReference',
    14: 'finalizers []string',
    17: 'managedFields []ManagedFieldsEntry',
  },
  OwnerReference: {
    1: 'kind string required',
    3: 'name string required',
    4: 'uid string required',
    5: 'apiVersion string required',
    6: 'controller *bool',
    7: 'blockOwnerDeletion *bool',
  },
  ManagedFieldsEntry: {
    1: 'manager string',
    2: 'operation string',
    3: 'apiVersion string',
    4: 'time *Time',
    6: 'fieldsType string',
    7: 'fieldsV1 *FieldsV1',
    8: 'subresource string',
  },
  LabelSelector: {
    1: 'matchLabels map[string]string',
    2: 'matchExpressions []LabelSelectorRequirement',
  },
  LabelSelectorRequirement: {
    1: 'key string required',
    2: 'operator string required',
    3: 'values []string',
  },
  /** metav1.Condition, the condition type of newer APIs. */
  Condition: {
    1: 'type string required',
    2: 'status string required',
    3: 'observedGeneration int64',
    4: 'lastTransitionTime Time required',
    5: 'reason string required',
    6: 'message string required',
  },

  // Value types: decoded with these tables, then rendered to their JSON form.
  Time: { 1: 'seconds int64', 2: 'nanos int32' },
  MicroTime: { 1: 'seconds int64', 2: 'nanos int32' },
  Quantity: { 1: 'string string' },
  IntOrString: { 1: 'type int64', 2: 'intVal int32', 3: 'strVal string' },
  FieldsV1: { 1: 'raw []byte' },
};
