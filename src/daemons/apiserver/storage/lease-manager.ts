/**
 * etcd leases for keys that expire (events, `--event-ttl`), reused as upstream's etcd3 LeaseManager
 * does (--lease-reuse-duration-seconds): granting a lease per write would cost etcd one lease for
 * every event, so a lease is shared by the writes of a window. A write may reuse the previous lease
 * when that lease outlives the write's TTL (the key does not vanish early) and expires no later
 * than TTL + reuse (it does not linger long); else a new one is granted with TTL + reuse seconds.
 * The reuse is capped at 5% of the TTL, and one lease carries at most 1000 keys (upstream's
 * leaseReuseDurationPercent and leaseMaxAttachedObjectCount).
 */
import {systemClock, type Clock} from '../../shared/clock.js';

const REUSE_PERCENT = 0.05;
const MAX_ATTACHED = 1000;

export class LeaseManager {
  private previous?: {id: string; expiresAt: number};
  private attached = 0;
  private pending?: Promise<string>;
  /** Leases granted so far (tests and the dashboard compare it with the writes). */
  granted = 0;

  constructor(
    private readonly grant: (ttlSeconds: number) => Promise<string>,
    private readonly reuseDurationSeconds: number,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The lease a key written now with `ttlSeconds` to live is attached to. */
  async leaseFor(ttlSeconds: number): Promise<string> {
    // Writes that arrive while a grant is under way share it rather than grant one each.
    if (this.pending) await this.pending.catch(() => undefined);
    const now = this.clock.now();
    const reuse = Math.min(Math.floor(REUSE_PERCENT * ttlSeconds), this.reuseDurationSeconds);
    const previous = this.previous;
    this.attached++;
    if (previous) {
      const valid = now + ttlSeconds * 1000 < previous.expiresAt;
      // (>= where upstream has After: its clock has nanoseconds, this one milliseconds, and writes
      // within the grant's millisecond must share it too.)
      const sufficient = now + (ttlSeconds + reuse) * 1000 >= previous.expiresAt;
      if (valid && sufficient && this.attached <= MAX_ATTACHED) return previous.id;
    }
    const lifetime = ttlSeconds + reuse;
    this.pending = this.grant(lifetime).then((id) => {
      this.granted++;
      this.previous = {id, expiresAt: now + lifetime * 1000};
      this.attached = 1;
      return id;
    });
    try {
      return await this.pending;
    } finally {
      this.pending = undefined;
    }
  }
}
