/**
 * Encryption at rest as a store in front of each engine (upstream's value transformers sit at the
 * same place, under the watch cache): writes go through the resource's first provider, reads, lists
 * and watch events are decrypted with whichever provider the stored prefix names. Resources without
 * an entry are stored as they are.
 */
import {builtinResources} from '../../../api/resources.js';
import type {KeyValue, ListOptions, ListResult, Store, StoreEvent, WatchHandle} from '../storage/store.js';
import {providersFor, type ResourceEncryption} from './config.js';
import {encryptedPrefix, readValue, type Provider} from './providers.js';
import {markStale} from './stale.js';

export interface KeyResource {
  group: string;
  resource: string;
}

/** Which resource a key belongs to: the built-ins by their storage prefix, else `<group>/<plural>/...`. */
export function keyResolver(keyPrefix: string): (key: string) => KeyResource | undefined {
  const root = `${keyPrefix.replace(/\/+$/, '')}/`;
  const known = builtinResources()
    .map((r) => ({prefix: `${root}${r.storagePrefix}/`, group: r.group, resource: r.plural}))
    .sort((a, b) => b.prefix.length - a.prefix.length);
  // Every value read or written asks: memoized by the key's parent path (`/registry/secrets/default`),
  // which names the resource just as well and repeats across a namespace's objects.
  const byParent = new Map<string, KeyResource | undefined>();
  const resolve = (key: string): KeyResource | undefined => {
    const hit = known.find((k) => key.startsWith(k.prefix));
    if (hit) return {group: hit.group, resource: hit.resource};
    if (!key.startsWith(root)) return undefined;
    const [first, second] = key.slice(root.length).split('/');
    if (first?.includes('.') && second) return {group: first, resource: second};
    return first ? {group: '', resource: first} : undefined;
  };
  return (key) => {
    const parent = key.slice(0, key.lastIndexOf('/') + 1);
    if (byParent.has(parent)) return byParent.get(parent);
    const r = resolve(key);
    // Cluster-scoped keys share one parent per resource; namespaces are bounded by the cluster's.
    if (byParent.size < 100_000) byParent.set(parent, r);
    return r;
  };
}

export class EncryptingStore implements Store {
  private readonly cache = new Map<string, Provider[] | null>();
  constructor(
    private readonly inner: Store,
    private readonly config: ResourceEncryption[],
    private readonly resolve: (key: string) => KeyResource | undefined,
  ) {}

  get engine(): string {
    return this.inner.engine;
  }

  private providers(key: string): Provider[] | undefined {
    const r = this.resolve(key);
    if (!r) return undefined;
    const id = `${r.group}/${r.resource}`;
    let p = this.cache.get(id);
    if (p === undefined) {
      p = providersFor(this.config, r.group, r.resource) ?? null;
      this.cache.set(id, p);
    }
    return p ?? undefined;
  }

  private encode(key: string, value: string): string {
    const p = this.providers(key);
    return p ? p[0]!.write(key, value) : value;
  }

  private decode(key: string, value: string): string {
    const p = this.providers(key);
    if (!p) return value;
    const first = p[0]!;
    // Stale: written by another provider than the one that writes now.
    markStale(key, first.prefix() ? !value.startsWith(first.prefix()) : value.startsWith(encryptedPrefix()));
    return readValue(p, key, value);
  }

  private decodeKv(kv: KeyValue): KeyValue {
    return {...kv, value: this.decode(kv.key, kv.value)};
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const kv = await this.inner.get(key);
    return kv && this.decodeKv(kv);
  }

  async list(prefix: string, options?: ListOptions): Promise<ListResult> {
    const result = await this.inner.list(prefix, options);
    return {...result, items: result.items.map((kv) => this.decodeKv(kv))};
  }

  create(key: string, value: string): Promise<number> {
    return this.inner.create(key, this.encode(key, value));
  }

  update(key: string, value: string, expectedModRevision: number): Promise<number> {
    return this.inner.update(key, this.encode(key, value), expectedModRevision);
  }

  delete(key: string, expectedModRevision?: number): Promise<number | undefined> {
    return this.inner.delete(key, expectedModRevision);
  }

  watch(prefix: string, afterRevision: number, onEvent: (event: StoreEvent) => void, onError: (error: Error) => void, onProgress?: (revision: number) => void): WatchHandle {
    return this.inner.watch(
      prefix,
      afterRevision,
      (event) => {
        let decoded: StoreEvent;
        try {
          decoded = {
            ...event,
            ...(event.value !== undefined ? {value: this.decode(event.key, event.value)} : {}),
            ...(event.prevValue !== undefined ? {prevValue: this.decode(event.key, event.prevValue)} : {}),
          };
        } catch (error) {
          onError(error as Error);
          return;
        }
        onEvent(decoded);
      },
      onError,
      onProgress,
    );
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
