/**
 * A registry's own check of who may write an object, before admission, as upstream's
 * policy-based storage wraps the RBAC registries: it refuses with an ApiError (403) a write the
 * request was authorized to make but that would grant more than the user holds.
 */
import type {JsonObject} from '../../../patch/types.js';
import type {WriteContext} from './registry-store.js';

export interface WriteGuard {
  checkCreate(ctx: WriteContext, namespace: string, object: JsonObject): Promise<void>;
  /** Called for writes of the main resource only (not its subresources). */
  checkUpdate(ctx: WriteContext, namespace: string, object: JsonObject, old: JsonObject): Promise<void>;
}
