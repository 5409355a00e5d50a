/**
 * The admission plugins' `watch` (interfaces.ts): a StoreInformer over one resource's key prefix,
 * so a plugin keeps an in-memory view of configuration objects (admission policies and their
 * bindings) instead of reading them on every request.
 */
import type {Store} from '../storage/store.js';
import {resourceKeyPrefix} from '../storage-keys.js';
import {StoreInformer} from '../store-informer.js';
import type {AdmissionPluginContext} from './interfaces.js';
import type {JsonObject} from '../../../patch/types.js';

export function storeWatch(store: Store, keyPrefix: string, onError: (error: Error) => void): NonNullable<AdmissionPluginContext['watch']> {
  return (group, resource, handlers) => {
    const informer = new StoreInformer(
      store,
      new Map([[resourceKeyPrefix(keyPrefix, group, resource), {
        apply: (o: Record<string, unknown>) => handlers.apply(o as JsonObject),
        remove: (o: Record<string, unknown>) => handlers.remove(o as JsonObject),
      }]]),
      onError,
    );
    void informer.start();
    return {
      get synced() {
        return informer.synced;
      },
      stop: () => informer.stop(),
    };
  };
}
