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
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
  formatTime,
  type Node,
  type Taint,
} from './types.js';

export const NOT_READY_NO_EXECUTE: Readonly<Taint> = {key: TAINT_NOT_READY, effect: 'NoExecute'};
export const UNREACHABLE_NO_EXECUTE: Readonly<Taint> = {key: TAINT_UNREACHABLE, effect: 'NoExecute'};

/** Condition type -> status -> NoSchedule taint key (upstream nodeConditionToTaintKeyStatusMap). */
const CONDITION_TAINTS: ReadonlyMap<string, ReadonlyMap<string, string>> = new Map([
  ['Ready', new Map([['False', TAINT_NOT_READY], ['Unknown', TAINT_UNREACHABLE]])],
  ['MemoryPressure', new Map([['True', TAINT_MEMORY_PRESSURE]])],
  ['DiskPressure', new Map([['True', TAINT_DISK_PRESSURE]])],
  ['PIDPressure', new Map([['True', TAINT_PID_PRESSURE]])],
  ['NetworkUnavailable', new Map([['True', TAINT_NETWORK_UNAVAILABLE]])],
]);

/** NoSchedule keys the controller owns; any other NoSchedule taint is left alone. */
const OWNED_NO_SCHEDULE_KEYS: ReadonlySet<string> = new Set([
  ...[...CONDITION_TAINTS.values()].flatMap((byStatus) => [...byStatus.values()]),
  TAINT_UNSCHEDULABLE,
]);

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
    const key = CONDITION_TAINTS.get(condition.type)?.get(condition.status);
    if (key) taints.push({key, effect: 'NoSchedule'});
  }
  if (node.spec?.unschedulable) taints.push({key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule'});
  return taints;
}

export interface TaintChange {
  add: Taint[];
  remove: Taint[];
}

/** What to add and remove so the owned NoSchedule taints match the conditions (upstream TaintSetDiff). */
export function noScheduleTaintChange(node: Node): TaintChange {
  const desired = desiredNoScheduleTaints(node);
  const present = (node.spec?.taints ?? []).filter((t) => t.effect === 'NoSchedule' && OWNED_NO_SCHEDULE_KEYS.has(t.key));
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
  if (readyStatus === 'False') return {taint: {...NOT_READY_NO_EXECUTE}, opposite: {...UNREACHABLE_NO_EXECUTE}};
  return {taint: {...UNREACHABLE_NO_EXECUTE}, opposite: {...NOT_READY_NO_EXECUTE}};
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
