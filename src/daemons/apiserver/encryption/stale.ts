/**
 * Which stored values were read with a key that no longer writes (upstream's "stale" transformer
 * result). Upstream's GuaranteedUpdate writes such an object even when the update changes nothing,
 * which is what makes `kubectl get secrets -o json | kubectl replace -f -` re-encrypt with the new
 * first key. The encrypting stores mark keys as they decode them (lists, watch events, gets, under the
 * watch cache); the REST layer's update asks here, since the cache above hands out plain values.
 */
const staleKeys = new Map<string, true | (() => boolean)>();

/**
 * `stale` is a predicate when the answer may change without the value changing: a KMS value turns
 * stale when the plugin's key id moves on, any value when a reloaded configuration puts another
 * provider first, while the cache keeps handing out the value decoded before.
 */
export function markStale(key: string, stale: boolean | (() => boolean)): void {
  if (stale) staleKeys.set(key, stale);
  else staleKeys.delete(key);
}

export function isStale(key: string): boolean {
  if (staleKeys.size === 0) return false;
  const stale = staleKeys.get(key);
  return stale === true || (stale !== undefined && stale());
}
