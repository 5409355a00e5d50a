/**
 * Keeps an in-memory view in step with the store for the server's own consumers (the RBAC index,
 * the Node authorizer's graph): for each key prefix, list, then watch from the list's revision,
 * and list again after a watch error (a compacted revision, a lost etcd connection) after a pause.
 */
import type {Store, WatchHandle} from './storage/store.js';

export interface PrefixHandlers {
  /** An object written (listed, created or updated), decoded. */
  apply(object: Record<string, unknown>): void;
  /** An object deleted (its last value). */
  remove(object: Record<string, unknown>): void;
}

export class StoreInformer {
  private watches: WatchHandle[] = [];
  private stopped = false;
  private syncedPrefixes = new Set<string>();

  constructor(
    private readonly store: Store,
    /** Full key prefixes (ending in `/`) and what to do with their objects. */
    private readonly prefixes: ReadonlyMap<string, PrefixHandlers>,
    private readonly onError: (error: Error) => void,
    private readonly retryMs = 1000,
  ) {}

  /** True once every prefix has been listed once. */
  get synced(): boolean {
    return this.syncedPrefixes.size === this.prefixes.size;
  }

  /** Runs until stop(); resolves only then (callers do not await it). */
  async start(): Promise<void> {
    await Promise.all([...this.prefixes].map(([prefix, handlers]) => this.run(prefix, handlers)));
  }

  private async run(prefix: string, handlers: PrefixHandlers): Promise<void> {
    while (!this.stopped) {
      try {
        const list = await this.store.list(prefix);
        for (const item of list.items) handlers.apply(JSON.parse(item.value) as Record<string, unknown>);
        this.syncedPrefixes.add(prefix);
        await new Promise<void>((resolve) => {
          const handle = this.store.watch(
            prefix,
            list.revision,
            (event) => {
              if (event.type === 'PUT' && event.value) handlers.apply(JSON.parse(event.value) as Record<string, unknown>);
              else if (event.type === 'DELETE' && event.prevValue) handlers.remove(JSON.parse(event.prevValue) as Record<string, unknown>);
            },
            (error) => {
              this.onError(error);
              resolve();
            },
          );
          this.watches.push(handle);
        });
      } catch (error) {
        this.onError(error as Error);
      }
      if (!this.stopped) await new Promise((r) => setTimeout(r, this.retryMs).unref());
    }
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches) w.close();
  }
}
