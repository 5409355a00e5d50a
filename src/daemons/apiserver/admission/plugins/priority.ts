/**
 * Priority: a new pod's priority and preemption policy come from its PriorityClass (the one marked
 * globalDefault when it names none, else priority 0 and PreemptLowerPriority); an unknown class is
 * refused, and so is a priority or policy the pod sets that differs from its class's. Updates keep
 * what creation set. Only one PriorityClass may be the global default (upstream's priority plugin).
 */
import {names} from '../../../../api/names.js';
import {badRequest} from '../../../../api/status.js';
import {isJsonObject, type JsonObject} from '../../../../patch/types.js';
import {stringAt} from '../../rest/objects.js';
import type {AdmissionAttributes, AdmissionOperation, AdmissionPlugin, AdmissionPluginContext} from '../interfaces.js';
import {admissionForbidden} from '../errors.js';
import {isCoreResource, specOf} from './pod-helpers.js';

/** Upstream's DefaultPriorityWhenNoDefaultClassExists. */
export const DEFAULT_PRIORITY = 0;

export interface PriorityClassView {
  name: string;
  value: number;
  globalDefault: boolean;
  preemptionPolicy?: string;
}

export function priorityClassView(o: JsonObject): PriorityClassView {
  const view: PriorityClassView = {name: stringAt(o, 'metadata', 'name') ?? '', value: typeof o.value === 'number' ? o.value : 0, globalDefault: o.globalDefault === true};
  if (typeof o.preemptionPolicy === 'string') view.preemptionPolicy = o.preemptionPolicy;
  return view;
}

/** The global default class: of several, the one of lowest value (upstream). */
export function defaultPriorityClass(classes: readonly PriorityClassView[]): PriorityClassView | undefined {
  let found: PriorityClassView | undefined;
  for (const c of classes) if (c.globalDefault && (!found || found.value > c.value)) found = c;
  return found;
}

export type PodPriorityDecision =
  | {allowed: true; priorityClassName: string; priority: number; preemptionPolicy?: string}
  | {allowed: false; reason: string};

/** The pure decision for a new pod: what to set, or why it is refused. */
export function decidePodPriority(spec: JsonObject, classes: readonly PriorityClassView[]): PodPriorityDecision {
  const requested = typeof spec.priorityClassName === 'string' ? spec.priorityClassName : '';
  let name = requested;
  let priority: number;
  let policy: string | undefined;
  if (requested === '') {
    const fallback = defaultPriorityClass(classes);
    name = fallback?.name ?? '';
    priority = fallback?.value ?? DEFAULT_PRIORITY;
    policy = fallback ? fallback.preemptionPolicy : 'PreemptLowerPriority';
  } else {
    const found = classes.find((c) => c.name === requested);
    if (!found) return {allowed: false, reason: `no PriorityClass with name ${requested} was found`};
    priority = found.value;
    policy = found.preemptionPolicy;
  }
  if (typeof spec.priority === 'number' && spec.priority !== priority) {
    return {allowed: false, reason: `the integer value of priority (${spec.priority}) must not be provided in pod spec; priority admission controller computed ${priority} from the given PriorityClass name`};
  }
  if (policy !== undefined && typeof spec.preemptionPolicy === 'string' && spec.preemptionPolicy !== policy) {
    return {allowed: false, reason: `the string value of PreemptionPolicy (${spec.preemptionPolicy}) must not be provided in pod spec; priority admission controller computed ${policy} from the given PriorityClass name`};
  }
  return policy === undefined ? {allowed: true, priorityClassName: name, priority} : {allowed: true, priorityClassName: name, priority, preemptionPolicy: policy};
}

export class Priority implements AdmissionPlugin {
  readonly name = 'Priority';

  constructor(private readonly listClasses: () => Promise<JsonObject[]>) {}

  handles(operation: AdmissionOperation): boolean {
    return operation !== 'CONNECT';
  }

  async admit(attributes: AdmissionAttributes): Promise<void> {
    if (attributes.subresource !== '' || !isCoreResource(attributes, 'pods')) return;
    if (attributes.operation !== 'CREATE' && attributes.operation !== 'UPDATE') return;
    const pod = attributes.object;
    if (!isJsonObject(pod)) throw badRequest('resource was marked with kind Pod but was unable to be converted');
    const spec = specOf(pod);
    if (attributes.operation === 'UPDATE') {
      // Creation set these; an update that leaves them out keeps them (validation forbids changing them).
      const old = isJsonObject(attributes.oldObject) && isJsonObject(attributes.oldObject.spec) ? attributes.oldObject.spec : {};
      if (spec.priority === undefined && old.priority !== undefined) spec.priority = old.priority;
      if (spec.preemptionPolicy === undefined && old.preemptionPolicy !== undefined) spec.preemptionPolicy = old.preemptionPolicy;
      return;
    }
    const decision = decidePodPriority(spec, (await this.listClasses()).map(priorityClassView));
    if (!decision.allowed) throw admissionForbidden(attributes, decision.reason);
    spec.priorityClassName = decision.priorityClassName;
    if (decision.priorityClassName === '') delete spec.priorityClassName;
    spec.priority = decision.priority;
    if (decision.preemptionPolicy !== undefined) spec.preemptionPolicy = decision.preemptionPolicy;
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {group, plural} = attributes.resource;
    if (attributes.subresource !== '' || group !== names().groups.scheduling || plural !== 'priorityclasses') return;
    if (attributes.operation !== 'CREATE' && attributes.operation !== 'UPDATE') return;
    if (!isJsonObject(attributes.object)) throw badRequest('resource was marked with kind PriorityClass but was unable to be converted');
    const incoming = priorityClassView(attributes.object);
    if (!incoming.globalDefault) return;
    const current = defaultPriorityClass((await this.listClasses()).map(priorityClassView));
    if (current && (attributes.operation === 'CREATE' || current.name !== incoming.name)) {
      throw admissionForbidden(attributes, `PriorityClass ${current.name} is already marked as default. Only one default can exist`);
    }
  }
}

export const createPriority = (context: AdmissionPluginContext): Priority =>
  new Priority(() => context.objects.list(names().groups.scheduling, 'priorityclasses'));
