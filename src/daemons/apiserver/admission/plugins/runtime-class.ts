/**
 * RuntimeClass: a pod naming a RuntimeClass gets its overhead (spec.overhead) and its scheduling
 * (node selector merged, a conflicting key refused; tolerations merged), and a pod whose overhead
 * does not match its class's is refused, as upstream's runtimeclass plugin (CREATE only).
 */
import {names} from '../../../../api/names.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import {parseQuantity} from '../../../../options/quantity.js';
import {stringAt, valueAt} from '../../rest/objects.js';
import {admissionForbidden} from '../errors.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin} from '../interfaces.js';
import {isResource, operations} from '../matching.js';
import {mergeTolerations} from '../tolerations.js';

const objectAt = (o: JsonObject, ...path: string[]): JsonObject | undefined => {
  const v = valueAt(o, ...path);
  return isJsonObject(v) ? v : undefined;
};

/** Semantic equality of two resource lists (1000m equals 1), as apiequality.Semantic does for quantities. */
export function sameResources(a: JsonObject | undefined, b: JsonObject | undefined): boolean {
  if (!a || !b) return a === b;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const [x, y] = [a[key], b[key]];
    if (typeof x !== 'string' || typeof y !== 'string') return false;
    try {
      if (parseQuantity(x).value !== parseQuantity(y).value) return false;
    } catch {
      if (x !== y) return false;
    }
  }
  return true;
}

/** The mutating part: the pod with its class's overhead and scheduling; throws the refusal's reason. */
export function applyRuntimeClass(pod: JsonObject, runtimeClass: JsonObject): void {
  const spec = (isJsonObject(pod.spec) ? pod.spec : (pod.spec = {})) as JsonObject;
  const podFixed = objectAt(runtimeClass, 'overhead', 'podFixed');
  if (podFixed) {
    if (isJsonObject(spec.overhead) && !sameResources(podFixed, spec.overhead)) {
      throw new Error("pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead");
    }
    spec.overhead = {...podFixed};
  }
  const scheduling = objectAt(runtimeClass, 'scheduling');
  if (!scheduling) return;
  const runtimeSelector = objectAt(scheduling, 'nodeSelector') ?? {};
  if (!isJsonObject(spec.nodeSelector)) spec.nodeSelector = {...runtimeSelector};
  else {
    const selector = spec.nodeSelector;
    for (const [key, value] of Object.entries(runtimeSelector)) {
      if (key in selector && selector[key] !== value) {
        throw new Error(`conflict: runtimeClass.scheduling.nodeSelector[${key}] = ${String(value)}; pod.spec.nodeSelector[${key}] = ${String(selector[key])}`);
      }
      selector[key] = value;
    }
  }
  if (Object.keys(spec.nodeSelector as JsonObject).length === 0) delete spec.nodeSelector;
  const merged = mergeTolerations(Array.isArray(spec.tolerations) ? spec.tolerations : [], Array.isArray(scheduling.tolerations) ? scheduling.tolerations : []);
  if (merged.length) spec.tolerations = merged;
}

/** The validating part: the refusal's reason, or undefined. */
export function overheadRefusal(pod: JsonObject, runtimeClass: JsonObject | undefined): string | undefined {
  const podFixed = runtimeClass && objectAt(runtimeClass, 'overhead', 'podFixed');
  const overhead = objectAt(pod, 'spec', 'overhead');
  if (podFixed) return sameResources(podFixed, overhead) ? undefined : "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";
  return overhead ? 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead' : undefined;
}

export class RuntimeClass implements AdmissionPlugin {
  readonly name = 'RuntimeClass';

  constructor(private readonly objects: AdmissionObjects) {}

  readonly handles = operations('CREATE');

  private async runtimeClassOf(attributes: AdmissionAttributes): Promise<JsonObject | undefined> {
    const name = stringAt(attributes.object!, 'spec', 'runtimeClassName');
    if (name === undefined) return undefined;
    const found = await this.objects.get(names().groups.node, 'runtimeclasses', '', name);
    if (!found) throw admissionForbidden(attributes, `pod rejected: RuntimeClass ${JSON.stringify(name)} not found`);
    return found;
  }

  private ignores(attributes: AdmissionAttributes): boolean {
    return !isResource(attributes, '', 'pods') || !attributes.object;
  }

  async admit(attributes: AdmissionAttributes): Promise<void> {
    if (this.ignores(attributes)) return;
    const runtimeClass = await this.runtimeClassOf(attributes);
    if (!runtimeClass) return;
    try {
      applyRuntimeClass(attributes.object!, runtimeClass);
    } catch (error) {
      throw admissionForbidden(attributes, (error as Error).message);
    }
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    if (this.ignores(attributes)) return;
    const refusal = overheadRefusal(attributes.object!, await this.runtimeClassOf(attributes));
    if (refusal) throw admissionForbidden(attributes, refusal);
  }
}
