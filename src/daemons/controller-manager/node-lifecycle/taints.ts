/**
 * Which taints the controller wants on a node, from its conditions (upstream
 * `doNoScheduleTaintingPass`, the NoExecute templates, taintutils' add/remove).
 *
 * Two families, both keyed by `key` + `effect` as upstream's MatchTaint:
 * - NoSchedule taints mirror the current conditions at once, and only controller-owned keys are
 *   ever added or removed;
 * - NoExecute `not-ready` / `unreachable` mirror Ready=False / Ready=Unknown, are mutually
 *   exclusive, and are added through the per-zone rate-limited queue (see the controller).
 */
import {perNameSet} from '../../../api/names.js';
import {
  taintDiskPressure,
  taintMemoryPressure,
  taintNetworkUnavailable,
  taintNotReady,
  taintPidPressure,
  taintUnreachable,
  taintUnschedulable,
  formatTime,
  type Node,
  type Taint,
} from './types.js';

export const notReadyNoExecute = (): Readonly<Taint> => ({key: taintNotReady(), effect: 'NoExecute'});
export const unreachableNoExecute = (): Readonly<Taint> => ({key: taintUnreachable(), effect: 'NoExecute'});

/** Condition type -> status -> NoSchedule taint key (upstream nodeConditionToTaintKeyStatusMap), in the active names. */
const conditionTaints = perNameSet((): ReadonlyMap<string, ReadonlyMap<string, string>> => new Map([
  ['Ready', new Map([['False', taintNotReady()], ['Unknown', taintUnreachable()]])],
  ['MemoryPressure', new Map([['True', taintMemoryPressure()]])],
  ['DiskPressure', new Map([['True', taintDiskPressure()]])],
  ['PIDPressure', new Map([['True', taintPidPressure()]])],
  ['NetworkUnavailable', new Map([['True', taintNetworkUnavailable()]])],
]));

/** NoSchedule keys the controller owns; any other NoSchedule taint is left alone. */
const ownedNoScheduleKeys = perNameSet((): ReadonlySet<string> => new Set([
  ...[...conditionTaints().values()].flatMap((byStatus) => [...byStatus.values()]),
  taintUnschedulable(),
]));

export function matchTaint(a: Taint, b: Taint): boolean {
  return a.key === b.key && a.effect === b.effect;
}

export function taintExists(taints: readonly Taint[] | null | undefined, template: Taint): boolean {
  return (taints ?? []).some((t) => matchTaint(t, template));
}

/** The controller-owned NoSchedule taints the node's conditions and spec call for (values empty). */
export function desiredNoScheduleTaints(node: Node): Taint[] {
  const taints: Taint[] = [];
  for (const condition of node.status?.conditions ?? []) {
    const key = conditionTaints().get(condition.type)?.get(condition.status);
    if (key) taints.push({key, effect: 'NoSchedule'});
  }
  if (node.spec?.unschedulable) taints.push({key: taintUnschedulable(), effect: 'NoSchedule'});
  return taints;
}

export interface TaintChange {
  add: Taint[];
  remove: Taint[];
}

/** What to add and remove so the owned NoSchedule taints match the conditions (upstream TaintSetDiff). */
export function noScheduleTaintChange(node: Node): TaintChange {
  const desired = desiredNoScheduleTaints(node);
  const present = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' && ownedNoScheduleKeys().has(t.key));
  return {
    add: desired.filter((d) => !present.some((p) => matchTaint(p, d))),
    remove: present.filter((p) => !desired.some((d) => matchTaint(p, d))),
  };
}

/**
 * The NoExecute taint a node should carry for a Ready status: unreachable for Unknown (also a
 * missing condition), not-ready for False, none for True. The other one is its opposite.
 */
export function noExecuteTaintFor(readyStatus: string | undefined): {taint?: Taint; opposite?: Taint} {
  if (readyStatus === 'True') return {};
  if (readyStatus === 'False') return {taint: {...notReadyNoExecute()}, opposite: {...unreachableNoExecute()}};
  return {taint: {...unreachableNoExecute()}, opposite: {...notReadyNoExecute()}};
}

/**
 * The taint list after adding `add` (stamped with timeAdded = now, replacing a taint with the same
 * key and effect) and removing `remove`, as upstream's SwapNodeControllerTaint writes it.
 */
export function swapTaints(current: readonly Taint[] | null | undefined, add: readonly Taint[], remove: readonly Taint[], now: number): Taint[] {
  let taints = [...(current ?? [])];
  for (const taint of add) {
    const stamped: Taint = {...taint, timeAdded: formatTime(now)};
    const index = taints.findIndex((t) => matchTaint(t, taint));
    if (index >= 0) taints[index] = stamped;
    else taints.push(stamped);
  }
  taints = taints.filter((t) => !remove.some((r) => matchTaint(t, r)));
  return taints;
}
