/** The Lease <-> record mapping, MicroTime on the wire, config validation and the identity. */
import { describe, expect, it } from '@jest/globals';
import {
  formatMicroTime,
  LeaderElector,
  leaseSpecToRecord,
  newIdentity,
  parseMicroTime,
  recordToLeaseSpec,
  serializeRecord,
  type LeaderElectorConfig,
  type LeaseLock,
} from '../../src/daemons/shared/leader-election/index.js';

describe('MicroTime', () => {
  it.each([
    ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.000000Z'],
    ['2026-11-22T10:00:00.123Z', '2026-11-22T10:00:00.123000Z'],
    ['1999-12-31T23:59:59.999Z', '1999-12-31T23:59:59.999000Z'],
  ])('writes %s as %s', (iso, wire) => {
    expect(formatMicroTime(Date.parse(iso))).toBe(wire);
  });

  it.each([
    ['2026-11-22T10:00:00.123456Z', '2026-11-22T10:00:00.123Z'],
    ['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.000Z'],
    ['2026-11-22T12:00:00.5+02:00', '2026-11-22T10:00:00.500Z'],
  ])('reads %s', (wire, iso) => {
    expect(new Date(parseMicroTime(wire)!).toISOString()).toBe(iso);
  });

  it.each([[undefined], [''], ['yesterday']])('reads %p as absent', (wire) => {
    expect(parseMicroTime(wire)).toBeUndefined();
  });
});

describe('record <-> Lease spec', () => {
  const at = Date.parse('2026-11-22T10:00:00.250Z');

  it('writes all five fields, transitions as leaseTransitions', () => {
    expect(recordToLeaseSpec({ holderIdentity: 'cp-1_x', leaseDurationSeconds: 15, acquireTime: at, renewTime: at + 2000, leaderTransitions: 3 })).toEqual({
      holderIdentity: 'cp-1_x',
      leaseDurationSeconds: 15,
      acquireTime: '2026-11-22T10:00:00.250000Z',
      renewTime: '2026-11-22T10:00:02.250000Z',
      leaseTransitions: 3,
    });
  });

  it('writes a released record with an empty holder', () => {
    expect(recordToLeaseSpec({ holderIdentity: '', leaseDurationSeconds: 1, acquireTime: at, renewTime: at, leaderTransitions: 3 }))
      .toMatchObject({ holderIdentity: '', leaseDurationSeconds: 1 });
  });

  it.each([
    ['a full spec', { holderIdentity: 'b', leaseDurationSeconds: 40, acquireTime: '2026-11-22T10:00:00.250000Z', renewTime: '2026-11-22T10:00:00.250000Z', leaseTransitions: 7, strategy: 'OldestEmulationVersion' },
      { holderIdentity: 'b', leaseDurationSeconds: 40, acquireTime: at, renewTime: at, leaderTransitions: 7, strategy: 'OldestEmulationVersion' }],
    ['an empty spec', {}, { holderIdentity: '', leaseDurationSeconds: 0, acquireTime: undefined, renewTime: undefined, leaderTransitions: 0 }],
    ['no spec', undefined, { holderIdentity: '', leaseDurationSeconds: 0, acquireTime: undefined, renewTime: undefined, leaderTransitions: 0 }],
  ])('reads %s', (_name, spec, record) => {
    expect(leaseSpecToRecord(spec)).toEqual(record);
  });

  it('serializes equal records equally and tells a renewal apart', () => {
    const record = { holderIdentity: 'a', leaseDurationSeconds: 15, acquireTime: at, renewTime: at, leaderTransitions: 0 };
    expect(serializeRecord(leaseSpecToRecord(recordToLeaseSpec(record)))).toBe(serializeRecord(record));
    expect(serializeRecord({ ...record, renewTime: at + 1 })).not.toBe(serializeRecord(record));
  });
});

describe('configuration', () => {
  const lock: LeaseLock = { describe: () => 'ns/name', get: async () => undefined, create: async () => '1', update: async () => '2' };
  const valid: LeaderElectorConfig = {
    lock, identity: 'me', leaseDurationMs: 15000, renewDeadlineMs: 10000, retryPeriodMs: 2000,
    callbacks: { onStartedLeading: () => undefined, onStoppedLeading: () => undefined },
  };

  it.each([
    [{ leaseDurationMs: 10000 }, 'leaseDuration must be greater than renewDeadline'],
    [{ renewDeadlineMs: 2400 }, 'renewDeadline must be greater than retryPeriod*JitterFactor'],
    [{ leaseDurationMs: 0, renewDeadlineMs: -3, retryPeriodMs: -3 }, 'leaseDuration must be greater than zero'],
    [{ leaseDurationMs: 1, renewDeadlineMs: 0, retryPeriodMs: -1 }, 'renewDeadline must be greater than zero'],
    [{ retryPeriodMs: 0 }, 'retryPeriod must be greater than zero'],
    [{ callbacks: { onStoppedLeading: () => undefined } }, 'OnStartedLeading callback must not be nil'],
    [{ callbacks: { onStartedLeading: () => undefined } }, 'OnStoppedLeading callback must not be nil'],
    [{ lock: undefined }, 'Lock must not be nil.'],
    [{ identity: '' }, 'Lock identity is empty'],
  ])('rejects %p with client-go\'s message', (change, message) => {
    expect(() => new LeaderElector({ ...valid, ...change } as LeaderElectorConfig)).toThrow(new Error(message));
  });

  it('accepts the defaults and short test timings', () => {
    expect(() => new LeaderElector(valid)).not.toThrow();
    expect(() => new LeaderElector({ ...valid, leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 200 })).not.toThrow();
  });
});

describe('identity', () => {
  it('is <hostname>_<uuid>, new each time', () => {
    expect(newIdentity('cp-1', '3f2a9d7e-6c1b-4a53-9d7e-0c5b2a1f8e44')).toBe('cp-1_3f2a9d7e-6c1b-4a53-9d7e-0c5b2a1f8e44');
    const a = newIdentity();
    expect(a).toMatch(/^.+_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(newIdentity()).not.toBe(a);
  });
});
