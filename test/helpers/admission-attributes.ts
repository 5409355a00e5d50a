/** Admission attributes for plugin unit tests: a real resource of the catalog, a user, and the object. */
import {builtinResource} from '../../src/api/resources.js';
import type {AdmissionAttributes, AdmissionOperation} from '../../src/daemons/apiserver/admission/interfaces.js';
import type {JsonObject} from '../../src/patch/types.js';
import type {UserInfo} from '../../src/daemons/shared/authentication/user.js';

export const ADMIN: UserInfo = {name: 'admin', groups: ['system:masters', 'system:authenticated']};

export interface AttributeOptions {
  subresource?: string;
  namespace?: string;
  name?: string;
  oldObject?: JsonObject;
  user?: UserInfo;
  annotations?: Record<string, string>;
}

export function attributes(group: string, plural: string, operation: AdmissionOperation, object: JsonObject | undefined, o: AttributeOptions = {}): AdmissionAttributes {
  const resource = builtinResource(group, plural);
  if (!resource) throw new Error(`no resource ${group}/${plural}`);
  const metadata = object && typeof object.metadata === 'object' ? (object.metadata as JsonObject) : {};
  const annotations = o.annotations;
  return {
    operation,
    resource,
    subresource: o.subresource ?? '',
    namespace: o.namespace ?? (resource.namespaced ? String(metadata.namespace ?? 'default') : ''),
    name: o.name ?? String(metadata.name ?? ''),
    object,
    oldObject: o.oldObject,
    user: o.user ?? ADMIN,
    dryRun: false,
    addWarning: () => undefined,
    addAnnotation: annotations ? (key, value) => void (annotations[key] = value) : undefined,
  };
}

export const podAttributes = (operation: AdmissionOperation, pod: JsonObject, o: AttributeOptions = {}) => attributes('', 'pods', operation, pod, o);

/** A pod with one container `app` (image `nginx`), merged with `spec`. */
export function pod(spec: JsonObject = {}, metadata: JsonObject = {}): JsonObject {
  return {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'web', namespace: 'default', ...metadata}, spec: {containers: [{name: 'app', image: 'nginx'}], ...spec}};
}
