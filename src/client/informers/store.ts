/**
 * The informer's cache: objects by key (`namespace/name`, or `name` for cluster-scoped objects, as
 * client-go's MetaNamespaceKeyFunc), with secondary indexes (client-go's cache.Indexer). Objects are
 * stored as given and shared with every reader: handlers and controllers must not mutate them.
 */
import type { ApiObject } from './types.js';

export type KeyFunc<T> = (object: T) => string;
/** The index values of one object (an object may sit under several, or none). */
export type IndexFunc<T> = (object: T) => string[];

export function metaNamespaceKey(object: ApiObject): string {
  const name = object.metadata?.name;
  if (!name) throw new Error('object has no metadata.name');
  const namespace = object.metadata?.namespace;
  return namespace ? `${namespace}/${name}` : name;
}

/** Splits a key back into namespace ('' when cluster-scoped) and name. */
export function splitMetaNamespaceKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf('/');
  return slash < 0 ? { namespace: '', name: key } : { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

export const NAMESPACE_INDEX = 'namespace';

export function namespaceIndexFunc(object: ApiObject): string[] {
  return [object.metadata?.namespace ?? ''];
}

/**
 * What a handler's delete receives when the informer learned of a deletion only by relisting:
 * the last state it had, which may be stale (client-go's cache.DeletedFinalStateUnknown).
 */
export class DeletedFinalStateUnknown<T> {
  constructor(
    readonly key: string,
    readonly obj: T,
  ) {}
}

/** The object of a delete notification, tombstone or not. */
export function deletedObject<T>(object: T | DeletedFinalStateUnknown<T>): T {
  return object instanceof DeletedFinalStateUnknown ? object.obj : object;
}

export class Indexer<T extends ApiObject> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** index name -> index value -> keys */
  private readonly indices = new Map<string, Map<string, Set<string>>>();

  constructor(
    readonly keyOf: KeyFunc<T> = metaNamespaceKey,
    indexers: Record<string, IndexFunc<T>> = { [NAMESPACE_INDEX]: namespaceIndexFunc },
  ) {
    this.addIndexers(indexers);
  }

  /** Adds indexes; existing objects are indexed at once. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.indexers.has(name)) throw new Error(`indexer ${JSON.stringify(name)} already exists`);
      this.indexers.set(name, fn);
      this.indices.set(name, new Map());
      for (const [key, object] of this.items) this.index(name, fn, key, object);
    }
  }

  private index(name: string, fn: IndexFunc<T>, key: string, object: T): void {
    const index = this.indices.get(name)!;
    for (const value of new Set(fn(object))) {
      let keys = index.get(value);
      if (!keys) index.set(value, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, object: T): void {
    for (const [name, fn] of this.indexers) {
      const index = this.indices.get(name)!;
      for (const value of fn(object)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }

  /** Adds or replaces the object under its key; returns the previous one. */
  set(object: T): T | undefined {
    const key = this.keyOf(object);
    const old = this.items.get(key);
    if (old) this.unindex(key, old);
    this.items.set(key, object);
    for (const [name, fn] of this.indexers) this.index(name, fn, key, object);
    return old;
  }

  /** Removes the object with this object's key; returns what was stored. */
  delete(object: T): T | undefined {
    return this.deleteKey(this.keyOf(object));
  }

  deleteKey(key: string): T | undefined {
    const old = this.items.get(key);
    if (old) {
      this.unindex(key, old);
      this.items.delete(key);
    }
    return old;
  }

  get(object: T): T | undefined {
    return this.items.get(this.keyOf(object));
  }

  getByKey(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  listKeys(): string[] {
    return [...this.items.keys()];
  }

  get size(): number {
    return this.items.size;
  }

  /** The objects whose index `indexName` holds `value` (e.g. every pod of a namespace). */
  byIndex(indexName: string, value: string): T[] {
    return this.indexKeys(indexName, value).map((key) => this.items.get(key)!);
  }

  indexKeys(indexName: string, value: string): string[] {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`index ${JSON.stringify(indexName)} does not exist`);
    return [...(index.get(value) ?? [])];
  }

  hasIndex(indexName: string): boolean {
    return this.indexers.has(indexName);
  }

  /** Every value index `indexName` has objects under. */
  listIndexValues(indexName: string): string[] {
    return [...(this.indices.get(indexName)?.keys() ?? [])];
  }
}
