/**
 * The live pod lists of the PVC protection controller, shared between claims as upstream's "lazy
 * live pod list" is (one list per namespace for the claims processed together), so deleting a
 * hundred claims of a namespace costs one list of its pods, not a hundred.
 *
 * A list may answer for a claim only if it was taken after the claim's latest event was seen: an
 * older list could miss a pod created before the claim was marked for deletion, which the agent
 * may have started. Pods created after the mark cannot start (the agent refuses a claim being
 * deleted), so a newer list is safe. A namespace's list is dropped when one of its pods may have
 * freed claims (deleted, finished): a claim queued again for that must not read the pod in an older
 * list. All are dropped when the queue has drained (`clear`).
 */
export class LivePodLists<P> {
  /** Orders claim events and list starts. */
  private sequence = 0;
  private readonly seen = new Map<string, number>();
  private readonly lists = new Map<string, {takenAt: number; pods: Promise<P[]>}>();

  constructor(private readonly list: (namespace: string) => Promise<P[]>) {}

  /** A claim event was seen (call before the claim is queued). */
  observed(claimKey: string): void {
    this.seen.set(claimKey, ++this.sequence);
  }

  /** The claim is gone from the cache. */
  forget(claimKey: string): void {
    this.seen.delete(claimKey);
  }

  /** A pod of `namespace` went or finished: its list is stale for the claims this frees. */
  podsChanged(namespace: string): void {
    this.lists.delete(namespace);
  }

  /** The pods of `namespace`, from a list taken after the claim's latest event, else a new one. */
  pods(namespace: string, claimKey: string): Promise<P[]> {
    const current = this.lists.get(namespace);
    if (current && current.takenAt > (this.seen.get(claimKey) ?? Infinity)) return current.pods;
    const entry = {takenAt: ++this.sequence, pods: this.list(namespace)};
    this.lists.set(namespace, entry);
    // A failed list is not reused: the next claim asks again.
    entry.pods.catch(() => this.lists.get(namespace) === entry && this.lists.delete(namespace));
    return entry.pods;
  }

  clear(): void {
    this.lists.clear();
  }
}
