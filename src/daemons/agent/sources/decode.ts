/**
 * Decoding and checking static pod manifests (upstream pkg/kubelet/config/common.go
 * tryDecodeSinglePod / tryDecodePodList): YAML or JSON with type metadata, one Pod (a file) or a
 * Pod or PodList (a URL), the static defaults, create validation and the rule that static pods
 * may not reference API objects. Pure: errors are thrown as ManifestError with upstream's texts.
 */
import { parse as parseYaml } from 'yaml';
import { field, fieldErrorText, type FieldError } from '../../../api/status.js';
import { nameProblems, validateObjectMeta } from '../../../api/validation.js';
import type { JsonObject } from '../../../patch/types.js';
import { applyStaticDefaults, type StaticOrigin } from './static-defaults.js';
import type { SourcePod } from './types.js';

/** Upstream's bound on a manifest file or URL body. */
export const MAX_MANIFEST_BYTES = 10 * 1024 * 1024;

export class ManifestError extends Error {
  override name = 'ManifestError';
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

/** JSON is YAML, so one parser reads both (upstream converts YAML to JSON first). */
function parseManifest(data: string): Json {
  let value: unknown;
  try {
    value = parseYaml(data);
  } catch (error) {
    throw new ManifestError(`error converting YAML to JSON: ${(error as Error).message.split('\n')[0]}`);
  }
  if (!isObject(value)) throw new ManifestError(`couldn't get version/kind; json parse error: expected an object, got ${JSON.stringify(value) ?? 'nothing'}`);
  return value;
}

/** The type metadata checks of upstream's universal decoder. */
function checkTypeMeta(object: Json): string {
  const text = JSON.stringify(object);
  if (typeof object.kind !== 'string' || object.kind === '') throw new ManifestError(`Object 'Kind' is missing in '${text}'`);
  if (typeof object.apiVersion !== 'string' || object.apiVersion === '') throw new ManifestError(`Object 'apiVersion' is missing in '${text}'`);
  if (object.apiVersion !== 'v1') throw new ManifestError(`no kind "${object.kind}" is registered for version "${object.apiVersion}"`);
  return object.kind;
}

function toPod(object: Json): SourcePod {
  return {
    ...object,
    metadata: isObject(object.metadata) ? { ...object.metadata } : {},
    spec: isObject(object.spec) ? { ...object.spec } : {},
    ...(isObject(object.status) ? { status: { ...object.status } } : {}),
  } as SourcePod;
}

function validateContainers(spec: Json): FieldError[] {
  const errors: FieldError[] = [];
  for (const list of ['initContainers', 'containers'] as const) {
    const containers = spec[list];
    if (list === 'containers' && (!Array.isArray(containers) || containers.length === 0)) {
      errors.push(field.required('spec.containers'));
      continue;
    }
    const seen = new Set<string>();
    (Array.isArray(containers) ? containers : []).forEach((container: unknown, i) => {
      const path = `spec.${list}[${i}]`;
      const c = isObject(container) ? container : {};
      if (typeof c.name !== 'string' || c.name === '') errors.push(field.required(`${path}.name`));
      else if (seen.has(c.name)) errors.push(field.duplicate(`${path}.name`, c.name));
      else {
        seen.add(c.name);
        for (const problem of nameProblems(c.name, 'label')) errors.push(field.invalid(`${path}.name`, c.name, problem));
      }
      if (typeof c.image !== 'string' || c.image.trim() === '') errors.push(field.required(`${path}.image`));
    });
  }
  return errors;
}

/** The create validation that matters for a pod run from a manifest (names, containers). */
export function validateStaticPod(pod: SourcePod): FieldError[] {
  const errors = validateObjectMeta(pod as unknown as JsonObject, 'subdomain');
  const namespace = pod.metadata.namespace ?? '';
  for (const problem of nameProblems(namespace, 'label')) errors.push(field.invalid('metadata.namespace', namespace, problem));
  return [...errors, ...validateContainers(pod.spec)];
}

/**
 * Upstream (PreventStaticPodAPIReferences): a static pod runs without the API server, so it may
 * not depend on objects only the API server has. Returns the first problem, or undefined.
 */
export function staticPodReferenceProblem(pod: SourcePod): string | undefined {
  const spec = pod.spec;
  const objects = (value: unknown): Json[] => (Array.isArray(value) ? value.filter(isObject) : []);
  const containers = [...objects(spec.initContainers), ...objects(spec.containers), ...objects(spec.ephemeralContainers)];
  const refs = { secrets: false, configmaps: false, serviceaccounts: false, persistentvolumeclaims: false };
  if (typeof spec.serviceAccountName === 'string' && spec.serviceAccountName !== '') refs.serviceaccounts = true;
  if (objects(spec.imagePullSecrets).length > 0) refs.secrets = true;
  for (const container of containers) {
    for (const env of objects(container.env)) {
      const from = isObject(env.valueFrom) ? env.valueFrom : {};
      if (from.secretKeyRef) refs.secrets = true;
      if (from.configMapKeyRef) refs.configmaps = true;
    }
    for (const envFrom of objects(container.envFrom)) {
      if (envFrom.secretRef) refs.secrets = true;
      if (envFrom.configMapRef) refs.configmaps = true;
    }
  }
  for (const volume of objects(spec.volumes)) {
    if (volume.secret) refs.secrets = true;
    if (volume.configMap) refs.configmaps = true;
    if (volume.persistentVolumeClaim || volume.ephemeral) refs.persistentvolumeclaims = true;
    const projected = isObject(volume.projected) ? volume.projected : {};
    for (const source of objects(projected.sources)) {
      if (source.secret) refs.secrets = true;
      if (source.configMap) refs.configmaps = true;
      if (source.serviceAccountToken) refs.serviceaccounts = true;
      if (source.clusterTrustBundle) return 'static pods may not use ClusterTrustBundle projected volume sources';
    }
  }
  if (objects(spec.resourceClaims).length > 0) return 'static pods may not use ResourceClaims';
  const referenced = (Object.keys(refs) as (keyof typeof refs)[]).find((resource) => refs[resource]);
  return referenced && `static pods may not reference ${referenced}`;
}

/** Defaults, validates and checks one decoded pod object. */
function finishPod(object: Json, origin: StaticOrigin, nodeName: string): SourcePod {
  const decoded = toPod(object);
  if (!decoded.metadata.name) throw new ManifestError('invalid pod: name is needed for the pod');
  const pod = applyStaticDefaults(decoded, origin, nodeName);
  const errors = validateStaticPod(pod);
  if (errors.length > 0) {
    const texts = errors.map(fieldErrorText);
    throw new ManifestError(`invalid pod: [${texts.join(', ')}]`);
  }
  const problem = staticPodReferenceProblem(pod);
  if (problem) throw new ManifestError(problem);
  return pod;
}

/** One manifest file: exactly one Pod (a list is refused, as upstream refuses it from files). */
export function decodeManifestFile(data: string, path: string, nodeName: string): SourcePod {
  const object = parseManifest(data);
  const kind = checkTypeMeta(object);
  if (kind !== 'Pod') throw new ManifestError(`invalid pod: expected a single Pod, got kind ${JSON.stringify(kind)}`);
  return finishPod(object, { kind: 'file', path }, nodeName);
}

/** The body of the manifest URL: a Pod or a PodList (upstream tries the single pod first). */
export function decodeManifestUrlBody(data: string, url: string, nodeName: string): SourcePod[] {
  const object = parseManifest(data);
  const kind = checkTypeMeta(object);
  const origin: StaticOrigin = { kind: 'http', url };
  if (kind === 'Pod') return [finishPod(object, origin, nodeName)];
  if (kind === 'PodList') {
    const items = Array.isArray(object.items) ? object.items : [];
    // Items of a list carry no type metadata of their own; each must still be an object.
    return items.map((item: unknown) => finishPod(isObject(item) ? item : {}, origin, nodeName));
  }
  throw new ManifestError(`${url}: couldn't parse as a single pod or as a pod list: kind ${JSON.stringify(kind)}`);
}
