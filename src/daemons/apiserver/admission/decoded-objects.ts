/**
 * The admission plugins' reads of built-in objects (namespaces, service accounts, limit ranges,
 * priority classes, ...), decoded once per stored revision. Upstream's plugins read informer
 * listers and fall back to live lookups where a lister could be stale; here the server's store is
 * already a watch cache (storage/cached-store.ts) whose writes resolve only once it has seen them,
 * so reading it is both in memory and read-your-writes. What remained per request was decoding
 * the stored JSON again and again: that is what this memo removes. A key's entry is reused only
 * while the store still holds that very revision, so a plugin sees exactly what a live read
 * would (a namespace deleted or a LimitRange created a moment ago included).
 *
 * The objects handed out are shared between requests, hence frozen: a plugin that wants to change
 * one copies it first (a TypeError otherwise, never a silent corruption of the next request).
 */
import type {JsonObject, JsonValue} from '../../../patch/types.js';
import type {RegistryStore} from '../rest/registry-store.js';
import type {KeyValue, Store} from '../storage/store.js';

/** Beyond this many remembered objects per resource the memo starts over (objects deleted meanwhile are never read again). */
const MAX_ENTRIES = 10_000;

interface Entry {
  revision: number;
  object: JsonObject;
}

function deepFreeze<T extends JsonValue>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child as JsonValue);
  }
  return value;
}

/** A store that answers from memory synchronously when it can (storage/cached-store.ts). */
interface PeekableStore {
  peek(key: string): {found: KeyValue | undefined} | undefined;
  peekList(prefix: string): KeyValue[] | undefined;
}

const peekable = (store: Store): PeekableStore | undefined =>
  typeof (store as Partial<PeekableStore>).peek === 'function' && typeof (store as Partial<PeekableStore>).peekList === 'function' ? (store as unknown as PeekableStore) : undefined;

export class DecodedObjects {
  private readonly memo = new WeakMap<RegistryStore, Map<string, Entry>>();
  private readonly memory: PeekableStore | undefined;

  constructor(private readonly store: Store) {
    this.memory = peekable(store);
  }

  /**
   * The object, answered synchronously from the store's memory: `{object}` (undefined when there
   * is none), or undefined when the store cannot answer from memory now (use get()).
   */
  peek(registry: RegistryStore, namespace: string, name: string): {object: JsonObject | undefined} | undefined {
    const key = registry.key(namespace, name);
    const hit = this.memory?.peek(key);
    if (!hit) return undefined;
    if (!hit.found) {
      this.memo.get(registry)?.delete(key);
      return {object: undefined};
    }
    return {object: this.decoded(registry, hit.found)};
  }

  /** The collection, answered synchronously from the store's memory, or undefined (use list()). */
  peekList(registry: RegistryStore, namespace: string): JsonObject[] | undefined {
    const items = this.memory?.peekList(registry.collectionPrefix(namespace));
    return items?.map((kv) => this.decoded(registry, kv));
  }

  /**
   * Whether reads of this registry can use the memo: built-in resources only. A custom resource's
   * decoding depends on its definition too (pruning, defaults, conversion webhooks), which may
   * change while its objects' revisions do not.
   */
  handles(registry: RegistryStore): boolean {
    return !registry.info.custom && registry.hooks === undefined;
  }

  async get(registry: RegistryStore, namespace: string, name: string): Promise<JsonObject | undefined> {
    const key = registry.key(namespace, name);
    const kv = await this.store.get(key);
    if (!kv) {
      this.memo.get(registry)?.delete(key);
      return undefined;
    }
    return this.decoded(registry, kv);
  }

  /** Every object under the collection (all pages). */
  async list(registry: RegistryStore, namespace: string): Promise<JsonObject[]> {
    const prefix = registry.collectionPrefix(namespace);
    const out: JsonObject[] = [];
    let startAfter: string | undefined;
    for (;;) {
      const page = await this.store.list(prefix, startAfter === undefined ? {} : {startAfter});
      for (const kv of page.items) out.push(this.decoded(registry, kv));
      if (!page.more || page.items.length === 0) return out;
      startAfter = page.items.at(-1)!.key;
    }
  }

  private decoded(registry: RegistryStore, kv: KeyValue): JsonObject {
    let entries = this.memo.get(registry);
    if (!entries) this.memo.set(registry, (entries = new Map()));
    const found = entries.get(kv.key);
    if (found && found.revision === kv.modRevision) return found.object;
    const object = deepFreeze(registry.decode(kv.value, kv.modRevision));
    if (entries.size >= MAX_ENTRIES) entries.clear();
    entries.set(kv.key, {revision: kv.modRevision, object});
    return object;
  }
}
