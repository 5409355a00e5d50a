/**
 * Coordinated leader election, the decisions only (upstream pkg/controlplane/controller/leaderelection:
 * election.go and leaderelection_controller.go's reconcileElectionStep). Pure: given the Lease, the
 * LeaseCandidates naming it and the time, it says what to write; the controller (controller.ts) reads
 * and writes the store.
 *
 * An election pings every candidate that has not renewed in the last electionDuration (sets
 * `spec.pingTime`), waits for them to ack (renew) or for the ping to age past electionDuration, then
 * picks among the candidates that renewed within electionDuration: the strategy of the highest binary
 * version, and for OldestEmulationVersion the oldest emulation version, then the oldest binary
 * version, then the oldest candidate. A free or expired lease goes to the electee at once; a lease
 * held by someone else gets `preferredHolder`, and the holder (client-go, coordinated) stops renewing.
 */

/** Upstream's constants (leaderelection_controller.go). */
export const ELECTION_DURATION_MS = 5_000;
export const DEFAULT_REQUEUE_MS = 5_000;
export const ELECTED_LEASE_DURATION_SECONDS = 5;
export const LEASE_CANDIDATE_VALID_DURATION_MS = 30 * 60_000;
export const OLDEST_EMULATION_VERSION = 'OldestEmulationVersion';

export interface CandidateView {
  name: string;
  creationTimestamp?: string;
  spec: {
    leaseName: string;
    binaryVersion?: string;
    emulationVersion?: string;
    strategy?: string;
    pingTime?: string;
    renewTime?: string;
  };
}

export interface LeaseSpecView {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number | null;
  renewTime?: string | null;
  acquireTime?: string | null;
  strategy?: string | null;
  preferredHolder?: string | null;
  [key: string]: unknown;
}

/** What one step decides; the controller writes it. */
export interface ElectionStep {
  /** Candidates to ping (their pingTime set to now). */
  ping: string[];
  /** The lease to create (none existed) or the spec fields to set on the existing one. */
  create?: LeaseSpecView;
  update?: LeaseSpecView;
  /** Look again after this long; 0: only on the next event. */
  requeueMs: number;
  /** Why nothing was written, for the log. */
  error?: string;
}

const time = (text: string | null | undefined): number | undefined => {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
};

/** semver.ParseTolerant's reading: an optional `v`, missing minor and patch read as 0; undefined if not a version. */
export function parseVersion(text: string | undefined): [number, number, number] | undefined {
  const m = /^v?(\d+)(?:\.(\d+))?(?:\.(\d+))?(?:[-+].*)?$/.exec((text ?? '').trim());
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2] ?? 0), Number(m[3] ?? 0)];
}

function compareVersions(a: [number, number, number], b: [number, number, number]): number {
  for (let i = 0; i < 3; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

const orZero = (text: string | undefined): [number, number, number] => parseVersion(text) ?? [0, 0, 0];

/** Upstream compare: -1 when lhs is the better leader, 1 when rhs is. */
export function compareCandidates(lhs: CandidateView, rhs: CandidateView): number {
  let result = compareVersions(orZero(lhs.spec.emulationVersion), orZero(rhs.spec.emulationVersion));
  if (result === 0) result = compareVersions(orZero(lhs.spec.binaryVersion), orZero(rhs.spec.binaryVersion));
  if (result === 0) return (time(lhs.creationTimestamp) ?? 0) > (time(rhs.creationTimestamp) ?? 0) ? 1 : -1;
  return result;
}

/** pickBestLeaderOldestEmulationVersion: candidates whose versions do not parse cannot lead. */
export function pickOldestEmulationVersion(candidates: CandidateView[]): CandidateView | undefined {
  let electee: CandidateView | undefined;
  for (const c of candidates) {
    if (!parseVersion(c.spec.emulationVersion) || !parseVersion(c.spec.binaryVersion)) continue;
    if (!electee || compareCandidates(electee, c) > 0) electee = c;
  }
  return electee;
}

/** pickBestStrategy: the strategy of the highest binary version; two at that version that differ is an error. */
export function pickBestStrategy(candidates: CandidateView[]): { strategy: string } | { error: string } {
  if (candidates.length === 0) return {error: 'no candidates'};
  let [best] = candidates;
  for (const c of candidates.slice(1)) {
    const result = compareVersions(orZero(best.spec.binaryVersion), orZero(c.spec.binaryVersion));
    if (result < 0) best = c;
    else if (result === 0 && (c.spec.strategy ?? '') !== (best.spec.strategy ?? '')) {
      return {error: `candidates "${best.name}", "${c.name}" at same binary version but received differing strategies ${best.spec.strategy ?? ''}, ${c.spec.strategy ?? ''}`};
    }
  }
  return {strategy: best.spec.strategy ?? ''};
}

export function isLeaseExpired(spec: LeaseSpecView | undefined, now: number): boolean {
  const renew = time(spec?.renewTime);
  const duration = spec?.leaseDurationSeconds;
  return renew === undefined || duration == null || renew + duration * 1000 < now;
}

export function isCandidateExpired(candidate: CandidateView, now: number): boolean {
  const renew = time(candidate.spec.renewTime);
  return renew === undefined || renew + LEASE_CANDIDATE_VALID_DURATION_MS < now;
}

/** The unexpired candidates for the lease (listAdmissableCandidates). */
export function admissibleCandidates(all: CandidateView[], leaseName: string, now: number): CandidateView[] {
  return all.filter((c) => c.spec.leaseName === leaseName && !isCandidateExpired(c, now));
}

/** electionNeeded: no lease, a free or expired one, a candidate due its refresh, or a better electee than the holder. */
export function electionNeeded(lease: LeaseSpecView | undefined | 'missing', candidates: CandidateView[], now: number): { needed: boolean; error?: string } {
  if (lease === 'missing' || lease === undefined) return {needed: true};
  if (isLeaseExpired(lease, now) || !lease.holderIdentity) return {needed: true};
  // Every 15 minutes an election refreshes all candidates (they are collected after 30).
  for (const c of candidates) {
    const renew = time(c.spec.renewTime);
    if (renew !== undefined && renew + LEASE_CANDIDATE_VALID_DURATION_MS / 2 < now) return {needed: true};
  }
  const strategy = pickBestStrategy(candidates);
  if ('error' in strategy) return {needed: false, error: strategy.error};
  if (strategy.strategy !== OLDEST_EMULATION_VERSION) return {needed: false};
  const electee = pickOldestEmulationVersion(candidates);
  if (!electee || electee.name === lease.holderIdentity) return {needed: false};
  return {needed: true};
}

/**
 * One step of an election for a lease (reconcileElectionStep). `lease` is the current spec, or
 * 'missing'; `candidates` the admissible ones; `nowText` the MicroTime of `now` for what it writes.
 */
export function electionStep(lease: LeaseSpecView | 'missing', candidates: CandidateView[], now: number, nowText: string): ElectionStep {
  if (candidates.length === 0) return {ping: [], requeueMs: 0};
  const need = electionNeeded(lease, candidates, now);
  if (!need.needed) return {ping: [], requeueMs: DEFAULT_REQUEUE_MS, error: need.error};

  // Ping whoever has not renewed lately, and wait while pings are unanswered.
  const ping: string[] = [];
  let canVoteYet = true;
  for (const c of candidates) {
    const pingTime = time(c.spec.pingTime);
    const renewTime = time(c.spec.renewTime);
    if (pingTime !== undefined && pingTime + ELECTION_DURATION_MS > now && renewTime !== undefined && renewTime < pingTime) {
      canVoteYet = false;
      continue;
    }
    if (renewTime !== undefined && renewTime + ELECTION_DURATION_MS > now) continue;
    if (pingTime === undefined || (pingTime + ELECTION_DURATION_MS < now && renewTime !== undefined && pingTime < renewTime)) {
      ping.push(c.name);
      canVoteYet = false;
    }
  }
  if (!canVoteYet) return {ping, requeueMs: DEFAULT_REQUEUE_MS};
  for (const c of candidates) {
    const pingTime = time(c.spec.pingTime);
    const renewTime = time(c.spec.renewTime);
    if (pingTime === undefined) continue;
    if (renewTime !== undefined && pingTime < renewTime) continue;
    if (pingTime + ELECTION_DURATION_MS > now) return {ping: [], requeueMs: 0};
  }

  const acked = candidates.filter((c) => (time(c.spec.renewTime) ?? -Infinity) + ELECTION_DURATION_MS > now);
  if (acked.length === 0) return {ping: [], requeueMs: 0, error: 'no available candidates'};
  const picked = pickBestStrategy(acked);
  if ('error' in picked) return {ping: [], requeueMs: 0, error: picked.error};
  const {strategy} = picked;
  let holder: string | undefined;
  if (strategy === OLDEST_EMULATION_VERSION) {
    holder = pickOldestEmulationVersion(acked)?.name;
    if (!holder) return {ping: [], requeueMs: 0, error: 'should not happen, could not find suitable electee'};
  }
  if (lease === 'missing') {
    return {
      ping: [],
      requeueMs: DEFAULT_REQUEUE_MS,
      create: {strategy, leaseDurationSeconds: ELECTED_LEASE_DURATION_SECONDS, renewTime: nowText, ...(holder !== undefined ? {holderIdentity: holder} : {})},
    };
  }

  const next: LeaseSpecView = {...lease};
  if (lease.strategy !== strategy) next.strategy = strategy;
  const noHolder = !lease.holderIdentity;
  const expiredAndNewHolder = isLeaseExpired(lease, now) && holder !== undefined && lease.holderIdentity !== holder;
  if (holder !== undefined && (noHolder || expiredAndNewHolder)) {
    delete next.preferredHolder;
    next.holderIdentity = holder;
    next.renewTime = nowText;
    next.leaseDurationSeconds = ELECTED_LEASE_DURATION_SECONDS;
    delete next.acquireTime;
  } else if (holder !== undefined && holder !== lease.holderIdentity) {
    next.preferredHolder = holder;
  }
  const changed = JSON.stringify(next) !== JSON.stringify(lease);
  return {ping: [], requeueMs: DEFAULT_REQUEUE_MS, ...(changed ? {update: next} : {})};
}
