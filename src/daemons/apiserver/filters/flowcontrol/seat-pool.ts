/**
 * The server's seats shared by the priority levels (upstream's apf_controller concurrency limits):
 * the total is --max-requests-inflight + --max-mutating-requests-inflight; each level's nominal limit
 * is ceil(total x its nominalConcurrencyShares / the sum of all levels' shares), of which
 * lendablePercent may be lent, and it may borrow up to borrowingLimitPercent of its nominal limit
 * (no borrowingLimitPercent: no bound).
 *
 * Borrowing here is decided per dispatch rather than upstream's periodic (10 s) seat-demand
 * adjustment: a level may go over its nominal limit while the other levels' lendable seats are idle
 * (not in use by them nor already borrowed by others). A lender that becomes busy again takes its own
 * seats at once; borrowed seats come back as the borrowers' requests end. So the server may briefly
 * hold more than the total, as upstream may between two adjustments.
 */
import type {SeatLimiter} from './queue-set.js';

export interface LevelLimits {
  nominal: number;
  lendable: number;
  /** Seats it may borrow beyond nominal; Infinity when unbounded. */
  borrowingLimit: number;
}

export interface LevelShares {
  name: string;
  /** 0 for the exempt level too: it still counts in the sum as upstream. */
  nominalConcurrencyShares: number;
  lendablePercent: number;
  borrowingLimitPercent?: number;
}

/** Upstream's computation of every level's nominal, lendable and borrowing limits. */
export function computeLimits(serverConcurrency: number, levels: LevelShares[]): Map<string, LevelLimits> {
  const sum = levels.reduce((s, l) => s + l.nominalConcurrencyShares, 0);
  const limits = new Map<string, LevelLimits>();
  for (const level of levels) {
    const nominal = sum > 0 ? Math.ceil((serverConcurrency * level.nominalConcurrencyShares) / sum) : 0;
    const lendable = Math.round((nominal * level.lendablePercent) / 100);
    const borrowingLimit = level.borrowingLimitPercent === undefined ? Infinity : Math.round((nominal * level.borrowingLimitPercent) / 100);
    limits.set(level.name, {nominal, lendable, borrowingLimit});
  }
  return limits;
}

interface PoolLevel {
  limits: LevelLimits;
  inUse: number;
  /** Deleted from the configuration while still running requests: goes when they end. */
  removed?: boolean;
}

export class SeatPool {
  private readonly levels = new Map<string, PoolLevel>();

  /** Sets a level's limits (kept in-use count: a reconfiguration never forgets running requests). */
  configure(name: string, limits: LevelLimits): void {
    const existing = this.levels.get(name);
    if (existing) {
      existing.limits = limits;
      existing.removed = false;
    } else this.levels.set(name, {limits, inUse: 0});
  }

  remove(name: string): void {
    const level = this.levels.get(name);
    // A level still running requests stays (with no lendable seats) until they end.
    if (level && level.inUse > 0) {
      level.limits = {nominal: 0, lendable: 0, borrowingLimit: 0};
      level.removed = true;
    } else this.levels.delete(name);
  }

  limitsOf(name: string): LevelLimits | undefined {
    return this.levels.get(name)?.limits;
  }

  inUse(name: string): number {
    return this.levels.get(name)?.inUse ?? 0;
  }

  /** Seats the level may use now: its nominal limit plus what it could borrow. */
  currentLimit(name: string): number {
    const level = this.levels.get(name);
    if (!level) return 0;
    const borrowable = Math.min(level.limits.borrowingLimit, this.idleLendable(name));
    return level.limits.nominal + Math.max(0, borrowable);
  }

  /** Lendable seats of the other levels not in use, less what others already borrowed. */
  private idleLendable(borrower: string): number {
    let idle = 0;
    let borrowedByOthers = 0;
    for (const [name, level] of this.levels) {
      if (name === borrower) continue;
      idle += Math.min(level.limits.lendable, Math.max(0, level.limits.nominal - level.inUse));
      borrowedByOthers += Math.max(0, level.inUse - level.limits.nominal);
    }
    return idle - borrowedByOthers;
  }

  limiter(name: string): SeatLimiter {
    const level = () => this.levels.get(name);
    return {
      fits: (seats) => {
        const l = level();
        if (!l) return false;
        if (l.inUse + seats <= l.limits.nominal) return true;
        const borrowedAfter = l.inUse + seats - l.limits.nominal;
        return borrowedAfter <= l.limits.borrowingLimit && borrowedAfter <= this.idleLendable(name);
      },
      take: (seats) => {
        const l = level();
        if (l) l.inUse += seats;
      },
      release: (seats) => {
        const l = level();
        if (!l) return;
        l.inUse -= seats;
        if (l.inUse <= 0 && l.removed) this.levels.delete(name);
      },
      inUse: () => level()?.inUse ?? 0,
      limit: () => this.currentLimit(name),
    };
  }
}
