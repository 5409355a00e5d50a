import type {StoreEvent} from './store.js';

/**
 * The watch cache's history of one resource: a ring buffer of its most recent events, in revision
 * order. It promises that every event with a revision greater than `windowStart` is held, so a watch
 * from any revision >= windowStart can be served; older ones get 410 Gone.
 */
export class EventWindow {
  private readonly buffer: Array<StoreEvent | undefined>;
  private head = 0;
  private size = 0;

  constructor(
    readonly capacity: number,
    /** Every event after this revision is held. */
    public windowStart: number,
  ) {
    this.buffer = new Array<StoreEvent | undefined>(capacity);
  }

  get length(): number {
    return this.size;
  }

  push(event: StoreEvent): void {
    if (this.capacity === 0) {
      this.windowStart = event.revision;
      return;
    }
    if (this.size === this.capacity) {
      // The oldest event leaves: a watch from before it could no longer be served completely.
      this.windowStart = this.buffer[this.head]!.revision;
      this.buffer[this.head] = undefined;
      this.head = (this.head + 1) % this.capacity;
      this.size--;
    }
    this.buffer[(this.head + this.size) % this.capacity] = event;
    this.size++;
  }

  /** The held events after `afterRevision`, or undefined when some of them are no longer held. */
  since(afterRevision: number): StoreEvent[] | undefined {
    if (afterRevision < this.windowStart) return undefined;
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).revision <= afterRevision) lo = mid + 1;
      else hi = mid;
    }
    const events: StoreEvent[] = [];
    for (let i = lo; i < this.size; i++) events.push(this.at(i));
    return events;
  }

  /** Forgets every event: history now starts at `startRevision` (after a relist). */
  reset(startRevision: number): void {
    this.buffer.fill(undefined);
    this.head = 0;
    this.size = 0;
    this.windowStart = startRevision;
  }

  private at(index: number): StoreEvent {
    return this.buffer[(this.head + index) % this.capacity]!;
  }
}
