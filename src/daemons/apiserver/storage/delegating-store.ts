/**
 * The calls a value-transforming store (encryption at rest, the storage media type) hands to the
 * store below unchanged: everything but the values. Subclasses transform get, list, the writes and
 * watch events.
 */
import type {KeyValue, ListOptions, ListResult, Store, StoreEvent, WatchHandle} from './store.js';

export abstract class DelegatingStore implements Store {
  constructor(protected readonly inner: Store) {}

  get engine(): string {
    return this.inner.engine;
  }

  abstract get(key: string): Promise<KeyValue | undefined>;
  abstract list(prefix: string, options?: ListOptions): Promise<ListResult>;
  abstract create(key: string, value: string): Promise<number>;
  abstract update(key: string, value: string, expectedModRevision: number): Promise<number>;
  abstract watch(prefix: string, afterRevision: number, onEvent: (event: StoreEvent) => void, onError: (error: Error) => void, onProgress?: (revision: number) => void): WatchHandle;

  delete(key: string, expectedModRevision?: number): Promise<number | undefined> {
    return this.inner.delete(key, expectedModRevision);
  }

  currentRevision(): Promise<number> {
    return this.inner.currentRevision();
  }

  compact(revision: number): Promise<void> {
    return this.inner.compact(revision);
  }

  ping(timeoutMs: number): Promise<void> {
    return this.inner.ping(timeoutMs);
  }

  writeFailure() {
    return this.inner.writeFailure?.();
  }

  async probeWrite(): Promise<void> {
    await this.inner.probeWrite?.();
  }

  async dbSizeBytes(): Promise<number> {
    return (await this.inner.dbSizeBytes?.()) ?? 0;
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
