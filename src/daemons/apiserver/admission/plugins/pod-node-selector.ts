/**
 * PodNodeSelector: a namespace's node selector (its `scheduler.alpha.<labelDomain>/node-selector`
 * annotation, else the configuration's `clusterDefaultNodeSelector`) is merged into the node
 * selector of its new pods, a pod whose selector contradicts it is refused, and a namespace listed
 * in the configuration only admits pods whose selector stays within that whitelist (upstream's
 * podnodeselector).
 *
 * Configuration (AdmissionConfiguration's PodNodeSelector entry):
 *   podNodeSelectorPluginConfig:
 *     clusterDefaultNodeSelector: env=prod
 *     team-a: env=prod,tier=frontend
 */
import {names} from '../../../../api/names.js';
import {labelKeyProblem, labelValueProblem} from '../../../../api/selectors.js';
import {ApiError, forbidden, notFound, plainServerError} from '../../../../api/status.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import {stringAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin, AdmissionPluginContext} from '../interfaces.js';
import {podProper, specOf} from './pod-helpers.js';

export type LabelSet = Record<string, string>;

/** Upstream's labels.ConvertSelectorToLabelsMap: `k=v,k2=v2` (equality only); throws with upstream's message. */
export function selectorToLabels(selector: string): LabelSet {
  const out: LabelSet = {};
  if (selector === '') return out;
  for (const part of selector.split(',')) {
    const pieces = part.split('=');
    if (pieces.length !== 2) throw new Error(`invalid selector: [${pieces.join(' ')}]`);
    const key = pieces[0]!.trim();
    const value = pieces[1]!.trim();
    const keyProblem = labelKeyProblem(key);
    if (keyProblem) throw new Error(`invalid label key "${key}": ${keyProblem}`);
    const valueProblem = labelValueProblem(value);
    if (valueProblem) throw new Error(`invalid label value: "${value}": at key: "${key}": ${valueProblem}`);
    out[key] = value;
  }
  return out;
}

/** Upstream's labels.Conflicts: a key both sets have with different values. */
export const conflicts = (a: LabelSet, b: LabelSet): boolean => Object.entries(a).some(([k, v]) => k in b && b[k] !== v);

/** Every label of `subset` is in `superset` with the same value; an empty superset allows all. */
export function isSubset(subset: LabelSet, superset: LabelSet): boolean {
  if (Object.keys(superset).length === 0) return true;
  return Object.entries(subset).every(([k, v]) => superset[k] === v);
}

/** The namespace's selector: its annotation, else the cluster default. Throws on a bad selector. */
export function namespaceNodeSelector(namespace: JsonObject, config: Readonly<Record<string, string>>): LabelSet {
  const annotation = stringAt(namespace, 'metadata', 'annotations', names().podAdmission.nodeSelector);
  return selectorToLabels(annotation ?? config.clusterDefaultNodeSelector ?? '');
}

export type NodeSelectorDecision = {allowed: true; nodeSelector: LabelSet} | {allowed: false; reason: string};

/** The pure decision: the pod's merged selector, or why it is refused. */
export function decideNodeSelector(podSelector: LabelSet, fromNamespace: LabelSet, whitelist: LabelSet, merge: boolean): NodeSelectorDecision {
  if (conflicts(fromNamespace, podSelector)) return {allowed: false, reason: 'pod node label selector conflicts with its namespace node label selector'};
  const nodeSelector = merge ? {...fromNamespace, ...podSelector} : podSelector;
  if (!isSubset(nodeSelector, whitelist)) return {allowed: false, reason: 'pod node label selector labels conflict with its namespace whitelist'};
  return {allowed: true, nodeSelector};
}

/** Reads the plugin's configuration; throws naming the plugin and the problem. */
export function parsePodNodeSelectorConfig(configuration: JsonObject | undefined, source = 'configuration'): Record<string, string> {
  if (configuration === undefined) return {};
  const key = Object.keys(configuration).find((k) => k.toLowerCase() === 'podnodeselectorpluginconfig');
  const map = key === undefined ? {} : configuration[key];
  if (!isJsonObject(map)) throw new Error(`PodNodeSelector: ${source}: podNodeSelectorPluginConfig must be a map of namespace names to node selectors`);
  const out: Record<string, string> = {};
  for (const [namespace, selector] of Object.entries(map)) {
    if (typeof selector !== 'string') throw new Error(`PodNodeSelector: ${source}: the node selector of "${namespace}" must be a string, got ${JSON.stringify(selector)}`);
    try {
      selectorToLabels(selector);
    } catch (error) {
      throw new Error(`PodNodeSelector: ${source}: the node selector of "${namespace}": ${(error as Error).message}`);
    }
    out[namespace] = selector;
  }
  return out;
}

export class PodNodeSelector implements AdmissionPlugin {
  readonly name = 'PodNodeSelector';

  constructor(
    private readonly config: Readonly<Record<string, string>>,
    private readonly getNamespace: (name: string) => Promise<JsonObject | undefined>,
  ) {}

  handles(operation: AdmissionOperation): boolean {
    return operation === 'CREATE';
  }

  admit(attributes: AdmissionAttributes): Promise<void> {
    return this.check(attributes, true);
  }

  validate(attributes: AdmissionAttributes): Promise<void> {
    return this.check(attributes, false);
  }

  private async check(attributes: AdmissionAttributes, merge: boolean): Promise<void> {
    const pod = podProper(attributes);
    if (!pod) return;
    const namespace = await this.getNamespace(attributes.namespace);
    if (!namespace) throw notFound({group: '', resource: 'namespaces'}, attributes.namespace);
    let fromNamespace: LabelSet;
    let whitelist: LabelSet;
    try {
      fromNamespace = namespaceNodeSelector(namespace, this.config);
      whitelist = selectorToLabels(this.config[attributes.namespace] ?? '');
    } catch (error) {
      // A bad annotation is the namespace's fault, answered as upstream: the parse error, a 500.
      throw error instanceof ApiError ? error : plainServerError((error as Error).message);
    }
    const spec = specOf(pod);
    const podSelector = isJsonObject(spec.nodeSelector) ? (Object.fromEntries(Object.entries(spec.nodeSelector).map(([k, v]) => [k, String(v)])) as LabelSet) : {};
    const decision = decideNodeSelector(podSelector, fromNamespace, whitelist, merge);
    if (!decision.allowed) throw forbidden({group: '', resource: 'pods'}, stringAt(pod, 'metadata', 'name') ?? '', decision.reason);
    if (merge && Object.keys(decision.nodeSelector).length > 0) spec.nodeSelector = decision.nodeSelector;
  }
}

export const createPodNodeSelector = (context: AdmissionPluginContext): PodNodeSelector =>
  new PodNodeSelector(parsePodNodeSelectorConfig(context.configuration, context.configurationSource), (name) => context.objects.get('', 'namespaces', '', name));
