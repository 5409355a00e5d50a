import {describe, expect, it} from '@jest/globals';
import {LeaseManager} from '../../src/daemons/apiserver/storage/lease-manager.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';

describe('LeaseManager (--lease-reuse-duration-seconds)', () => {
  const setup = (reuse: number) => {
    const clock = new FakeClock(0);
    const grants: number[] = [];
    const manager = new LeaseManager(async (ttl) => {
      grants.push(ttl);
      return `lease-${grants.length}`;
    }, reuse, clock);
    return {clock, grants, manager};
  };

  it('shares one lease among the writes of the reuse window, granted for TTL + reuse', async () => {
    const {clock, grants, manager} = setup(60);
    expect(await manager.leaseFor(3600)).toBe('lease-1');
    await clock.advance(59_000);
    expect(await manager.leaseFor(3600)).toBe('lease-1');
    // The lease would now expire before the new key's TTL: a new one.
    await clock.advance(1_000);
    expect(await manager.leaseFor(3600)).toBe('lease-2');
    expect(grants).toEqual([3660, 3660]);
  });

  it('caps the reuse at 5% of the TTL, and a zero reuse grants a lease per write', async () => {
    const short = setup(60);
    await short.manager.leaseFor(100);
    expect(short.grants).toEqual([105]);
    const none = setup(0);
    await none.manager.leaseFor(100);
    await none.manager.leaseFor(100);
    expect(none.grants).toEqual([100, 100]);
  });

  it('does not hand a lease to a key with a longer TTL than the lease has left', async () => {
    const {grants, manager} = setup(60);
    await manager.leaseFor(100);
    expect(await manager.leaseFor(3600)).toBe('lease-2');
    expect(grants).toEqual([105, 3660]);
  });

  it('attaches at most 1000 keys to one lease, and concurrent writes wait for one grant', async () => {
    const {grants, manager} = setup(60);
    const ids = await Promise.all(Array.from({length: 1001}, () => manager.leaseFor(3600)));
    expect(new Set(ids.slice(0, 1000))).toEqual(new Set(['lease-1']));
    expect(ids[1000]).toBe('lease-2');
    expect(grants).toHaveLength(2);
  });
});
