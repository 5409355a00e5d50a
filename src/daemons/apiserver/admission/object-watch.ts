/**
 * The `watch` of the admission plugins' object access over the store: one StoreInformer per
 * resource at the key prefix its registry writes it under, started at once.
 */
import type {Store} from '../storage/store.js';
import {StoreInformer} from '../store-informer.js';
import type {JsonObject} from '../../../patch/types.js';
import type {ObjectWatch, ObjectWatchHandlers} from './interfaces.js';

/** `prefixOf` answers the key prefix (ending in `/`) of every object of a resource. */
export function storeObjectWatch(store: Store, prefixOf: (group: string, resource: string) => string, onError: (error: Error) => void) {
  return (group: string, resource: string, handlers: ObjectWatchHandlers): ObjectWatch => {
    const informer = new StoreInformer(
      store,
      new Map([[prefixOf(group, resource), {
        apply: (o: Record<string, unknown>) => handlers.apply(o as JsonObject),
        remove: (o: Record<string, unknown>) => handlers.remove(o as JsonObject),
        replace: (objects: Record<string, unknown>[]) => handlers.replace(objects as JsonObject[]),
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
