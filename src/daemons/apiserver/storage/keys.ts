/**
 * Key-range arithmetic shared by the engines and the watch cache. Keys are compared as JavaScript
 * strings; for the ASCII keys the API server writes (`/registry/<resource>/<namespace>/<name>`) that is
 * the same order as the byte order of SQLite's BINARY collation and of etcd.
 */

/** The smallest key greater than every key starting with `prefix` (undefined: no upper bound). */
export function prefixEnd(prefix: string): string | undefined {
  for (let i = prefix.length - 1; i >= 0; i--) {
    const code = prefix.charCodeAt(i);
    if (code < 0xffff) return prefix.slice(0, i) + String.fromCharCode(code + 1);
  }
  return undefined;
}

/** The smallest key greater than `key`. */
export function keyAfter(key: string): string {
  return `${key}\u0000`;
}

/** Where a list starts: after `startAfter` when paging, else at the prefix itself. */
export function rangeStart(prefix: string, startAfter: string | undefined): string {
  return startAfter !== undefined && startAfter >= prefix ? keyAfter(startAfter) : prefix;
}

/** Index of the first element of the sorted `keys` that is >= `key` (binary search). */
export function lowerBound(keys: readonly string[], key: string): number {
  let lo = 0;
  let hi = keys.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keys[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
