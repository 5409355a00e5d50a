import {describe, expect, it} from '@jest/globals';
import {PassThrough} from 'node:stream';
import {ByteRate} from '../../src/daemons/shared/serving/byte-rate.js';
import {relay} from '../../src/daemons/shared/serving/relay.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';

describe('ByteRate (--max-connection-bytes-per-sec)', () => {
  it('lets one second of bytes through at once, then paces the copy at the rate', async () => {
    const clock = new FakeClock(0);
    const rate = new ByteRate(1000, clock);
    expect(rate.delayAfter(600)).toBe(0);
    expect(rate.delayAfter(400)).toBe(0);
    // Over the burst: wait until the debt is paid at 1000 bytes/s.
    expect(rate.delayAfter(500)).toBe(500);
    await clock.advance(500);
    expect(rate.delayAfter(100)).toBe(100);
    // A long quiet spell refills only one second's worth.
    await clock.advance(10_000);
    expect(rate.delayAfter(1000)).toBe(0);
    expect(rate.delayAfter(1)).toBe(1);
  });

  it('holds a relayed stream to the rate: what passes grows with time, not with what waits', async () => {
    const clock = new FakeClock(0);
    const from = new PassThrough();
    const to = new PassThrough();
    let passed = 0;
    to.on('data', (c: Buffer) => (passed += c.length));
    relay(from, to, undefined, new ByteRate(1000, clock));
    for (let i = 0; i < 10; i++) from.write(Buffer.alloc(500));
    await new Promise((r) => setImmediate(r));
    // The burst (1000) and the chunk that overdrew it.
    expect(passed).toBe(1500);
    await clock.advance(500);
    await new Promise((r) => setImmediate(r));
    expect(passed).toBe(2000);
    await clock.advance(3500);
    await new Promise((r) => setImmediate(r));
    expect(passed).toBe(5000);
  });
});
