/**
 * What the pod admission plugins share: which requests are "a pod proper" (pods without a
 * subresource), the walk over a pod's containers and the names it references, and typed
 * tolerations over upstream's rules (../tolerations.ts: superset, merge; here: whitelist,
 * add-or-update). Pure functions over JSON objects.
 */
import {isJsonObject, jsonEqual, type JsonObject, type JsonValue} from '../../../../patch/types.js';
import {stringAt} from '../../rest/objects.js';
import type {AdmissionAttributes} from '../interfaces.js';
import {isSuperset as jsonIsSuperset, mergeTolerations as jsonMergeTolerations} from '../tolerations.js';
import type {Toleration} from '../../../../api/toleration.js';
export type {Toleration} from '../../../../api/toleration.js';

export const isCoreResource = (attributes: AdmissionAttributes, plural: string): boolean =>
  attributes.resource.group === '' && attributes.resource.plural === plural;

/** The pod of a write to pods themselves (no subresource), or undefined: what most pod plugins look at. */
export function podProper(attributes: AdmissionAttributes): JsonObject | undefined {
  if (!isCoreResource(attributes, 'pods') || attributes.subresource !== '') return undefined;
  return isJsonObject(attributes.object) ? attributes.object : undefined;
}

export const objectsAt = (value: JsonValue | undefined): JsonObject[] => (Array.isArray(value) ? value.filter(isJsonObject) : []);

/** The spec of a pod, created when missing (mutating plugins write into it). */
export function specOf(pod: JsonObject): JsonObject {
  if (!isJsonObject(pod.spec)) pod.spec = {};
  return pod.spec as JsonObject;
}

export interface ContainerAt {
  container: JsonObject;
  /** The field path, e.g. `spec.initContainers[0]`. */
  path: string;
  list: 'initContainers' | 'containers' | 'ephemeralContainers';
}

/** Upstream's VisitContainersWithPath order: init containers, containers, ephemeral containers. */
export function containersOf(spec: JsonObject, lists: ReadonlyArray<ContainerAt['list']> = ['initContainers', 'containers', 'ephemeralContainers']): ContainerAt[] {
  const out: ContainerAt[] = [];
  for (const list of lists) objectsAt(spec[list]).forEach((container, i) => out.push({container, path: `spec.${list}[${i}]`, list}));
  return out;
}

/** Every secret name a pod references (upstream's VisitPodSecretNames over all containers). */
export function podSecretNames(spec: JsonObject): string[] {
  const found: string[] = [];
  for (const ref of objectsAt(spec.imagePullSecrets)) if (typeof ref.name === 'string') found.push(ref.name);
  for (const {container} of containersOf(spec)) {
    for (const from of objectsAt(container.envFrom)) {
      const name = stringAt(from, 'secretRef', 'name');
      if (name) found.push(name);
    }
    for (const env of objectsAt(container.env)) {
      const name = stringAt(env, 'valueFrom', 'secretKeyRef', 'name');
      if (name) found.push(name);
    }
  }
  for (const volume of objectsAt(spec.volumes)) {
    const direct = stringAt(volume, 'secret', 'secretName');
    if (direct) found.push(direct);
    for (const source of objectsAt(isJsonObject(volume.projected) ? volume.projected.sources : undefined)) {
      const name = stringAt(source, 'secret', 'name');
      if (name) found.push(name);
    }
    for (const key of ['azureFile', 'cephfs', 'cinder', 'flexVolume', 'iscsi', 'rbd', 'scaleIO', 'storageos', 'csi']) {
      const source = volume[key];
      if (!isJsonObject(source)) continue;
      const name = key === 'azureFile' ? stringAt(source, 'secretName') : stringAt(source, key === 'csi' ? 'nodePublishSecretRef' : 'secretRef', 'name');
      if (name) found.push(name);
    }
  }
  return found;
}

/** Every config map name a pod references (upstream's VisitPodConfigmapNames). */
export function podConfigMapNames(spec: JsonObject): string[] {
  const found: string[] = [];
  for (const {container} of containersOf(spec)) {
    for (const from of objectsAt(container.envFrom)) {
      const name = stringAt(from, 'configMapRef', 'name');
      if (name) found.push(name);
    }
    for (const env of objectsAt(container.env)) {
      const name = stringAt(env, 'valueFrom', 'configMapKeyRef', 'name');
      if (name) found.push(name);
    }
  }
  for (const volume of objectsAt(spec.volumes)) {
    const direct = stringAt(volume, 'configMap', 'name');
    if (direct) found.push(direct);
    for (const source of objectsAt(isJsonObject(volume.projected) ? volume.projected.sources : undefined)) {
      const name = stringAt(source, 'configMap', 'name');
      if (name) found.push(name);
    }
  }
  return found;
}

// --- Tolerations ------------------------------------------------------------------------------


/** A toleration as a plain record (the JSON form drops absent fields, so equality is field-wise). */
export function toToleration(value: JsonValue): Toleration {
  const o = isJsonObject(value) ? value : {};
  const t: Toleration = {};
  if (typeof o.key === 'string' && o.key !== '') t.key = o.key;
  if (typeof o.operator === 'string' && o.operator !== '') t.operator = o.operator;
  if (typeof o.value === 'string' && o.value !== '') t.value = o.value;
  if (typeof o.effect === 'string' && o.effect !== '') t.effect = o.effect;
  if (typeof o.tolerationSeconds === 'number') t.tolerationSeconds = o.tolerationSeconds;
  return t;
}

export const tolerationsOf = (spec: JsonObject): Toleration[] => (Array.isArray(spec.tolerations) ? spec.tolerations.map(toToleration) : []);

/** A toleration's JSON form: its fields are strings and numbers, the absent ones are left out (as JSON.stringify would, without its cost on every pod write). */
export const tolerationJson = (t: Toleration): JsonObject => {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(t)) if (v !== undefined) out[k] = v as string | number;
  return out;
};

export const sameToleration = (a: Toleration, b: Toleration): boolean => jsonEqual(tolerationJson(a), tolerationJson(b));

/** Upstream's isSuperset (../tolerations.ts) over typed tolerations. */
export const isSuperset = (ss: Toleration, t: Toleration): boolean => jsonIsSuperset(tolerationJson(ss), tolerationJson(t));

/** Upstream's MergeTolerations (../tolerations.ts) over typed tolerations. */
export const mergeTolerations = (first: readonly Toleration[], second: readonly Toleration[]): Toleration[] =>
  jsonMergeTolerations(first.map(tolerationJson), second.map(tolerationJson)).map(toToleration);

/** Upstream's VerifyAgainstWhitelist: every toleration is covered by one of the whitelist's. */
export function verifyAgainstWhitelist(tolerations: readonly Toleration[], whitelist: readonly Toleration[]): boolean {
  if (whitelist.length === 0 || tolerations.length === 0) return true;
  return tolerations.every((t) => whitelist.some((w) => isSuperset(w, t)));
}

/** Upstream's Toleration.MatchToleration: same key, operator, value and effect. */
const matchToleration = (a: Toleration, b: Toleration): boolean =>
  (a.key ?? '') === (b.key ?? '') && (a.operator ?? '') === (b.operator ?? '') && (a.value ?? '') === (b.value ?? '') && (a.effect ?? '') === (b.effect ?? '');

/** Upstream's AddOrUpdateTolerationInPod: replaces a matching toleration or appends; false when nothing changed. */
export function addOrUpdateToleration(spec: JsonObject, toleration: Toleration): boolean {
  const current = tolerationsOf(spec);
  let updated = false;
  const next: Toleration[] = [];
  for (const t of current) {
    if (matchToleration(t, toleration)) {
      if (sameToleration(t, toleration)) return false;
      next.push(toleration);
      updated = true;
    } else {
      next.push(t);
    }
  }
  if (!updated) next.push(toleration);
  spec.tolerations = next.map(tolerationJson);
  return true;
}
