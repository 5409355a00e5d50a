/**
 * The coordinated leader election's decisions (upstream election.go / reconcileElectionStep): who is
 * picked, when candidates are pinged, when the vote waits, and what is written to the Lease.
 */
import {describe, expect, it} from '@jest/globals';
import {
  DEFAULT_REQUEUE_MS, ELECTION_DURATION_MS, LEASE_CANDIDATE_VALID_DURATION_MS,
  admissibleCandidates, compareCandidates, electionStep, pickBestStrategy, pickOldestEmulationVersion, type CandidateView,
} from '../../src/daemons/apiserver/coordinated/election.js';
import {DEFAULT_COORDINATED_TIMINGS, coordinatedElectionProblem} from '../../src/daemons/apiserver/coordinated/index.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const at = (ms: number) => new Date(T0 + ms).toISOString();

function candidate(name: string, o: {bin?: string; emu?: string; created?: number; renew?: number; ping?: number; strategy?: string} = {}): CandidateView {
  return {
    name,
    creationTimestamp: at(o.created ?? 0),
    spec: {
      leaseName: 'cm', binaryVersion: o.bin ?? '1.33.0', emulationVersion: o.emu ?? '1.33', strategy: o.strategy ?? 'OldestEmulationVersion',
      ...(o.renew !== undefined ? {renewTime: at(o.renew)} : {}),
      ...(o.ping !== undefined ? {pingTime: at(o.ping)} : {}),
    },
  };
}

describe('picking the leader (OldestEmulationVersion)', () => {
  it('prefers the oldest emulation version, then the oldest binary version, then the oldest candidate', () => {
    const a = candidate('a', {emu: '1.33', bin: '1.33.0'});
    const b = candidate('b', {emu: '1.32', bin: '1.33.0'});
    expect(pickOldestEmulationVersion([a, b])?.name).toBe('b');
    const c = candidate('c', {emu: '1.33', bin: '1.33.2'});
    const d = candidate('d', {emu: '1.33', bin: '1.33.1'});
    expect(pickOldestEmulationVersion([c, d])?.name).toBe('d');
    const older = candidate('older', {created: 0});
    const newer = candidate('newer', {created: 1000});
    expect(pickOldestEmulationVersion([newer, older])?.name).toBe('older');
    expect(compareCandidates(older, newer)).toBe(-1);
  });

  it('skips candidates whose versions do not parse', () => {
    expect(pickOldestEmulationVersion([candidate('bad', {emu: 'x'}), candidate('ok', {emu: '1.40'})])?.name).toBe('ok');
  });

  it('takes the strategy of the highest binary version and refuses two differing at the same version', () => {
    expect(pickBestStrategy([candidate('a', {bin: '1.34.0', strategy: 'Other'}), candidate('b')])).toEqual({strategy: 'Other'});
    expect(pickBestStrategy([candidate('a', {strategy: 'Other'}), candidate('b')])).toEqual({
      error: 'candidates "a", "b" at same binary version but received differing strategies Other, OldestEmulationVersion',
    });
  });
});

describe('an election step', () => {
  const now = T0 + 60_000;
  const nowText = at(60_000);

  it('elects a fresh candidate into a missing lease at once', () => {
    const step = electionStep('missing', [candidate('a', {renew: 59_000})], now, nowText);
    expect(step.create).toEqual({strategy: 'OldestEmulationVersion', leaseDurationSeconds: 5, renewTime: nowText, holderIdentity: 'a'});
    expect(step.requeueMs).toBe(DEFAULT_REQUEUE_MS);
  });

  it('pings candidates that have not renewed lately and waits for them', () => {
    const step = electionStep('missing', [candidate('a', {renew: 59_000}), candidate('b', {renew: 0})], now, nowText);
    expect(step.ping).toEqual(['b']);
    expect(step.create).toBeUndefined();
    // Still within the election duration of the ping, unanswered: no vote yet.
    const waiting = electionStep('missing', [candidate('a', {renew: 59_000}), candidate('b', {renew: 0, ping: 58_000})], now, nowText);
    expect(waiting).toMatchObject({ping: []});
    expect(waiting.create).toBeUndefined();
  });

  it('leaves out a candidate that did not answer its ping in time', () => {
    const step = electionStep('missing', [
      candidate('young', {created: 5000, renew: 59_000}),
      candidate('silent', {created: 0, renew: 0, ping: 60_000 - ELECTION_DURATION_MS - 1}),
    ], now, nowText);
    expect(step.create?.holderIdentity).toBe('young');
  });

  it('marks a better candidate as preferredHolder of a valid lease held by another', () => {
    const lease = {holderIdentity: 'new', leaseDurationSeconds: 15, renewTime: at(59_000), strategy: 'OldestEmulationVersion'};
    const step = electionStep(lease, [candidate('new', {emu: '1.34', renew: 59_500}), candidate('old', {emu: '1.33', renew: 59_500})], now, nowText);
    expect(step.update).toEqual({...lease, preferredHolder: 'old'});
  });

  it('hands a released or expired lease to the electee', () => {
    const released = {holderIdentity: '', leaseDurationSeconds: 1, renewTime: at(59_000), strategy: 'OldestEmulationVersion', acquireTime: at(1000)};
    const step = electionStep(released, [candidate('b', {renew: 59_900})], now, nowText);
    expect(step.update).toEqual({holderIdentity: 'b', leaseDurationSeconds: 5, renewTime: nowText, strategy: 'OldestEmulationVersion'});
    const expired = {holderIdentity: 'a', leaseDurationSeconds: 2, renewTime: at(50_000), strategy: 'OldestEmulationVersion'};
    expect(electionStep(expired, [candidate('b', {renew: 59_900})], now, nowText).update?.holderIdentity).toBe('b');
  });

  it('writes nothing while the holder is the best candidate', () => {
    const lease = {holderIdentity: 'a', leaseDurationSeconds: 15, renewTime: at(59_000), strategy: 'OldestEmulationVersion'};
    const step = electionStep(lease, [candidate('a', {created: 0, renew: 59_000}), candidate('b', {created: 1000, renew: 59_000})], now, nowText);
    expect(step).toEqual({ping: [], requeueMs: DEFAULT_REQUEUE_MS});
  });

  it('admits only unexpired candidates of the lease', () => {
    const list = [
      candidate('fresh', {renew: 0}),
      {...candidate('other', {renew: 0}), spec: {...candidate('other', {renew: 0}).spec, leaseName: 'scheduler'}},
      candidate('stale', {renew: -1}),
    ];
    expect(admissibleCandidates(list, 'cm', T0 + LEASE_CANDIDATE_VALID_DURATION_MS).map((c) => c.name)).toEqual(['fresh']);
  });
});

describe('the options without the gate', () => {
  it('warns only when the timings were changed and the controller cannot run', () => {
    const changed = {leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 500};
    expect(coordinatedElectionProblem(false, false, changed)).toMatch(/no effect without the CoordinatedLeaderElection feature gate \(--feature-gates=CoordinatedLeaderElection=true\)/);
    expect(coordinatedElectionProblem(false, false, DEFAULT_COORDINATED_TIMINGS)).toBeUndefined();
    expect(coordinatedElectionProblem(true, true, changed)).toBeUndefined();
    expect(coordinatedElectionProblem(true, false, DEFAULT_COORDINATED_TIMINGS)).toMatch(/needs LeaseCandidates \(coordination\.orch\.io\/v1beta1/);
  });
});
