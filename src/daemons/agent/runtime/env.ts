/**
 * A container's environment, as the kubelet builds it (makeEnvironmentVariables): envFrom sources
 * first, then env entries in order, each value expanded against the variables defined before it.
 * ConfigMaps and Secrets come through an injected resolver (the agent reads them from the API server).
 */
import {parseQuantity} from '../../../options/quantity.js';
import {expand} from './expansion.js';
import type {Container, ObjectFieldSelector, Pod, ResourceFieldSelector} from './types.js';

/** Reads ConfigMap and Secret data; `undefined` when the object does not exist. Secret values are decoded text. */
export interface EnvSourceResolver {
  configMap(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  secret(namespace: string, name: string): Promise<Record<string, string> | undefined>;
}

/** A resolver for standalone mode: no API server, so no ConfigMap or Secret exists. */
export const noEnvSources: EnvSourceResolver = {
  configMap: async () => undefined,
  secret: async () => undefined,
};

export interface EnvContext {
  nodeIP: string;
  resolver: EnvSourceResolver;
  /** Variables every container starts with (PATH, HOSTNAME, HOME), before the spec's own. */
  base: Record<string, string>;
  /** Node allocatable, the fallback of resourceFieldRef limits when a container sets none. */
  nodeAllocatable?: Record<string, string>;
}

/** Thrown for a spec that cannot be turned into an environment; the reason is CreateContainerConfigError. */
export class EnvConfigError extends Error {}

const LABEL_OR_ANNOTATION = /^metadata\.(labels|annotations)\['(.*)'\]$/;

/** The value of a downward-API fieldRef (upstream podFieldSelectorRuntimeValue). */
export function fieldRefValue(pod: Pod, selector: ObjectFieldSelector, nodeIP: string): string {
  const path = selector.fieldPath;
  const subscript = LABEL_OR_ANNOTATION.exec(path);
  if (subscript) {
    const map = subscript[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations;
    return map?.[subscript[2]] ?? '';
  }
  switch (path) {
    case 'metadata.name': return pod.metadata.name ?? '';
    case 'metadata.namespace': return pod.metadata.namespace ?? 'default';
    case 'metadata.uid': return pod.metadata.uid ?? '';
    case 'spec.nodeName': return pod.spec.nodeName ?? '';
    case 'spec.serviceAccountName': return pod.spec.serviceAccountName ?? '';
    // Pods of the process runtime share the host's network: the pod IP is the node IP.
    case 'status.hostIP': case 'status.hostIPs': case 'status.podIP': case 'status.podIPs': return nodeIP;
    case 'metadata.labels': case 'metadata.annotations': {
      const map = (path === 'metadata.labels' ? pod.metadata.labels : pod.metadata.annotations) ?? {};
      return Object.keys(map).sort().map((k) => `${k}=${JSON.stringify(map[k])}`).join('\n');
    }
    default:
      throw new EnvConfigError(`unsupported fieldPath: ${path}`);
  }
}

/** The value of a resourceFieldRef, rounded up in units of the divisor as upstream does. */
export function resourceFieldValue(pod: Pod, container: Container, selector: ResourceFieldSelector, nodeAllocatable: Record<string, string> = {}): string {
  const target = selector.containerName ? pod.spec.containers.find((c) => c.name === selector.containerName) : container;
  if (!target) throw new EnvConfigError(`container "${selector.containerName}" not found for resourceFieldRef`);
  const [kind, resource] = selector.resource.split('.', 2) as ['limits' | 'requests', string];
  if ((kind !== 'limits' && kind !== 'requests') || !resource) throw new EnvConfigError(`unsupported resource: ${selector.resource}`);
  const text = target.resources?.[kind]?.[resource] ?? (kind === 'limits' ? nodeAllocatable[resource] : undefined) ?? '0';
  const divisor = parseQuantity(selector.divisor ?? '1').value || 1;
  return String(Math.ceil(parseQuantity(text).value / divisor));
}

async function keyRefValue(
  kind: 'ConfigMap' | 'Secret', namespace: string, ref: {name?: string; key: string; optional?: boolean}, ctx: EnvContext,
): Promise<string | undefined> {
  const name = ref.name ?? '';
  const data = kind === 'ConfigMap' ? await ctx.resolver.configMap(namespace, name) : await ctx.resolver.secret(namespace, name);
  if (!data) {
    if (ref.optional) return undefined;
    throw new EnvConfigError(`${kind === 'ConfigMap' ? 'configmap' : 'secret'} "${name}" not found`);
  }
  if (!(ref.key in data)) {
    if (ref.optional) return undefined;
    throw new EnvConfigError(`couldn't find key ${ref.key} in ${kind} ${namespace}/${name}`);
  }
  return data[ref.key];
}

const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** The full environment of `container` in `pod`. Throws EnvConfigError for a missing ConfigMap, Secret or key. */
export async function buildEnvironment(pod: Pod, container: Container, ctx: EnvContext): Promise<Record<string, string>> {
  const namespace = pod.metadata.namespace ?? 'default';
  const env: Record<string, string> = {...ctx.base};
  for (const source of container.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    if (!ref) continue;
    const kind = source.configMapRef ? 'ConfigMap' : 'Secret';
    const name = ref.name ?? '';
    const data = kind === 'ConfigMap' ? await ctx.resolver.configMap(namespace, name) : await ctx.resolver.secret(namespace, name);
    if (!data) {
      if (ref.optional) continue;
      throw new EnvConfigError(`${kind === 'ConfigMap' ? 'configmap' : 'secret'} "${name}" not found`);
    }
    for (const [key, value] of Object.entries(data)) {
      const varName = (source.prefix ?? '') + key;
      // Upstream skips keys that are not valid variable names (and reports an event).
      if (ENV_NAME.test(varName)) env[varName] = value;
    }
  }
  const defined = (name: string): string | undefined => (Object.hasOwn(env, name) ? env[name] : undefined);
  for (const entry of container.env ?? []) {
    const from = entry.valueFrom;
    let value: string | undefined;
    if (!from) value = expand(entry.value ?? '', defined);
    else if (from.fieldRef) value = fieldRefValue(pod, from.fieldRef, ctx.nodeIP);
    else if (from.resourceFieldRef) value = resourceFieldValue(pod, container, from.resourceFieldRef, ctx.nodeAllocatable);
    else if (from.configMapKeyRef) value = await keyRefValue('ConfigMap', namespace, from.configMapKeyRef, ctx);
    else if (from.secretKeyRef) value = await keyRefValue('Secret', namespace, from.secretKeyRef, ctx);
    if (value !== undefined) env[entry.name] = value;
  }
  return env;
}

/** command + args with $(VAR) references expanded against the container's environment. */
export function expandCommand(container: Container, env: Record<string, string>): string[] {
  const lookup = (name: string): string | undefined => (Object.hasOwn(env, name) ? env[name] : undefined);
  return [...(container.command ?? []), ...(container.args ?? [])].map((part) => expand(part, lookup));
}
