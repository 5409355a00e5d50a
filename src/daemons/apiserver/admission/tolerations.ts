/**
 * Upstream's tolerations.MergeTolerations and isSuperset (pkg/util/tolerations): two lists joined,
 * keeping only the broadest of tolerations that cover one another. Pure; shared by the plugins
 * that add tolerations (RuntimeClass, PodTolerationRestriction, ...).
 */
import {isJsonObject, jsonEqual, type JsonObject} from '../../../patch/types.js';

const text = (t: JsonObject, key: string) => (typeof t[key] === 'string' ? (t[key] as string) : '');

/** Whether `ss` tolerates everything `t` tolerates. */
export function isSuperset(ss: JsonObject, t: JsonObject): boolean {
  if (jsonEqual(t, ss)) return true;
  // An empty key with Exists matches every key and value.
  if (text(t, 'key') !== text(ss, 'key') && (text(ss, 'key') !== '' || text(ss, 'operator') !== 'Exists')) return false;
  // An empty effect matches every effect.
  if (text(t, 'effect') !== text(ss, 'effect') && text(ss, 'effect') !== '') return false;
  if (text(ss, 'effect') === 'NoExecute' && typeof ss.tolerationSeconds === 'number') {
    if (typeof t.tolerationSeconds !== 'number' || t.tolerationSeconds > ss.tolerationSeconds) return false;
  }
  switch (text(ss, 'operator')) {
    case 'Equal':
    case '':
      return text(t, 'operator') === 'Equal' && text(t, 'value') === text(ss, 'value');
    case 'Exists':
      return true;
    default:
      return false;
  }
}

export function mergeTolerations(first: readonly unknown[], second: readonly unknown[]): JsonObject[] {
  const all = [...first, ...second].filter(isJsonObject);
  const merged: JsonObject[] = [];
  all.forEach((t, i) => {
    if (merged.some((kept) => isSuperset(kept, t))) return;
    // Of equal tolerations the first stays; one covered by a later, broader one goes.
    if (all.slice(i + 1).some((later) => !jsonEqual(t, later) && isSuperset(later, t))) return;
    merged.push(t);
  });
  return merged;
}
