/**
 * Taint-based eviction (upstream pkg/controller/tainteviction): pods on a node with NoExecute
 * taints are deleted unless they tolerate every one of them; a toleration with tolerationSeconds
 * delays the deletion by the smallest such value, one without tolerates forever.
 *
 * Upstream reacts to node and pod events; here the controller calls reconcileNode() on each pass
 * for every node with its current NoExecute taints and pods, which gives the same decisions at the
 * pass's granularity. Time is passed in (ms) so this is pure bookkeeping.
 */
import type {Pod, Taint, Toleration} from './types.js';
import {toleratesTaint} from '../../../api/meta.js';

export {toleratesTaint} from '../../../api/meta.js';

/** Upstream's GetMatchingTolerations: for each taint the first toleration of it, or undefined if one is not tolerated. */
export function matchingTolerations(taints: readonly Taint[], tolerations: readonly Toleration[]): Toleration[] | undefined {
  const used: Toleration[] = [];
  for (const taint of taints) {
    const match = tolerations.find((t) => toleratesTaint(t, taint));
    if (!match) return undefined;
    used.push(match);
  }
  return used;
}

/**
 * Upstream's getMinTolerationTime, in ms: 0 (delete now) for no tolerations or any
 * tolerationSeconds <= 0; -1 (forever) when none sets tolerationSeconds; else the smallest.
 */
export function minTolerationMs(tolerations: readonly Toleration[]): number {
  if (tolerations.length === 0) return 0;
  let min = Infinity;
  for (const toleration of tolerations) {
    const seconds = toleration.tolerationSeconds;
    if (seconds === undefined || seconds === null) continue;
    if (seconds <= 0) return 0;
    min = Math.min(min, seconds);
  }
  return min === Infinity ? -1 : min * 1000;
}

export interface PodRef {
  namespace: string;
  name: string;
  node: string;
}

interface ScheduledEviction extends PodRef {
  createdAt: number;
  fireAt: number;
}

export interface NodeReconcileResult {
  /** Pods whose scheduled deletion was withdrawn (event `Cancelling deletion of Pod ns/name`). */
  cancelled: PodRef[];
  /** Pods newly scheduled, with their deletion time. */
  scheduled: Array<PodRef & {fireAt: number}>;
}

const podKey = (namespace: string, name: string) => `${namespace}/${name}`;

export class TaintEvictionScheduler {
  private readonly scheduled = new Map<string, ScheduledEviction>();

  /**
   * Re-evaluates the pods bound to `node` given its NoExecute taints at `now`. Pods of this node
   * that are no longer listed lose their scheduled deletion silently (they are gone).
   */
  reconcileNode(node: string, noExecuteTaints: readonly Taint[], pods: readonly Pod[], now: number): NodeReconcileResult {
    const result: NodeReconcileResult = {cancelled: [], scheduled: []};
    const listed = new Set<string>();
    for (const pod of pods) {
      const ref: PodRef = {namespace: pod.metadata.namespace ?? 'default', name: pod.metadata.name, node};
      const key = podKey(ref.namespace, ref.name);
      listed.add(key);
      const existing = this.scheduled.get(key);
      const cancel = () => {
        if (this.scheduled.delete(key)) result.cancelled.push(ref);
      };
      const schedule = (createdAt: number, fireAt: number) => {
        this.scheduled.set(key, {...ref, createdAt, fireAt});
        result.scheduled.push({...ref, fireAt});
      };
      if (noExecuteTaints.length === 0) {
        cancel();
        continue;
      }
      const used = matchingTolerations(noExecuteTaints, pod.spec?.tolerations ?? []);
      if (!used) {
        // Not tolerated: delete now, replacing any later deletion.
        if (existing && existing.fireAt <= now) continue;
        cancel();
        schedule(now, now);
        continue;
      }
      const delay = minTolerationMs(used);
      if (delay < 0) {
        cancel();
        continue;
      }
      // A deletion already scheduled keeps its original time; re-evaluations never move it.
      if (existing) continue;
      schedule(now, now + delay);
    }
    for (const [key, entry] of this.scheduled) {
      if (entry.node === node && !listed.has(key)) this.scheduled.delete(key);
    }
    return result;
  }

  /** Forgets every pod of a node that is gone. */
  forgetNode(node: string): void {
    for (const [key, entry] of this.scheduled) if (entry.node === node) this.scheduled.delete(key);
  }

  /** Scheduled deletions due at `now`, earliest first; they stay scheduled until done() or a cancel. */
  due(now: number): PodRef[] {
    return [...this.scheduled.values()]
      .filter((entry) => entry.fireAt <= now)
      .sort((a, b) => a.fireAt - b.fireAt)
      .map(({namespace, name, node}) => ({namespace, name, node}));
  }

  /** The deletion of this pod was carried out. */
  done(ref: PodRef): void {
    this.scheduled.delete(podKey(ref.namespace, ref.name));
  }

  /** Pods of `node` waiting for their deletion time (or a retry). */
  pendingOn(node: string): number {
    let count = 0;
    for (const entry of this.scheduled.values()) if (entry.node === node) count++;
    return count;
  }

  /** When this pod's deletion is scheduled, if it is. */
  fireTime(namespace: string, name: string): number | undefined {
    return this.scheduled.get(podKey(namespace, name))?.fireAt;
  }
}
