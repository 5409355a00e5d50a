/**
 * NodeRestriction: what a node's agent (user `system:node:<name>` in `system:nodes`) may write,
 * beyond what the Node authorizer lets it reach: only its own Node object (not its taints, not the
 * `node-restriction.<labelDomain>/` labels, and on update no reserved label outside the agent's set),
 * only mirror pods bound to itself and owned by its Node, the status of pods bound to it, evictions
 * of its pods, its own lease and CSINode, tokens for its pods, claim status, its resource slices
 * (upstream's plugin/pkg/admission/noderestriction).
 */
import {names} from '../../../../api/names.js';
import {badRequest, notFound} from '../../../../api/status.js';
import {isJsonObject, jsonEqual, type JsonObject, type JsonValue} from '../../../../patch/types.js';
import {deepCopy, labelsOf, stringAt, valueAt} from '../../rest/objects.js';
import type {UserInfo} from '../../../shared/authentication/user.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin, AdmissionPluginContext} from '../interfaces.js';
import {admissionForbidden} from '../errors.js';
import {isCoreResource, objectsAt, podConfigMapNames, podSecretNames, specOf} from './pod-helpers.js';

/** Upstream's NodeIdentifier: a user in the nodes group is a node; its name follows the prefix ('' if none). */
export function nodeOf(user: UserInfo): {isNode: boolean; nodeName: string} {
  const {users} = names();
  if (!user.groups.includes(users.nodesGroup)) return {isNode: false, nodeName: ''};
  return {isNode: true, nodeName: user.name.startsWith(users.nodePrefix) ? user.name.slice(users.nodePrefix.length) : ''};
}

const labelNamespace = (key: string): string => (key.includes('/') ? key.slice(0, key.indexOf('/')) : '');
const inNamespace = (namespace: string, domain: string): boolean => namespace === domain || namespace.endsWith(`.${domain}`);

/** A label under the product's reserved domains (`kubernetes.io`, `k8s.io` upstream). */
const isReservedLabel = (key: string): boolean => {
  const ns = labelNamespace(key);
  return inNamespace(ns, names().labelDomain) || inNamespace(ns, names().domain);
};

/** Upstream's IsKubeletLabel: the well-known node labels and the agent's own label namespaces. */
export function isAgentLabel(key: string): boolean {
  const l = names().labels;
  const known = [l.hostname, l.zone, l.region, l.failureDomainZone, l.failureDomainRegion, l.betaInstanceType, l.instanceType, l.os, l.arch, l.betaOs, l.betaArch];
  if (known.includes(key)) return true;
  return l.nodeLabelAllowedPrefixes.some((allowed) => inNamespace(labelNamespace(key), allowed));
}

/** The label keys added, removed or changed between two label sets. */
export function modifiedLabels(a: Record<string, string>, b: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => a[k] !== b[k]).sort();
}

/** The labels a node may not set: node-restriction ones always, other reserved ones outside the agent's set on update. */
export function forbiddenLabels(modified: readonly string[], operation: AdmissionOperation): string[] {
  const restricted = names().podAdmission.nodeRestrictionLabelNamespace;
  return modified.filter((key) => inNamespace(labelNamespace(key), restricted) || (operation === 'UPDATE' && isReservedLabel(key) && !isAgentLabel(key)));
}

/** The decision on a node's write to a Node: undefined when allowed, else the reason. */
export function nodeProblem(nodeName: string, operation: AdmissionOperation, requestedName: string, node?: JsonObject, oldNode?: JsonObject): string | undefined {
  if (requestedName !== nodeName) return `node "${nodeName}" is not allowed to modify node "${requestedName}"`;
  if (operation === 'CREATE' && node) {
    if (valueAt(node, 'spec', 'configSource') != null) return `node "${nodeName}" is not allowed to create pods with a non-nil configSource`;
    const bad = forbiddenLabels(modifiedLabels(labelsOf(node), {}), operation);
    if (bad.length) return `node "${nodeName}" is not allowed to set the following labels: ${bad.join(', ')}`;
  }
  if (operation === 'UPDATE' && node && oldNode) {
    const source = valueAt(node, 'spec', 'configSource');
    if (source != null && !jsonEqual(source, valueAt(oldNode, 'spec', 'configSource'))) {
      return `node "${nodeName}" is not allowed to update configSource to a new non-nil configSource`;
    }
    const taints = (o: JsonObject) => objectsAt(valueAt(o, 'spec', 'taints'));
    if (!jsonEqual(taints(node), taints(oldNode))) return `node "${nodeName}" is not allowed to modify taints`;
    const bad = forbiddenLabels(modifiedLabels(labelsOf(node), labelsOf(oldNode)), operation);
    if (bad.length) return `is not allowed to modify labels: ${bad.join(', ')}`;
  }
  return undefined;
}

/** The decision on a node creating a pod: only its own mirror pods, referencing nothing else. */
export function mirrorPodCreateProblem(nodeName: string, pod: JsonObject, nodeUid: string | undefined): string | undefined {
  const mirror = names().annotations.mirrorPod;
  if (stringAt(pod, 'metadata', 'annotations', mirror) === undefined) return `pod does not have "${mirror}" annotation, node "${nodeName}" can only create mirror pods`;
  const spec = specOf(pod);
  if ((spec.nodeName ?? '') !== nodeName) return `node "${nodeName}" can only create pods with spec.nodeName set to itself`;
  const owners = objectsAt(valueAt(pod, 'metadata', 'ownerReferences'));
  if (owners.length > 1) return `node "${nodeName}" can only create pods with a single owner reference set to itself`;
  if (owners.length === 0) return `node "${nodeName}" can only create pods with an owner reference set to itself`;
  const owner = owners[0]!;
  if (owner.apiVersion !== 'v1' || owner.kind !== 'Node' || owner.name !== nodeName) return `node "${nodeName}" can only create pods with an owner reference set to itself`;
  if (owner.controller !== true) return `node "${nodeName}" can only create pods with a controller owner reference set to itself`;
  if (owner.blockOwnerDeletion === true) return `node "${nodeName}" must not set blockOwnerDeletion on an owner reference`;
  if (nodeUid !== undefined && owner.uid !== nodeUid) return `node ${nodeName} UID mismatch: expected ${String(owner.uid ?? '')} got ${nodeUid}`;
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') return `node "${nodeName}" can not create pods that reference a service account`;
  if (podSecretNames(spec).length > 0) return `node "${nodeName}" can not create pods that reference secrets`;
  if (podConfigMapNames(spec).length > 0) return `node "${nodeName}" can not create pods that reference configmaps`;
  const volumes = objectsAt(spec.volumes);
  if (volumes.some((v) => objectsAt(isJsonObject(v.projected) ? v.projected.sources : undefined).some((s) => s.clusterTrustBundle !== undefined))) {
    return `node "${nodeName}" can not create pods that use clustertrustbundles`;
  }
  if (volumes.some((v) => v.persistentVolumeClaim !== undefined)) return `node "${nodeName}" can not create pods that reference persistentvolumeclaims`;
  if (objectsAt(spec.resourceClaims).length > 0) return `node "${nodeName}" can not create pods that reference resourceclaims`;
  return undefined;
}

/** A claim as a node may change it: everything but its capacity, conditions and allocations must stay. */
function claimWithoutStatusFields(claim: JsonObject): JsonValue {
  const copy = deepCopy(claim);
  const meta = isJsonObject(copy.metadata) ? copy.metadata : {};
  delete meta.resourceVersion;
  delete meta.managedFields;
  if (isJsonObject(copy.status)) {
    for (const key of ['capacity', 'conditions', 'allocatedResourceStatuses', 'allocatedResources']) delete copy.status[key];
  }
  return copy;
}

export interface NodeRestrictionDeps {
  getPod(namespace: string, name: string): Promise<JsonObject | undefined>;
  getNode(name: string): Promise<JsonObject | undefined>;
}

export class NodeRestriction implements AdmissionPlugin {
  readonly name = 'NodeRestriction';

  constructor(private readonly deps: NodeRestrictionDeps) {}

  handles(operation: AdmissionOperation): boolean {
    return operation !== 'CONNECT';
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    const {isNode, nodeName} = nodeOf(a.user);
    if (!isNode) return;
    if (nodeName === '') throw admissionForbidden(a, `could not determine node from user "${a.user.name}"`);
    const deny = (reason: string | undefined) => {
      if (reason !== undefined) throw admissionForbidden(a, reason);
    };
    const {group, plural} = {group: a.resource.group, plural: a.resource.plural};
    const groups = names().groups;
    if (isCoreResource(a, 'pods')) {
      switch (a.subresource) {
        case '':
          return this.pod(a, nodeName);
        case 'status':
          return this.podStatus(a, nodeName);
        case 'eviction':
          return this.eviction(a, nodeName);
        default:
          return deny(`unexpected pod subresource "${a.subresource}", only 'status' and 'eviction' are allowed`);
      }
    }
    if (isCoreResource(a, 'nodes')) {
      const name = a.operation === 'CREATE' ? a.name || (a.object ? stringAt(a.object, 'metadata', 'name') ?? '' : '') : a.name;
      return deny(nodeProblem(nodeName, a.operation, name, a.object, a.oldObject));
    }
    if (isCoreResource(a, 'persistentvolumeclaims')) {
      if (a.subresource !== 'status') return deny('may only update PVC status');
      if (a.operation !== 'UPDATE') return deny(`unexpected operation "${a.operation}"`);
      if (!a.object || !a.oldObject || jsonEqual(claimWithoutStatusFields(a.object), claimWithoutStatusFields(a.oldObject))) return;
      return deny(`node "${nodeName}" is not allowed to update fields other than status.capacity and status.conditions`);
    }
    if (isCoreResource(a, 'serviceaccounts')) return this.token(a, nodeName);
    if (group === groups.coordination && plural === 'leases') {
      if (a.namespace !== names().namespaces.nodeLease) return deny(`can only access leases in the "${names().namespaces.nodeLease}" system namespace`);
      const name = a.operation === 'CREATE' && a.object ? stringAt(a.object, 'metadata', 'name') ?? '' : a.name;
      return deny(name !== nodeName ? 'can only access node lease with the same name as the requesting node' : undefined);
    }
    if (group === groups.storage && plural === 'csinodes') {
      const name = a.operation === 'CREATE' && a.object ? stringAt(a.object, 'metadata', 'name') ?? '' : a.name;
      return deny(name !== nodeName ? 'can only access CSINode with the same name as the requesting node' : undefined);
    }
    if (group === groups.resource && plural === 'resourceslices') {
      if (a.operation === 'CREATE' && a.object && stringAt(a.object, 'spec', 'nodeName') !== nodeName) {
        return deny('can only create ResourceSlice with the same NodeName as the requesting node');
      }
      if (a.operation === 'DELETE' && a.oldObject && stringAt(a.oldObject, 'spec', 'nodeName') !== nodeName) {
        return deny('can only delete ResourceSlice with the same NodeName as the requesting node');
      }
    }
  }

  private async pod(a: AdmissionAttributes, nodeName: string): Promise<void> {
    if (a.operation === 'CREATE') {
      const pod = a.object ?? {};
      let uid: string | undefined;
      const owner = objectsAt(valueAt(pod, 'metadata', 'ownerReferences'))[0];
      if (owner && owner.kind === 'Node' && owner.name === nodeName) {
        const node = await this.deps.getNode(nodeName);
        if (!node) throw notFound({group: '', resource: 'nodes'}, nodeName);
        uid = stringAt(node, 'metadata', 'uid') ?? '';
      }
      const problem = mirrorPodCreateProblem(nodeName, pod, uid);
      if (problem) throw admissionForbidden(a, problem);
      return;
    }
    if (a.operation === 'DELETE') {
      const existing = a.oldObject ?? (await this.deps.getPod(a.namespace, a.name));
      if (!existing) throw notFound({group: '', resource: 'pods'}, a.name);
      if (stringAt(existing, 'spec', 'nodeName') !== nodeName) throw admissionForbidden(a, `node "${nodeName}" can only delete pods with spec.nodeName set to itself`);
      return;
    }
    throw admissionForbidden(a, `unexpected operation "${a.operation}", node "${nodeName}" can only create and delete mirror pods`);
  }

  private podStatus(a: AdmissionAttributes, nodeName: string): void {
    if (a.operation !== 'UPDATE' || !a.oldObject || !a.object) throw admissionForbidden(a, `unexpected operation "${a.operation}"`);
    if (stringAt(a.oldObject, 'spec', 'nodeName') !== nodeName) throw admissionForbidden(a, `node "${nodeName}" can only update pod status for pods with spec.nodeName set to itself`);
    if (!jsonEqual(labelsOf(a.oldObject), labelsOf(a.object))) throw admissionForbidden(a, `node "${nodeName}" cannot update labels through pod status`);
    const claims = (o: JsonObject) => objectsAt(valueAt(o, 'status', 'resourceClaimStatuses'));
    if (!jsonEqual(claims(a.oldObject), claims(a.object))) throw admissionForbidden(a, `node "${nodeName}" cannot update resource claim statues`);
  }

  private async eviction(a: AdmissionAttributes, nodeName: string): Promise<void> {
    if (a.operation !== 'CREATE') throw admissionForbidden(a, `unexpected operation ${a.operation}`);
    const podName = a.name || (a.object ? stringAt(a.object, 'metadata', 'name') ?? '' : '');
    if (podName === '') throw badRequest('could not determine pod from request data');
    const pod = await this.deps.getPod(a.namespace, podName);
    if (!pod) throw notFound({group: '', resource: 'pods'}, podName);
    if (stringAt(pod, 'spec', 'nodeName') !== nodeName) throw admissionForbidden(a, `node ${nodeName} can only evict pods with spec.nodeName set to itself`);
  }

  /** TokenRequests from a node must be bound to a pod of that node (upstream's admitServiceAccount). */
  private async token(a: AdmissionAttributes, nodeName: string): Promise<void> {
    if (a.operation !== 'CREATE' || a.subresource !== 'token') return;
    const ref = a.object ? valueAt(a.object, 'spec', 'boundObjectRef') : undefined;
    if (!isJsonObject(ref) || ref.apiVersion !== 'v1' || ref.kind !== 'Pod' || !ref.name) throw admissionForbidden(a, 'node requested token not bound to a pod');
    if (!ref.uid) throw admissionForbidden(a, 'node requested token with a pod binding without a uid');
    const pod = await this.deps.getPod(a.namespace, String(ref.name));
    if (!pod) throw notFound({group: '', resource: 'pods'}, String(ref.name));
    if (stringAt(pod, 'metadata', 'uid') !== ref.uid) {
      throw admissionForbidden(a, `the UID in the bound object reference (${String(ref.uid)}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    if (stringAt(pod, 'spec', 'nodeName') !== nodeName) throw admissionForbidden(a, 'node requested token bound to a pod scheduled on a different node');
  }
}

export const createNodeRestriction = (context: AdmissionPluginContext): NodeRestriction =>
  new NodeRestriction({
    getPod: (namespace, name) => context.objects.get('', 'pods', namespace, name),
    getNode: (name) => context.objects.get('', 'nodes', '', name),
  });
