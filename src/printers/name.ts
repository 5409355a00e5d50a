/** kubectl's name printer: `<kind>[.<group>]/<name>[ <operation>]`, one line per object. */
import { isPlainObject } from './govalues.js';

export const MISSING_GVK_ERROR = 'missing apiVersion or kind; try GetObjectKind().SetGroupVersionKind() if you know the type';

/** True for objects that carry a list of objects in `items` (kubectl's meta.IsListType). */
export function isListObject(obj: unknown): obj is { items: unknown[] } & Record<string, unknown> {
  return isPlainObject(obj) && Array.isArray(obj.items);
}

export function groupOf(apiVersion: unknown): string {
  if (typeof apiVersion !== 'string') return '';
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** The resource reference alone, e.g. `deployment.apps/web`. */
export function resourceName(obj: Record<string, unknown>): string {
  const kind = typeof obj.kind === 'string' ? obj.kind : '';
  const meta = isPlainObject(obj.metadata) ? obj.metadata : {};
  const name = typeof meta.name === 'string' && meta.name !== '' ? meta.name : '<unknown>';
  if (kind === '') throw new Error(`missing kind for resource with name ${name}`);
  const group = groupOf(obj.apiVersion);
  return group === '' ? `${kind.toLowerCase()}/${name}` : `${kind.toLowerCase()}.${group}/${name}`;
}

/** Prints the object (or each item of a list); `operation` is appended unless short output. */
export function printName(obj: unknown, operation = ''): string {
  if (isListObject(obj)) return obj.items.map((item) => printName(item, operation)).join('');
  if (!isPlainObject(obj) || (!obj.kind && !obj.apiVersion)) throw new Error(MISSING_GVK_ERROR);
  return resourceName(obj) + (operation ? ` ${operation}` : '') + '\n';
}
