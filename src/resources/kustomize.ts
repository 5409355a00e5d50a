/**
 * `-k DIR`: a small, strict kustomize build. It supports the fields most kustomizations use
 * (resources, namespace, namePrefix, nameSuffix, labels, commonLabels, patches) and refuses any other
 * field with a clear error rather than building something different from what kustomize would.
 * Written here because the real kustomize is a Go program with no maintained JavaScript port.
 */
import {readFile, stat} from 'node:fs/promises';
import {join, resolve} from 'node:path';
import {decodeObjects, parseDocuments} from './decode.js';
import {flattenLists, isApiObject, type ApiObject} from './object.js';
import {readSources} from './sources.js';
import {applyPatch, type JsonObject, type JsonValue} from '../patch/index.js';

export class KustomizeError extends Error {}

const KUSTOMIZATION_FILES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'];
const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'namePrefix', 'nameSuffix', 'labels', 'commonLabels', 'patches']);

interface LabelRule {
  pairs: Record<string, string>;
  includeSelectors: boolean;
  includeTemplates: boolean;
}

interface PatchRule {
  text: string;
  source: string;
  target?: {kind?: string; name?: string; namespace?: string; group?: string; version?: string};
}

export async function kustomizeBuild(dir: string): Promise<ApiObject[]> {
  const file = await findKustomization(dir);
  const [doc] = await parseDocuments(await readFile(file, 'utf8'), file);
  if (!isApiObject(doc)) throw new KustomizeError(`${file}: expected a map of kustomization fields`);
  const unknown = Object.keys(doc).filter((key) => !SUPPORTED.has(key));
  if (unknown.length > 0) {
    throw new KustomizeError(
      `${file}: unsupported kustomization field(s) ${unknown.join(', ')}; orch supports ${[...SUPPORTED].filter((k) => k !== 'apiVersion' && k !== 'kind').join(', ')}`,
    );
  }

  let objects: ApiObject[] = [];
  for (const entry of stringList(doc.resources, file, 'resources')) {
    const path = resolve(dir, entry);
    const isDir = await stat(path).then((s) => s.isDirectory(), () => false);
    if (isDir) {
      objects.push(...(await kustomizeBuild(path)));
    } else {
      for (const source of await readSources([path], false)) objects.push(...(await decodeObjects(source.text, source.name)));
    }
  }
  objects = flattenLists(objects);

  for (const rule of patchRules(doc.patches, dir, file)) objects = await applyPatchRule(objects, await rule);
  for (const rule of labelRules(doc, file)) objects.forEach((o) => applyLabels(o, rule));
  if (typeof doc.namespace === 'string') objects.forEach((o) => setNamespace(o, doc.namespace as string));
  const prefix = typeof doc.namePrefix === 'string' ? doc.namePrefix : '';
  const suffix = typeof doc.nameSuffix === 'string' ? doc.nameSuffix : '';
  if (prefix || suffix) {
    for (const object of objects) {
      if (object.metadata?.name && object.kind !== 'Namespace') object.metadata.name = `${prefix}${object.metadata.name}${suffix}`;
    }
  }
  return objects;
}

async function findKustomization(dir: string): Promise<string> {
  for (const name of KUSTOMIZATION_FILES) {
    const path = join(dir, name);
    if (await stat(path).then((s) => s.isFile(), () => false)) return path;
  }
  throw new KustomizeError(
    `unable to find one of 'kustomization.yaml', 'kustomization.yml' or 'Kustomization' in directory '${dir}'`,
  );
}

function stringList(value: unknown, file: string, field: string): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
    throw new KustomizeError(`${file}: ${field} must be a list of strings`);
  }
  return value;
}

function stringMap(value: unknown, file: string, field: string): Record<string, string> {
  if (!isApiObject(value)) throw new KustomizeError(`${file}: ${field} must be a map of strings`);
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, String(v)]));
}

function labelRules(doc: ApiObject, file: string): LabelRule[] {
  const rules: LabelRule[] = [];
  if (doc.commonLabels !== undefined) {
    rules.push({pairs: stringMap(doc.commonLabels, file, 'commonLabels'), includeSelectors: true, includeTemplates: true});
  }
  if (doc.labels !== undefined) {
    if (!Array.isArray(doc.labels)) throw new KustomizeError(`${file}: labels must be a list of {pairs, includeSelectors, includeTemplates}`);
    for (const entry of doc.labels) {
      if (!isApiObject(entry)) throw new KustomizeError(`${file}: each labels entry must be a map`);
      const includeSelectors = entry.includeSelectors === true;
      rules.push({
        pairs: stringMap(entry.pairs ?? {}, file, 'labels[].pairs'),
        includeSelectors,
        includeTemplates: includeSelectors || entry.includeTemplates === true,
      });
    }
  }
  return rules;
}

/** Kinds whose pod template and selector carry the labels, as kustomize's default field specs say. */
const WORKLOADS = new Set(['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet', 'ReplicationController', 'Job']);

function applyLabels(object: ApiObject, rule: LabelRule): void {
  const merge = (target: Record<string, unknown>, key: string) => {
    target[key] = {...((target[key] as Record<string, string>) ?? {}), ...rule.pairs};
  };
  object.metadata ??= {};
  merge(object.metadata, 'labels');
  const spec = object.spec as Record<string, any> | undefined;
  if (!spec) return;
  if (rule.includeSelectors) {
    if (object.kind === 'Service' || object.kind === 'ReplicationController') merge(spec, 'selector');
    else if (WORKLOADS.has(object.kind ?? '')) {
      spec.selector ??= {};
      merge(spec.selector, 'matchLabels');
    }
  }
  if (rule.includeTemplates && WORKLOADS.has(object.kind ?? '')) {
    spec.template ??= {};
    spec.template.metadata ??= {};
    merge(spec.template.metadata, 'labels');
  }
  if (rule.includeTemplates && object.kind === 'CronJob') {
    spec.jobTemplate ??= {};
    spec.jobTemplate.spec ??= {};
    spec.jobTemplate.spec.template ??= {};
    spec.jobTemplate.spec.template.metadata ??= {};
    merge(spec.jobTemplate.spec.template.metadata, 'labels');
  }
}

const CLUSTER_SCOPED = new Set(['Namespace', 'Node', 'PersistentVolume', 'ClusterRole', 'ClusterRoleBinding', 'CustomResourceDefinition', 'PriorityClass', 'StorageClass']);

function setNamespace(object: ApiObject, namespace: string): void {
  if (CLUSTER_SCOPED.has(object.kind ?? '')) return;
  object.metadata ??= {};
  object.metadata.namespace = namespace;
}

function* patchRules(value: unknown, dir: string, file: string): Generator<Promise<PatchRule>> {
  if (value === undefined) return;
  if (!Array.isArray(value)) throw new KustomizeError(`${file}: patches must be a list of {path or patch, target}`);
  for (const entry of value) {
    if (!isApiObject(entry) || (typeof entry.path !== 'string') === (typeof entry.patch !== 'string')) {
      throw new KustomizeError(`${file}: each patches entry needs exactly one of path or patch`);
    }
    const target = entry.target === undefined ? undefined : (entry.target as PatchRule['target']);
    yield typeof entry.path === 'string'
      ? readFile(resolve(dir, entry.path), 'utf8').then(
          (text) => ({text, source: entry.path as string, target}),
          () => {
            throw new KustomizeError(`${file}: patch file "${entry.path}" cannot be read`);
          },
        )
      : Promise.resolve({text: entry.patch as string, source: `${file} (inline patch)`, target});
  }
}

async function applyPatchRule(objects: ApiObject[], rule: PatchRule): Promise<ApiObject[]> {
  const [patch] = await parseDocuments(rule.text, rule.source);
  const isJsonPatch = Array.isArray(patch);
  if (isJsonPatch && !rule.target) throw new KustomizeError(`${rule.source}: a JSON patch (a list of operations) needs a target`);
  const target = rule.target ?? targetOf(patch, rule.source);
  let matched = false;
  const out = objects.map((object) => {
    if (!matches(object, target)) return object;
    matched = true;
    return applyPatch({object: object as JsonObject, patch: patch as JsonValue, type: isJsonPatch ? 'json' : 'strategic'}).result as ApiObject;
  });
  if (!matched) throw new KustomizeError(`${rule.source}: no resource matches the patch target ${JSON.stringify(target)}`);
  return out;
}

function targetOf(patch: unknown, source: string): NonNullable<PatchRule['target']> {
  if (!isApiObject(patch) || typeof patch.kind !== 'string' || !patch.metadata?.name) {
    throw new KustomizeError(`${source}: a strategic merge patch without a target must name its kind and metadata.name`);
  }
  return {kind: patch.kind, name: patch.metadata.name};
}

function matches(object: ApiObject, target: NonNullable<PatchRule['target']>): boolean {
  const [group, version] = (object.apiVersion ?? '').includes('/') ? (object.apiVersion as string).split('/') : ['', object.apiVersion];
  return (
    (!target.kind || target.kind === object.kind) &&
    (!target.name || new RegExp(`^${target.name}$`).test(object.metadata?.name ?? '')) &&
    (!target.namespace || target.namespace === object.metadata?.namespace) &&
    (target.group === undefined || target.group === group) &&
    (!target.version || target.version === version)
  );
}
