/**
 * One limited priority level's queues: upstream's fairqueuing/queueset, the decision part only
 * (pure state plus an injected clock for the queue wait limits).
 *
 * Fair queuing works in virtual time R (seat-seconds of service each active queue has been given):
 * R advances at (seats in use) / (queues with waiting or executing requests) per real second.
 * Upstream advances it at min(seats demanded, concurrency limit) instead; but when the head request
 * is wider than the free seats, seats stay idle, R runs ahead of the service the backlogged queues
 * really get, and a queue that becomes active (it starts at R) then waits behind all of them for as
 * long as the backlog lasts (measured: seconds for a single GET behind a flood of 5-seat LISTs).
 * Following the seats in use keeps R where the backlogged queues are. Each queue keeps `nextDispatchR`, the R at which its next request may start; a
 * request's virtual finish is that plus its work (seats x the estimated service time, 3 ms as
 * upstream). The queue whose head finishes first in R is served next; its nextDispatchR moves by the
 * estimated work, and when the request ends the estimate is corrected by the real duration. So a
 * flow of slow requests (big LISTs) pays for the time it really holds its seats, and a flow of quick
 * requests sharing the level is served nearly as if alone.
 *
 * Flows reach queues by shuffle sharding (./shuffle-shard.ts): the shortest queue of the flow's hand
 * (in seats waiting and executing); a full queue (queueLengthLimit) rejects. A level with the Reject
 * response has no queues: a request that does not fit at once is rejected.
 */
import type {Clock, TimerHandle} from '../../../shared/clock.js';
import {dealHand} from './shuffle-shard.js';

/** Upstream's estimatedServiceDuration. */
export const ESTIMATED_SERVICE_SECONDS = 0.003;

export interface QueuingConfig {
  queues: number;
  handSize: number;
  queueLengthLimit: number;
}

export type RejectReason = 'queue-full' | 'concurrency-limit' | 'time-out' | 'cancelled';

/** Seats of the level: whether `seats` more fit now (own seats or borrowed ones), and their accounting. */
export interface SeatLimiter {
  fits(seats: number): boolean;
  take(seats: number): void;
  release(seats: number): void;
  /** Seats this level holds now. */
  inUse(): number;
  /** The level's current limit (for the virtual time's rate). */
  limit(): number;
}

/** Who asked what, for dump_requests?includeRequestDetails. */
export interface RequestDescription {
  user: string;
  verb: string;
  path: string;
  namespace?: string;
  name?: string;
  apiVersion?: string;
  resource?: string;
  subresource?: string;
}

export interface QueuedRequestInfo {
  /** The flow's hash (shuffle sharding). */
  flowHash: bigint;
  seats: number;
  /** How long the request may wait in its queue before it is rejected with `time-out`. */
  waitLimitMs: number;
  /** Called once when the request may run (possibly synchronously inside enqueue). */
  onDispatch(waitedMs: number): void;
  /** Called once when it is refused. */
  onReject(reason: RejectReason): void;
  /** For the debug dump: who and what. */
  describe?: RequestDescription & {flowSchema: string; flowDistinguisher: string};
}

interface Waiting {
  info: QueuedRequestInfo;
  queue: Queue;
  arrivedAt: number;
  timer?: TimerHandle;
  /** Set once dispatched: what finishes it. */
  started?: Ticket;
}

export interface Executing {
  readonly info: QueuedRequestInfo;
  readonly queue: number;
  readonly startedAt: number;
}

interface Queue {
  index: number;
  waiting: Waiting[];
  waitingSeats: number;
  seatsInUse: number;
  executing: number;
  nextDispatchR: number;
}

/** What the caller holds for a request it enqueued: cancel while waiting, finish once executed. */
export interface Ticket {
  /** The client went away while waiting: the request leaves its queue (`cancelled`). No-op once dispatched. */
  cancel(): void;
  /** The request finished executing: its seats are released and waiting requests dispatched. */
  finish(): void;
}

export class QueueSet {
  private queues: Queue[];
  private currentR = 0;
  private lastRealMs: number;
  private waitingCount = 0;
  private waitingSeatsTotal = 0;
  /** Queues with waiting or executing requests, and the seats they hold: kept as they change (R's rate). */
  private activeQueues = 0;
  private seatsInUse = 0;
  /** Each flow's hand (dealing costs BigInt divisions), by hash; cleared when the deck changes. */
  private hands = new Map<bigint, number[]>();
  /** Called after seats were released here, so other levels waiting to borrow may dispatch. */
  onRelease?: () => void;
  readonly executing = new Set<Executing>();

  constructor(
    private readonly clock: Clock,
    private readonly limiter: SeatLimiter,
    /** undefined: the Reject response. */
    private config: QueuingConfig | undefined,
  ) {
    this.queues = this.makeQueues(config?.queues ?? 0);
    this.lastRealMs = clock.now();
  }

  private makeQueues(n: number): Queue[] {
    return Array.from({length: n}, (_, index) => ({index, waiting: [], waitingSeats: 0, seatsInUse: 0, executing: 0, nextDispatchR: 0}));
  }

  /** A configuration change: queues are rebuilt only when their number changes and none is in use. */
  reconfigure(config: QueuingConfig | undefined): void {
    const count = config?.queues ?? 0;
    if (count > this.queues.length) this.queues.push(...this.makeQueues(count - this.queues.length).map((q, i) => ({...q, index: this.queues.length + i})));
    this.config = config;
    this.hands.clear();
    // Fewer queues: the extra ones drain (nothing new is dealt to them) and stay until then.
    this.dispatchAsMuchAsPossible();
  }

  get waitingRequests(): number {
    return this.waitingCount;
  }

  get waitingSeats(): number {
    return this.waitingSeatsTotal;
  }

  queueStates(): ReadonlyArray<Readonly<Queue>> {
    return this.queues;
  }

  get virtualTime(): number {
    return this.currentR;
  }

  /**
   * Admits a request: dispatched at once when nothing waits and its seats fit, else queued (Queue
   * levels) or rejected. onDispatch/onReject may run before this returns.
   */
  enqueue(info: QueuedRequestInfo): Ticket {
    this.advanceR();
    const config = this.config;
    if (!config || config.queues === 0) {
      // Reject response: run now or never.
      if (this.limiter.fits(info.seats) || this.limiter.inUse() === 0) return this.startUnqueued(info);
      info.onReject('concurrency-limit');
      return NOOP_TICKET;
    }
    const queue = this.chooseQueue(info.flowHash, config);
    if (queue.waiting.length >= config.queueLengthLimit) {
      info.onReject('queue-full');
      return NOOP_TICKET;
    }
    const waiting: Waiting = {info, queue, arrivedAt: this.clock.now()};
    // A queue that was idle starts at the current virtual time (it is owed nothing for its idle past).
    if (queue.waiting.length === 0 && queue.executing === 0) {
      queue.nextDispatchR = Math.max(queue.nextDispatchR, this.currentR);
      this.activeQueues++;
    }
    queue.waiting.push(waiting);
    queue.waitingSeats += info.seats;
    this.waitingCount++;
    this.waitingSeatsTotal += info.seats;
    this.dispatchAsMuchAsPossible();
    if (waiting.started) return waiting.started;
    waiting.timer = this.clock.setTimeout(() => this.remove(waiting, 'time-out'), info.waitLimitMs);
    waiting.timer.unref?.();
    return {
      cancel: () => {
        if (!waiting.started) this.remove(waiting, 'cancelled');
      },
      finish: () => waiting.started?.finish(),
    };
  }

  /** The Reject response's immediate execution (no queue involved). */
  private startUnqueued(info: QueuedRequestInfo): Ticket {
    this.limiter.take(info.seats);
    const executing: Executing = {info, queue: -1, startedAt: this.clock.now()};
    this.executing.add(executing);
    info.onDispatch(0);
    return this.finishTicket(executing, undefined);
  }

  private finishTicket(executing: Executing, queue: Queue | undefined): Ticket {
    let done = false;
    return {
      cancel: () => undefined,
      finish: () => {
        if (done) return;
        done = true;
        this.advanceR();
        this.executing.delete(executing);
        this.limiter.release(executing.info.seats);
        if (queue) {
          queue.seatsInUse -= executing.info.seats;
          this.seatsInUse -= executing.info.seats;
          queue.executing--;
          if (queue.executing === 0 && queue.waiting.length === 0) this.activeQueues--;
          // Correct the estimate by the real service time (upstream: nextDispatchR -= (G - S) x width).
          const actualSeconds = (this.clock.now() - executing.startedAt) / 1000;
          queue.nextDispatchR -= executing.info.seats * (ESTIMATED_SERVICE_SECONDS - actualSeconds);
        }
        this.dispatchAsMuchAsPossible();
        this.onRelease?.();
      },
    };
  }

  /** The hand's queue with the fewest seats waiting and executing (ties: the first dealt). */
  private chooseQueue(hash: bigint, config: QueuingConfig): Queue {
    let hand = this.hands.get(hash);
    if (!hand) {
      hand = dealHand(hash, config.queues, config.handSize);
      if (this.hands.size >= 10_000) this.hands.clear();
      this.hands.set(hash, hand);
    }
    let best = this.queues[hand[0]!]!;
    let bestLength = best.waitingSeats + best.seatsInUse;
    for (let i = 1; i < hand.length; i++) {
      const queue = this.queues[hand[i]!]!;
      const length = queue.waitingSeats + queue.seatsInUse;
      if (length < bestLength) {
        best = queue;
        bestLength = length;
      }
    }
    return best;
  }

  private remove(waiting: Waiting, reason: RejectReason): void {
    const queue = waiting.queue;
    const at = queue.waiting.indexOf(waiting);
    if (at < 0) return;
    this.advanceR();
    queue.waiting.splice(at, 1);
    queue.waitingSeats -= waiting.info.seats;
    if (queue.executing === 0 && queue.waiting.length === 0) this.activeQueues--;
    this.waitingCount--;
    this.waitingSeatsTotal -= waiting.info.seats;
    if (waiting.timer) this.clock.clearTimeout(waiting.timer);
    waiting.info.onReject(reason);
  }

  /** Dispatches waiting requests while the head of the queue that finishes first in R fits. */
  dispatchAsMuchAsPossible(): void {
    for (;;) {
      if (this.waitingCount === 0) return;
      this.advanceR();
      let best: Queue | undefined;
      let bestFinish = Infinity;
      for (const queue of this.queues) {
        const head = queue.waiting[0];
        if (!head) continue;
        const finish = queue.nextDispatchR + head.info.seats * ESTIMATED_SERVICE_SECONDS;
        if (finish < bestFinish) {
          best = queue;
          bestFinish = finish;
        }
      }
      if (!best) return;
      const head = best.waiting[0]!;
      // A request wider than the whole limit still runs when the level is idle (upstream).
      if (!this.limiter.fits(head.info.seats) && this.limiter.inUse() > 0) return;
      best.waiting.shift();
      best.waitingSeats -= head.info.seats;
      this.waitingCount--;
      this.waitingSeatsTotal -= head.info.seats;
      if (head.timer) this.clock.clearTimeout(head.timer);
      best.nextDispatchR += head.info.seats * ESTIMATED_SERVICE_SECONDS;
      best.seatsInUse += head.info.seats;
      this.seatsInUse += head.info.seats;
      best.executing++;
      this.limiter.take(head.info.seats);
      const executing: Executing = {info: head.info, queue: best.index, startedAt: this.clock.now()};
      this.executing.add(executing);
      head.started = this.finishTicket(executing, best);
      head.info.onDispatch(this.clock.now() - head.arrivedAt);
    }
  }

  /** R advances by real time x seats in use / active queues (see the file's comment for why not upstream's ratio). */
  private advanceR(): void {
    const now = this.clock.now();
    const elapsed = (now - this.lastRealMs) / 1000;
    this.lastRealMs = now;
    if (elapsed <= 0 || this.activeQueues === 0) return;
    this.currentR += (elapsed * this.seatsInUse) / this.activeQueues;
  }
}

const NOOP_TICKET: Ticket = {cancel: () => undefined, finish: () => undefined};
