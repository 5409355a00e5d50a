/**
 * The files of a pod's volume (configMap, secret, downwardAPI, projected, emptyDir), as the
 * kubelet's volume plugins compute them before their atomic writer puts them on disk: which keys,
 * under which paths, with which modes. Object data and tokens come through injected sources.
 */
import {fieldRefValue, resourceFieldValue} from '../runtime/env.js';
import type {DownwardAPIVolumeFile, KeyToPath, Pod, Volume} from '../runtime/types.js';

/** A volume that cannot be set up now (a missing config map, a refused token): the pod waits and retries. */
export class VolumeError extends Error {}

export interface VolumeFile {
  /** Relative to the volume's directory (no `..`, no leading `/`). */
  path: string;
  content: Buffer;
  mode: number;
}

export interface VolumeSources {
  /** A config map's data (binaryData decoded); undefined when it does not exist. */
  configMap(namespace: string, name: string): Promise<Record<string, Buffer> | undefined>;
  /** A secret's data, decoded; undefined when it does not exist. */
  secret(namespace: string, name: string): Promise<Record<string, Buffer> | undefined>;
  /** A service account token bound to the pod. */
  token(pod: Pod, audience: string | undefined, expirationSeconds: number): Promise<string>;
  nodeIP: string;
}

/** 0644, upstream's defaultMode of configMap, secret, downwardAPI and projected volumes. */
const DEFAULT_MODE = 0o644;
/** Upstream's default (and minimum) lifetime of a projected token: one hour. */
const DEFAULT_TOKEN_SECONDS = 3600;

function checkPath(volume: string, path: string): string {
  if (!path || path.startsWith('/') || path.split('/').includes('..')) throw new VolumeError(`volume "${volume}": invalid path ${JSON.stringify(path)}: must be relative and may not contain '..'`);
  return path;
}

async function keyFiles(
  volume: string, kind: 'configmap' | 'secret', data: Record<string, Buffer> | undefined, name: string, items: KeyToPath[] | undefined, optional: boolean | undefined, mode: number,
): Promise<VolumeFile[]> {
  if (!data) {
    if (optional) return [];
    throw new VolumeError(`${kind} "${name}" not found`);
  }
  if (!items) return Object.keys(data).sort().map((key) => ({path: checkPath(volume, key), content: data[key], mode}));
  return items.map((item) => {
    if (!(item.key in data)) {
      if (optional) return undefined;
      throw new VolumeError(`configuration of volume "${volume}": key "${item.key}" not found in ${kind} "${name}"`);
    }
    return {path: checkPath(volume, item.path), content: data[item.key], mode: item.mode ?? mode};
  }).filter((f): f is VolumeFile => f !== undefined);
}

function downwardFiles(volume: string, pod: Pod, items: DownwardAPIVolumeFile[] | undefined, nodeIP: string, mode: number): VolumeFile[] {
  return (items ?? []).map((item) => {
    let value: string;
    try {
      if (item.fieldRef) value = fieldRefValue(pod, item.fieldRef, nodeIP);
      else if (item.resourceFieldRef) {
        const container = pod.spec.containers.find((c) => c.name === item.resourceFieldRef!.containerName) ?? pod.spec.containers[0];
        value = resourceFieldValue(pod, container, item.resourceFieldRef);
      } else throw new Error(`item ${item.path} names neither fieldRef nor resourceFieldRef`);
    } catch (error) {
      throw new VolumeError(`volume "${volume}": ${(error as Error).message}`);
    }
    return {path: checkPath(volume, item.path), content: Buffer.from(value), mode: item.mode ?? mode};
  });
}

/** The files of one volume; emptyDir has none (an empty directory). */
export async function volumeFiles(pod: Pod, volume: Volume, sources: VolumeSources): Promise<VolumeFile[]> {
  const namespace = pod.metadata.namespace ?? 'default';
  const name = volume.name;
  if (volume.emptyDir) return [];
  if (volume.configMap) {
    const ref = volume.configMap;
    return keyFiles(name, 'configmap', await sources.configMap(namespace, ref.name ?? ''), ref.name ?? '', ref.items, ref.optional, ref.defaultMode ?? DEFAULT_MODE);
  }
  if (volume.secret) {
    const ref = volume.secret;
    return keyFiles(name, 'secret', await sources.secret(namespace, ref.secretName ?? ''), ref.secretName ?? '', ref.items, ref.optional, ref.defaultMode ?? DEFAULT_MODE);
  }
  if (volume.downwardAPI) return downwardFiles(name, pod, volume.downwardAPI.items, sources.nodeIP, volume.downwardAPI.defaultMode ?? DEFAULT_MODE);
  if (volume.projected) {
    const mode = volume.projected.defaultMode ?? DEFAULT_MODE;
    const files: VolumeFile[] = [];
    for (const source of volume.projected.sources ?? []) {
      if (source.serviceAccountToken) {
        const {audience, expirationSeconds, path} = source.serviceAccountToken;
        const token = await sources.token(pod, audience || undefined, expirationSeconds ?? DEFAULT_TOKEN_SECONDS);
        files.push({path: checkPath(name, path), content: Buffer.from(token), mode});
      } else if (source.configMap) {
        const ref = source.configMap;
        files.push(...(await keyFiles(name, 'configmap', await sources.configMap(namespace, ref.name ?? ''), ref.name ?? '', ref.items, ref.optional, mode)));
      } else if (source.secret) {
        const ref = source.secret;
        files.push(...(await keyFiles(name, 'secret', await sources.secret(namespace, ref.name ?? ''), ref.name ?? '', ref.items, ref.optional, mode)));
      } else if (source.downwardAPI) {
        files.push(...downwardFiles(name, pod, source.downwardAPI.items, sources.nodeIP, mode));
      } else {
        throw new VolumeError(`volume "${name}": projected source ${Object.keys(source).join(', ')} is not supported by the process runtime`);
      }
    }
    return files;
  }
  const kind = Object.keys(volume).filter((k) => k !== 'name').join(', ') || 'none';
  throw new VolumeError(`volume "${name}": volume type ${kind} is not supported by the process runtime (configMap, secret, downwardAPI, projected and emptyDir are)`);
}

/** Whether a volume holds a service account token (and so must be rewritten before the token expires). */
export function hasToken(volume: Volume): boolean {
  return Boolean(volume.projected?.sources?.some((s) => s.serviceAccountToken));
}
