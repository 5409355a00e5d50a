/**
 * Which stored values were read with a key that no longer writes (upstream's "stale" transformer
 * result). Upstream's GuaranteedUpdate writes such an object even when the update changes nothing,
 * which is what makes `kubectl get secrets -o json | kubectl replace -f -` re-encrypt with the new
 * first key. The encrypting stores mark keys as they decode them (lists, watch events, gets, under the
 * watch cache); the REST layer's update asks here, since the cache above hands out plain values.
 */
const staleKeys = new Set<string>();

export function markStale(key: string, stale: boolean): void {
  if (stale) staleKeys.add(key);
  else staleKeys.delete(key);
}

export function isStale(key: string): boolean {
  return staleKeys.size > 0 && staleKeys.has(key);
}
