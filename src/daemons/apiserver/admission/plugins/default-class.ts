/**
 * The default class among StorageClasses or IngressClasses, as upstream's GetDefaultClass: of those
 * annotated as default, the newest (creationTimestamp), then the first by name.
 */
import type {JsonObject} from '../../../../patch/types.js';
import {stringAt, valueAt} from '../../rest/objects.js';

export function annotationOf(object: JsonObject, key: string): string | undefined {
  const value = valueAt(object, 'metadata', 'annotations', key);
  return typeof value === 'string' ? value : undefined;
}

export function newestDefault(classes: readonly JsonObject[], isDefault: (c: JsonObject) => boolean): JsonObject | undefined {
  const created = (c: JsonObject) => Date.parse(stringAt(c, 'metadata', 'creationTimestamp') ?? '') || 0;
  const name = (c: JsonObject) => stringAt(c, 'metadata', 'name') ?? '';
  return classes
    .filter(isDefault)
    .sort((a, b) => created(b) - created(a) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0))[0];
}
