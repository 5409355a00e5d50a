/**
 * Audit backends as upstream's plugin/pkg/audit: a sink that writes a batch of events (the log file,
 * the webhook), wrapped by the mode (`--audit-*-mode`):
 * - blocking: the request waits for its event to be written; a failure is logged;
 * - blocking-strict: as blocking, and a failed RequestReceived event fails the request;
 * - batch: events go into a bounded buffer (dropped with an error when full) and leave in batches of
 *   up to max-size, after max-wait at the latest, optionally throttled (qps with a burst).
 * shutdown() flushes what is buffered and waits for the sink: nothing is lost on a clean stop.
 */
import type {AuditEvent} from './event.js';

export interface AuditSink {
  write(events: AuditEvent[]): Promise<void>;
  close(): Promise<void>;
}

export type AuditMode = 'batch' | 'blocking' | 'blocking-strict';

export interface BatchOptions {
  bufferSize: number;
  maxBatchSize: number;
  /** 0: a short batch leaves as soon as the event loop is free. */
  maxWaitMs: number;
  throttleQps?: number;
  throttleBurst?: number;
}

export interface AuditBackend {
  readonly name: string;
  readonly mode: AuditMode;
  /** Resolves when the events are written (blocking modes) or queued (batch). Rejects on a failed write in blocking modes. */
  process(events: AuditEvent[]): Promise<void>;
  shutdown(): Promise<void>;
}

export function blockingBackend(name: string, sink: AuditSink, mode: 'blocking' | 'blocking-strict'): AuditBackend {
  const pending = new Set<Promise<void>>();
  return {
    name,
    mode,
    process(events) {
      const p = sink.write(events);
      // The log sink hands every event of one group commit the same promise: tracked once.
      if (!pending.has(p)) {
        pending.add(p);
        const forget = () => void pending.delete(p);
        p.then(forget, forget);
      }
      return p;
    },
    async shutdown() {
      await Promise.allSettled(pending);
      await sink.close();
    },
  };
}

export interface BatchDeps {
  onDrop: (count: number) => void;
  onError: (error: unknown) => void;
  now?: () => number;
}

/** A token bucket: `burst` batches may leave at once, then `qps` a second. */
class Throttle {
  private tokens: number;
  private last: number;
  constructor(private readonly qps: number, private readonly burst: number, private readonly now: () => number) {
    this.tokens = burst;
    this.last = now();
  }
  /** Milliseconds to wait before the next batch may leave (0: now, and a token is taken). */
  take(): number {
    const t = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((t - this.last) / 1000) * this.qps);
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) / this.qps) * 1000);
  }
}

export function batchBackend(name: string, sink: AuditSink, options: BatchOptions, deps: BatchDeps): AuditBackend {
  const buffer: AuditEvent[] = [];
  const maxBatch = Math.max(1, options.maxBatchSize);
  const throttle = options.throttleQps && options.throttleQps > 0 ? new Throttle(options.throttleQps, Math.max(1, options.throttleBurst ?? 1), deps.now ?? Date.now) : undefined;
  let timer: NodeJS.Timeout | undefined;
  let sending: Promise<void> | undefined;
  let stopping = false;

  const schedule = () => {
    if (sending || timer || buffer.length === 0) return;
    const full = buffer.length >= maxBatch;
    const wait = full || stopping ? 0 : options.maxWaitMs;
    timer = setTimeout(() => {
      timer = undefined;
      void sendOne();
    }, wait);
    if (!stopping) timer.unref();
  };

  const sendOne = async () => {
    if (sending || buffer.length === 0) return;
    const delay = stopping ? 0 : (throttle?.take() ?? 0);
    if (delay > 0) {
      timer = setTimeout(() => {
        timer = undefined;
        void sendOne();
      }, delay);
      timer.unref();
      return;
    }
    const batch = buffer.splice(0, maxBatch);
    sending = sink.write(batch).catch((error) => deps.onError(error));
    await sending;
    sending = undefined;
    schedule();
  };

  return {
    name,
    mode: 'batch',
    async process(events) {
      for (const ev of events) {
        if (buffer.length >= options.bufferSize) {
          deps.onDrop(1);
          continue;
        }
        buffer.push(ev);
      }
      schedule();
    },
    async shutdown() {
      stopping = true;
      if (timer) clearTimeout(timer);
      timer = undefined;
      while (sending || buffer.length > 0) {
        if (sending) await sending;
        else await sendOne();
      }
      await sink.close();
    },
  };
}

/**
 * Upstream's truncating backend for batches: a batch whose encoding exceeds `maxBatchBytes` goes out
 * as several smaller ones (an event alone over the limit still goes, the event limit handles it).
 */
export function splittingSink(sink: AuditSink, maxBatchBytes: number): AuditSink {
  return {
    async write(events) {
      let batch: AuditEvent[] = [];
      let size = 0;
      for (const ev of events) {
        const bytes = Buffer.byteLength(JSON.stringify(ev));
        if (batch.length > 0 && size + bytes > maxBatchBytes) {
          await sink.write(batch);
          batch = [];
          size = 0;
        }
        batch.push(ev);
        size += bytes;
      }
      if (batch.length) await sink.write(batch);
    },
    close: () => sink.close(),
  };
}

export function createBackend(name: string, sink: AuditSink, mode: AuditMode, batch: BatchOptions, deps: BatchDeps): AuditBackend {
  return mode === 'batch' ? batchBackend(name, sink, batch, deps) : blockingBackend(name, sink, mode);
}
