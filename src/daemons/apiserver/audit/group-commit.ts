/**
 * Group commit for the audit log: lines appended while the event loop is busy, or while the previous
 * write is still in flight, leave together in one write. Every caller of one group gets the same
 * promise, settled when that write completed (rejected if it failed), so a blocking backend still
 * holds each response until its own event is on disk and blocking-strict still sees a failed write.
 * Groups are written one after the other, in the order their lines were appended.
 *
 * Why: the rotating stream pays per write (an async function, a FileHandle write, its size check),
 * and so does every promise and callback on the way; under load one write per event cost more than
 * the bytes. With one write in flight at a time, the busier the server, the larger the groups.
 */

/** Writes one chunk of text and calls back once it is stored (or failed). */
export type ChunkWriter = (text: string, done: (error?: Error | null) => void) => void;

interface Group {
  lines: string[];
  promise: Promise<void>;
  settle: (error?: Error | null) => void;
}

export class GroupCommitWriter {
  private open: Group | undefined;
  private writing = false;
  private scheduled = false;
  private idle: Array<() => void> = [];

  constructor(private readonly write: ChunkWriter) {}

  /** Queues one or more lines (each already ending with a newline); resolves once they are written. */
  append(text: string): Promise<void> {
    let group = this.open;
    if (!group) {
      let settle!: (error?: Error | null) => void;
      const promise = new Promise<void>((resolve, reject) => {
        settle = (error) => (error ? reject(error) : resolve());
      });
      // A group nobody awaits (a batch-mode caller that already moved on) must not fail the process.
      promise.catch(() => undefined);
      group = this.open = {lines: [], promise, settle};
    }
    group.lines.push(text);
    // The first line of a group waits for the end of this turn of the event loop: the events of
    // the other requests handled in the same turn join it. A write in flight will pick it up itself.
    if (!this.writing && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
    return group.promise;
  }

  /** Resolves once everything appended so far is written (failures included). */
  drained(): Promise<void> {
    if (!this.open && !this.writing) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    const group = this.open;
    if (!group) {
      const waiting = this.idle;
      this.idle = [];
      for (const resolve of waiting) resolve();
      return;
    }
    this.open = undefined;
    this.writing = true;
    const text = group.lines.length === 1 ? group.lines[0]! : group.lines.join('');
    let called = false;
    const done = (error?: Error | null) => {
      if (called) return;
      called = true;
      this.writing = false;
      group.settle(error);
      // What arrived during the write is the next group: it goes now, already as large as it gets.
      this.flush();
    };
    try {
      this.write(text, done);
    } catch (error) {
      done(error as Error);
    }
  };
}
