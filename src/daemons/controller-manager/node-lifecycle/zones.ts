/**
 * Zones and their disruption states: upstream's GetZoneKey, ComputeZoneState, setLimiterInZone
 * (with ReducedQPSFunc / HealthyQPSFunc) and handleDisruption, as pure functions.
 */
import {
  labelExcludeDisruption,
  labelFailureDomainBetaRegion,
  labelFailureDomainBetaZone,
  labelTopologyRegion,
  labelTopologyZone,
  type Node,
} from './types.js';

export type ZoneState = 'Initial' | 'Normal' | 'PartialDisruption' | 'FullDisruption';

/**
 * `<region>:\x00:<zone>` from the node's labels (beta labels preferred), or "" when it has neither:
 * without zone labels the whole cluster is one zone. The NUL keeps "a:b"+"c" apart from "a"+"b:c".
 */
export function zoneKey(node: Node): string {
  const labels = node.metadata.labels;
  if (!labels) return '';
  const zone = labels[labelFailureDomainBetaZone()] ?? labels[labelTopologyZone()] ?? '';
  const region = labels[labelFailureDomainBetaRegion()] ?? labels[labelTopologyRegion()] ?? '';
  if (region === '' && zone === '') return '';
  return `${region}:\x00:${zone}`;
}

/** A zone key for people: `region/zone`, or `(cluster)` for the single unlabelled zone. */
export function zoneDisplayName(key: string): string {
  if (key === '') return '(cluster)';
  const [region, zone] = key.split(':\x00:');
  return [region, zone].filter((part) => part !== '').join('/');
}

export function excludedFromDisruption(node: Node): boolean {
  return node.metadata.labels?.[labelExcludeDisruption()] !== undefined;
}

export interface ZoneCounts {
  /** Nodes whose Ready condition is True. */
  ready: number;
  /** Every other node counted in the zone (False, Unknown, or no Ready condition). */
  notReady: number;
}

/**
 * Upstream's ComputeZoneState: FullDisruption when no node is ready (and some exist);
 * PartialDisruption when more than 2 are not ready and their share reaches the threshold;
 * Normal otherwise. The share is compared in float32, as upstream does.
 */
export function computeZoneState(counts: ZoneCounts, unhealthyZoneThreshold: number): ZoneState {
  const {ready, notReady} = counts;
  if (ready === 0 && notReady > 0) return 'FullDisruption';
  if (notReady > 2 && Math.fround(Math.fround(notReady) / Math.fround(notReady + ready)) >= Math.fround(unhealthyZoneThreshold)) {
    return 'PartialDisruption';
  }
  return 'Normal';
}

export interface EvictionRates {
  nodeEvictionRate: number;
  secondaryNodeEvictionRate: number;
  largeClusterSizeThreshold: number;
}

/**
 * The tainting rate (nodes/s) a zone gets when it enters `state` (upstream setLimiterInZone):
 * Normal and FullDisruption use the primary rate; PartialDisruption the secondary rate, but only in
 * a zone of more than --large-cluster-size-threshold nodes, and 0 (evictions stop) in a smaller one.
 * Initial leaves the limiter as created (primary rate).
 */
export function zoneEvictionRate(state: ZoneState, zoneSize: number, rates: EvictionRates): number {
  switch (state) {
    case 'PartialDisruption':
      return zoneSize > rates.largeClusterSizeThreshold ? rates.secondaryNodeEvictionRate : 0;
    case 'Normal':
    case 'FullDisruption':
    case 'Initial':
      return rates.nodeEvictionRate;
  }
}

export interface DisruptionDecision {
  /** Zone states to keep after this pass (zones without nodes are dropped). */
  zoneStates: Map<string, ZoneState>;
  /** Zones whose limiter must be swapped, with the new rate in nodes/s (0: never accept). */
  limiterRates: Map<string, number>;
  /** Every zone just became fully disrupted: remove the NoExecute taints from all nodes. */
  enterMasterDisruption: boolean;
  /** Leaving that mode: give every node a fresh grace period. */
  exitMasterDisruption: boolean;
}

/**
 * Upstream's handleDisruption. `previous` holds the zone states before this pass, including
 * zones first seen in this pass as `Initial`; `counts` the nodes counted per zone in this pass.
 *
 * When every zone is fully disrupted the problem is more likely the control plane's own network
 * than the nodes, so evictions stop everywhere ("master disruption mode"); otherwise each zone's
 * limiter follows its own state.
 */
export function handleDisruption(
  previous: ReadonlyMap<string, ZoneState>,
  counts: ReadonlyMap<string, ZoneCounts>,
  options: EvictionRates & {unhealthyZoneThreshold: number},
): DisruptionDecision {
  const newStates = new Map<string, ZoneState>();
  for (const [zone, zoneCounts] of counts) newStates.set(zone, computeZoneState(zoneCounts, options.unhealthyZoneThreshold));
  const allAreFullyDisrupted = [...newStates.values()].every((s) => s === 'FullDisruption');

  // Zones without counted nodes are forgotten. (Upstream stops its scan at the first zone not
  // fully disrupted, leaving some empty zones for a later pass; the outcome is the same.)
  const zoneStates = new Map([...previous].filter(([zone]) => counts.has(zone)));
  for (const zone of counts.keys()) if (!zoneStates.has(zone)) zoneStates.set(zone, 'Initial');
  const allWereFullyDisrupted = [...zoneStates.values()].every((s) => s === 'FullDisruption');

  const decision: DisruptionDecision = {zoneStates, limiterRates: new Map(), enterMasterDisruption: false, exitMasterDisruption: false};
  if (allAreFullyDisrupted && allWereFullyDisrupted) return decision;

  const size = (zone: string) => (counts.get(zone)?.ready ?? 0) + (counts.get(zone)?.notReady ?? 0);
  if (allAreFullyDisrupted) {
    decision.enterMasterDisruption = true;
    for (const zone of zoneStates.keys()) {
      decision.limiterRates.set(zone, 0);
      zoneStates.set(zone, 'FullDisruption');
    }
    return decision;
  }
  if (allWereFullyDisrupted) {
    decision.exitMasterDisruption = true;
    for (const zone of zoneStates.keys()) {
      const state = newStates.get(zone)!;
      decision.limiterRates.set(zone, zoneEvictionRate(state, size(zone), options));
      zoneStates.set(zone, state);
    }
    return decision;
  }
  for (const [zone, old] of zoneStates) {
    const state = newStates.get(zone)!;
    if (state === old) continue;
    decision.limiterRates.set(zone, zoneEvictionRate(state, size(zone), options));
    zoneStates.set(zone, state);
  }
  return decision;
}
