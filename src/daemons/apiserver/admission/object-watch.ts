/**
 * The `watch` of the admission plugins' object access over the store: one StoreInformer per
 * resource at the key prefix the REST layer writes it under, started at once.
 */
import type {Store} from '../storage/store.js';
import {StoreInformer, builtinKeyPrefix} from '../store-informer.js';
import type {JsonObject} from '../../../patch/types.js';
import type {ObjectWatch, ObjectWatchHandlers} from './interfaces.js';

export function storeObjectWatch(store: Store, keyPrefix: string, onError: (error: Error) => void) {
  return (group: string, resource: string, handlers: ObjectWatchHandlers): ObjectWatch => {
    const prefix = builtinKeyPrefix(keyPrefix.replace(/\/+$/, ''), group, resource);
    const informer = new StoreInformer(
      store,
      new Map([[prefix, {apply: (o: Record<string, unknown>) => handlers.apply(o as JsonObject), remove: (o: Record<string, unknown>) => handlers.remove(o as JsonObject)}]]),
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
