/**
 * --allow-privileged=false (the seed's default): a pod, or an object carrying a pod template, with a
 * container whose securityContext.privileged is true is invalid, with upstream's error
 * (ValidateSecurityContext: `Forbidden: disallowed by cluster policy`), for init and ephemeral
 * containers too. Checked on create and update, as part of the kind's validation.
 */
import {field, type FieldError} from '../../../api/status.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../patch/types.js';

/** Where each kind keeps its pod spec. */
const POD_SPEC_PATHS: Record<string, string[]> = {
  Pod: ['spec'],
  PodTemplate: ['template', 'spec'],
  ReplicationController: ['spec', 'template', 'spec'],
  ReplicaSet: ['spec', 'template', 'spec'],
  Deployment: ['spec', 'template', 'spec'],
  StatefulSet: ['spec', 'template', 'spec'],
  DaemonSet: ['spec', 'template', 'spec'],
  Job: ['spec', 'template', 'spec'],
  CronJob: ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
};

export function privilegedContainerErrors(kind: string, object: JsonObject): FieldError[] {
  const path = POD_SPEC_PATHS[kind];
  if (!path) return [];
  let spec: JsonValue | undefined = object;
  for (const key of path) spec = isJsonObject(spec) ? spec[key] : undefined;
  if (!isJsonObject(spec)) return [];
  const errors: FieldError[] = [];
  for (const list of ['initContainers', 'containers', 'ephemeralContainers']) {
    const containers = spec[list];
    if (!Array.isArray(containers)) continue;
    containers.forEach((c, i) => {
      const sc = isJsonObject(c) ? c.securityContext : undefined;
      if (isJsonObject(sc) && sc.privileged === true) {
        errors.push(field.forbidden(`${path.join('.')}.${list}[${i}].securityContext.privileged`, 'disallowed by cluster policy'));
      }
    });
  }
  return errors;
}
