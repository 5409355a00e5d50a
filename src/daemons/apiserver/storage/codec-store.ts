/**
 * `--storage-media-type`: how objects are encoded in the store, as a store in front of each engine
 * (above encryption at rest, below the watch cache: upstream serializes, then transforms). The
 * layers above always hand over and get back JSON text.
 *
 * - application/json: the JSON text as is.
 * - application/yaml: YAML text.
 * - protobuf (application/vnd.<orch|kubernetes>.protobuf): the `k8s\0` envelope upstream stores, for
 *   the built-in kinds with a protobuf schema here; every other object (custom resources, kinds
 *   without a schema, objects protobuf would not carry exactly) stays JSON, as upstream stores
 *   unregistered types. The store holds text, so the bytes are kept one character per byte.
 *
 * Reading accepts all three whatever the setting, so a store written under one setting stays
 * readable after a restart with another; only writes follow the setting. Custom resources are
 * always JSON (the seed: "some resources ignore it").
 */
import {parse as parseYaml, stringify as stringifyYaml} from 'yaml';
import {decodeProtobufObject, encodeProtobufObject, hasProtobufMagic} from '../../../api/protobuf/index.js';
import {DelegatingStore} from './delegating-store.js';
import type {KeyValue, ListOptions, ListResult, Store, StoreEvent, WatchHandle} from './store.js';

export type StorageEncoding = 'json' | 'yaml' | 'protobuf';

export const STORAGE_MEDIA_TYPES = ['application/json', 'application/yaml', 'application/vnd.orch.protobuf', 'application/vnd.kubernetes.protobuf'];

/** The encoding of a `--storage-media-type` value; a clear error naming the option otherwise. */
export function storageEncoding(mediaType: string | undefined): StorageEncoding {
  if (mediaType === undefined || mediaType === '' || mediaType === 'application/json') return 'json';
  if (mediaType === 'application/yaml') return 'yaml';
  if (mediaType === 'application/vnd.orch.protobuf' || mediaType === 'application/vnd.kubernetes.protobuf') return 'protobuf';
  throw new Error(`--storage-media-type: unsupported media type ${JSON.stringify(mediaType)}: supported values: ${STORAGE_MEDIA_TYPES.join(', ')}`);
}

const OPEN_BRACE = 0x7b;

/** Pure: JSON text -> stored text under `encoding`. */
export function encodeStored(json: string, encoding: StorageEncoding): string {
  if (encoding === 'json' || json.charCodeAt(0) !== OPEN_BRACE) return json;
  const object = JSON.parse(json);
  if (encoding === 'yaml') return stringifyYaml(object);
  const bytes = encodeProtobufObject(object);
  return bytes ? bytes.toString('latin1') : json;
}

/** Pure: stored text in any of the three encodings -> JSON text (anything else is handed on as it is). */
export function decodeStored(stored: string): string {
  if (stored.charCodeAt(0) === OPEN_BRACE) return stored;
  if (stored.startsWith('k8s\u0000')) {
    const bytes = Buffer.from(stored, 'latin1');
    if (hasProtobufMagic(bytes)) return JSON.stringify(decodeProtobufObject(bytes));
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(stored);
  } catch {
    return stored;
  }
  return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? JSON.stringify(parsed) : stored;
}

export class CodecStore extends DelegatingStore {
  constructor(
    inner: Store,
    private readonly encoding: StorageEncoding,
    /** Keys of built-in resources (the only ones the setting applies to). */
    private readonly builtin: (key: string) => boolean,
  ) {
    super(inner);
  }

  private encode(key: string, value: string): string {
    return this.encoding === 'json' || !this.builtin(key) ? value : encodeStored(value, this.encoding);
  }

  private decodeKv(kv: KeyValue): KeyValue {
    return kv.value.charCodeAt(0) === OPEN_BRACE ? kv : {...kv, value: decodeStored(kv.value)};
  }

  async get(key: string): Promise<KeyValue | undefined> {
    const kv = await this.inner.get(key);
    return kv && this.decodeKv(kv);
  }

  async list(prefix: string, options?: ListOptions): Promise<ListResult> {
    const result = await this.inner.list(prefix, options);
    return result.items.every((kv) => kv.value.charCodeAt(0) === OPEN_BRACE) ? result : {...result, items: result.items.map((kv) => this.decodeKv(kv))};
  }

  create(key: string, value: string): Promise<number> {
    return this.inner.create(key, this.encode(key, value));
  }

  update(key: string, value: string, expectedModRevision: number): Promise<number> {
    return this.inner.update(key, this.encode(key, value), expectedModRevision);
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
            ...(event.value !== undefined ? {value: decodeStored(event.value)} : {}),
            ...(event.prevValue !== undefined ? {prevValue: decodeStored(event.prevValue)} : {}),
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

}
