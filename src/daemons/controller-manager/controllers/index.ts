/** Every controller orch's controller manager knows, by the name --controllers uses. */
import type {ControllerDescriptor} from './types.js';
import {nodeLifecycleController} from './node-lifecycle.js';
import {namespaceController} from './namespace.js';
import {serviceAccountController} from './serviceaccount.js';
import {serviceAccountTokenController} from './serviceaccount-token.js';
import {podGcController} from './podgc.js';
import {replicaSetController} from './replicaset.js';
import {replicationControllerController} from './replicationcontroller.js';
import {deploymentController} from './deployment.js';
import {jobController} from './job.js';
import {statefulSetController} from './statefulset.js';
import {daemonSetController} from './daemonset.js';
import {cronJobController} from './cronjob.js';
import {ttlAfterFinishedController} from './ttl-after-finished.js';
import {endpointsController} from './endpoints.js';
import {endpointSliceController} from './endpointslice.js';
import {garbageCollectorController} from './garbage-collector.js';
import {schedulerController} from './scheduler.js';
import {clusterRoleAggregationController} from './clusterrole-aggregation.js';
import {resourceQuotaController} from './resourcequota.js';
import {rootCaPublisherController} from './root-ca-publisher.js';
import {pvcProtectionController} from './pvc-protection.js';
import {pvProtectionController} from './pv-protection.js';
import {validatingAdmissionPolicyStatusController} from './validating-admission-policy-status.js';

export const CONTROLLERS: readonly ControllerDescriptor[] = [
  namespaceController,
  serviceAccountController,
  serviceAccountTokenController,
  replicationControllerController,
  replicaSetController,
  deploymentController,
  jobController,
  statefulSetController,
  daemonSetController,
  cronJobController,
  ttlAfterFinishedController,
  endpointsController,
  endpointSliceController,
  garbageCollectorController,
  podGcController,
  nodeLifecycleController,
  schedulerController,
  clusterRoleAggregationController,
  resourceQuotaController,
  rootCaPublisherController,
  pvcProtectionController,
  pvProtectionController,
  validatingAdmissionPolicyStatusController,
];

/**
 * --controllers: `*` is every controller enabled by default, `name` adds one, `-name` removes one
 * (upstream's rules). Unknown names are an error that lists the known ones.
 */
export function selectControllers(spec: readonly string[], known: readonly ControllerDescriptor[] = CONTROLLERS): ControllerDescriptor[] {
  const names = new Set(known.map((c) => c.name));
  const unknown = spec.map((s) => s.replace(/^-/, '')).filter((s) => s !== '*' && !names.has(s));
  if (unknown.length > 0) {
    throw new Error(`--controllers: unknown controller(s) ${unknown.map((u) => JSON.stringify(u)).join(', ')}; known: ${[...names].sort().join(', ')}`);
  }
  const star = spec.includes('*');
  return known.filter((c) => {
    if (spec.includes(`-${c.name}`)) return false;
    if (spec.includes(c.name)) return true;
    return star && c.enabledByDefault;
  });
}

/** Options of the controller manager that the controllers above read (marked implemented in the option table). */
export const CONTROLLER_OPTIONS_IMPLEMENTED: readonly string[] = [
  'concurrent-namespace-syncs',
  'namespace-sync-period',
  'concurrent-serviceaccount-token-syncs',
  'service-account-private-key-file',
  'root-ca-file',
  'terminated-pod-gc-threshold',
  'concurrent-rc-syncs',
  'concurrent-replicaset-syncs',
  'concurrent-deployment-syncs',
  'concurrent-job-syncs',
  'concurrent-statefulset-syncs',
  'concurrent-daemonset-syncs',
  'concurrent-cron-job-syncs',
  'concurrent-ttl-after-finished-syncs',
  'concurrent-validating-admission-policy-status-syncs',
  'concurrent-endpoint-syncs',
  'endpoint-updates-batch-period',
  'concurrent-service-endpoint-syncs',
  'max-endpoints-per-slice',
  'endpointslice-updates-batch-period',
  'concurrent-gc-syncs',
  'enable-garbage-collector',
  'concurrent-resource-quota-syncs',
  'resource-quota-sync-period',
];
