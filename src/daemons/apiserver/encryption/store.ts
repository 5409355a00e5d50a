/**
 * Encryption at rest as a store in front of each engine (upstream's value transformers sit at the
 * same place, under the watch cache): writes go through the resource's first provider, reads, lists
 * and watch events are decrypted with whichever provider the stored prefix names. Resources without
 * an entry are stored as they are.
 */
import {builtinResources} from '../../../api/resources.js';
import {DelegatingStore} from '../storage/delegating-store.js';
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

const isPromise = <T>(v: T | Promise<T>): v is Promise<T> => typeof (v as {then?: unknown})?.then === 'function';

export class EncryptingStore extends DelegatingStore {
  private cache = new Map<string, Provider[] | null>();
  private cachedFor?: ResourceEncryption[];
  constructor(
    inner: Store,
    /** The configuration in force now (a reload swaps it; the next read or write uses the new one). */
    private readonly config: () => ResourceEncryption[],
    private readonly resolve: (key: string) => KeyResource | undefined,
  ) {
    super(inner);
  }

  private providers(key: string): Provider[] | undefined {
    const r = this.resolve(key);
    if (!r) return undefined;
    const config = this.config();
    if (config !== this.cachedFor) {
      this.cache = new Map();
      this.cachedFor = config;
    }
    const id = `${r.group}/${r.resource}`;
    let p = this.cache.get(id);
    if (p === undefined) {
      p = providersFor(config, r.group, r.resource) ?? null;
      this.cache.set(id, p);
    }
    return p ?? undefined;
  }

  private encode(key: string, value: string): string {
    const p = this.providers(key);
    return p ? p[0]!.write(key, value) : value;
  }

  private decode(key: string, value: string): string | Promise<string> {
    const p = this.providers(key);
    if (!p) return value;
    // What wrote the value: a provider's prefix ('' unencrypted), and its key version (KMS key id).
    const reader = p.find((x) => x.prefix() !== '' && value.startsWith(x.prefix()));
    const writtenBy = reader ? reader.prefix() : value.startsWith(encryptedPrefix()) ? encryptedPrefix() : '';
    const version = reader?.keyVersion?.(value);
    // Asked when an update would change nothing: judged against the providers in force then, since the
    // watch cache keeps handing out this decoded value across KMS key rotations and config reloads.
    markStale(key, () => this.writtenByOther(key, writtenBy, version));
    return readValue(p, key, value);
  }

  /** Upstream's stale read: the value was not written by the provider (and key) that writes now. */
  private writtenByOther(key: string, writtenBy: string, version: string | undefined): boolean {
    const first = this.providers(key)?.[0];
    if (!first) return writtenBy !== '';
    if (first.prefix() !== writtenBy) return true;
    return version !== undefined && version !== first.currentKeyVersion?.();
  }

  private decodeKv(kv: KeyValue): KeyValue | Promise<KeyValue> {
    const value = this.decode(kv.key, kv.value);
    return isPromise(value) ? value.then((v) => ({...kv, value: v})) : {...kv, value};
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const kv = await this.inner.get(key);
    return kv && this.decodeKv(kv);
  }

  async list(prefix: string, options?: ListOptions): Promise<ListResult> {
    const result = await this.inner.list(prefix, options);
    const items = result.items.map((kv) => this.decodeKv(kv));
    // Only values whose KMS key must be unwrapped first are promises; most lists have none.
    return {...result, items: items.some(isPromise) ? await Promise.all(items) : (items as KeyValue[])};
  }

  create(key: string, value: string): Promise<number> {
    return this.inner.create(key, this.encode(key, value));
  }

  update(key: string, value: string, expectedModRevision: number): Promise<number> {
    return this.inner.update(key, this.encode(key, value), expectedModRevision);
  }

  override delete(key: string, expectedModRevision?: number): Promise<number | undefined> {
    markStale(key, false);
    return super.delete(key, expectedModRevision);
  }

  watch(prefix: string, afterRevision: number, onEvent: (event: StoreEvent) => void, onError: (error: Error) => void, onProgress?: (revision: number) => void): WatchHandle {
    // Events stay in revision order even when one waits for a KMS plugin: once a decode is
    // pending, later events and progress notes queue behind it.
    let queue: Promise<void> | undefined;
    let queued = 0;
    let failed = false;
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      handle.close();
      onError(error);
    };
    const deliver = (run: () => void | Promise<void>) => {
      if (failed) return;
      if (queued === 0) {
        const result = run();
        if (!isPromise(result)) return;
        queue = result;
      } else {
        queue = queue!.then(() => (failed ? undefined : run()));
      }
      queued++;
      queue.catch((error: Error) => fail(error)).finally(() => void queued--);
    };
    const handle = this.inner.watch(
      prefix,
      afterRevision,
      (event) =>
        deliver(() => {
          let value: string | Promise<string> | undefined;
          let prevValue: string | Promise<string> | undefined;
          try {
            value = event.value !== undefined ? this.decode(event.key, event.value) : undefined;
            prevValue = event.prevValue !== undefined ? this.decode(event.key, event.prevValue) : undefined;
          } catch (error) {
            return fail(error as Error);
          }
          const emit = (v: string | undefined, pv: string | undefined) =>
            onEvent({...event, ...(v !== undefined ? {value: v} : {}), ...(pv !== undefined ? {prevValue: pv} : {})});
          if (!isPromise(value) && !isPromise(prevValue)) return emit(value, prevValue);
          return Promise.all([value, prevValue]).then(([v, pv]) => (failed ? undefined : emit(v, pv)));
        }),
      (error) => deliver(() => fail(error)),
      onProgress && ((revision) => deliver(() => onProgress(revision))),
    );
    return handle;
  }

}
