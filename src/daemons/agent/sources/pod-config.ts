/**
 * The merger of the agent's pod sources (upstream pkg/kubelet/config/config.go PodConfig /
 * podStorage, incremental notification mode). Each source pushes its complete current set of pods
 * (SET); the merger keeps the last set of each source keyed by UID and tells its listener what
 * changed, in upstream's order: REMOVE, ADD, UPDATE, DELETE, then RECONCILE. The first set of a
 * source that changes nothing still sends an empty ADD, so the listener learns the source is ready.
 *
 * Note that a static pod's UID is a hash of its manifest: editing a manifest file gives a REMOVE
 * of the old UID and an ADD of the new one (the pod is replaced, as upstream replaces it). UPDATE
 * happens for a pod whose UID stays, such as an API pod or a manifest that sets its own UID.
 */
import { isDeepStrictEqual } from 'node:util';
import { klog, type Logger } from '../../../lib/klog.js';
import {
  configMirrorAnnotation,
  configSeenAnnotation,
  configSourceAnnotation,
  podFullName,
  type PodUpdate,
  type PodUpdateListener,
  type ProblemReporter,
  type SourceName,
  type SourcePod,
} from './types.js';

/** Annotations the agent sets itself: never a reason for an update. */
const localAnnotations = () => [configSourceAnnotation(), configMirrorAnnotation(), configSeenAnnotation()];

export interface PodConfigOptions {
  listener: PodUpdateListener;
  /** For `orch.io/config.seen`. */
  now?: () => Date;
  /** Told of pods dropped for a duplicate name (upstream records a FailedValidation event). */
  onProblem?: ProblemReporter;
  logger?: Logger;
}

function withoutLocalAnnotations(annotations: Record<string, string> | undefined): Record<string, string> {
  const rest = { ...annotations };
  for (const key of localAnnotations()) delete rest[key];
  return rest;
}

/** Upstream podsDifferSemantically: what a source can change and the agent must act on. */
export function podsDifferSemantically(existing: SourcePod, ref: SourcePod): boolean {
  const a = existing.metadata;
  const b = ref.metadata;
  return !(
    isDeepStrictEqual(existing.spec, ref.spec) &&
    isDeepStrictEqual(a.labels ?? {}, b.labels ?? {}) &&
    a.deletionTimestamp === b.deletionTimestamp &&
    a.deletionGracePeriodSeconds === b.deletionGracePeriodSeconds &&
    isDeepStrictEqual(withoutLocalAnnotations(a.annotations), withoutLocalAnnotations(b.annotations))
  );
}

type Change = 'update' | 'reconcile' | 'delete' | 'none';

/**
 * Upstream checkAndUpdatePod: folds `ref` into `existing` (in place) and says what kind of change
 * that was. The local annotations of `existing` (first-seen time, source) are kept.
 */
export function checkAndUpdatePod(existing: SourcePod, ref: SourcePod): Change {
  if (!podsDifferSemantically(existing, ref)) {
    // The agent is the source of truth of status: a status-only difference is reconciled.
    if (isDeepStrictEqual(existing.status, ref.status)) return 'none';
    existing.status = ref.status;
    return 'reconcile';
  }
  const annotations: Record<string, string> = { ...ref.metadata.annotations };
  for (const key of localAnnotations()) {
    const kept = existing.metadata.annotations?.[key];
    if (kept !== undefined) annotations[key] = kept;
  }
  existing.spec = ref.spec;
  existing.status = ref.status;
  existing.metadata = {
    ...existing.metadata,
    labels: ref.metadata.labels,
    deletionTimestamp: ref.metadata.deletionTimestamp,
    deletionGracePeriodSeconds: ref.metadata.deletionGracePeriodSeconds,
    generation: ref.metadata.generation,
    annotations,
  };
  return ref.metadata.deletionTimestamp ? 'delete' : 'update';
}

export class PodConfig {
  private readonly bySource = new Map<SourceName, Map<string, SourcePod>>();
  private readonly seen = new Set<SourceName>();
  private readonly log: Logger;

  constructor(private readonly options: PodConfigOptions) {
    this.log = options.logger ?? klog('pod-config.ts');
  }

  /** A source's complete current set of pods (SET): the listener hears what changed. */
  set(source: SourceName, pods: readonly SourcePod[]): void {
    const firstSet = !this.seen.has(source);
    this.seen.add(source);
    const old = this.bySource.get(source) ?? new Map<string, SourcePod>();
    const next = new Map<string, SourcePod>();
    const changes = { ADD: [] as SourcePod[], UPDATE: [] as SourcePod[], DELETE: [] as SourcePod[], REMOVE: [] as SourcePod[], RECONCILE: [] as SourcePod[] };

    for (const incoming of this.withoutDuplicateNames(source, pods)) {
      const ref = structuredClone(incoming);
      ref.metadata.annotations = { ...ref.metadata.annotations, [configSourceAnnotation()]: source };
      const uid = ref.metadata.uid ?? '';
      const existing = old.get(uid);
      if (existing) {
        next.set(uid, existing);
        const change = checkAndUpdatePod(existing, ref);
        if (change === 'update') changes.UPDATE.push(existing);
        else if (change === 'reconcile') changes.RECONCILE.push(existing);
        else if (change === 'delete') changes.DELETE.push(existing);
        continue;
      }
      ref.metadata.annotations[configSeenAnnotation()] = (this.options.now ?? (() => new Date()))().toISOString();
      next.set(uid, ref);
      changes.ADD.push(ref);
    }
    for (const [uid, existing] of old) if (!next.has(uid)) changes.REMOVE.push(existing);
    this.bySource.set(source, next);

    const emit = (op: PodUpdate['op'], list: SourcePod[]) => this.options.listener({ op, source, pods: list.map((p) => structuredClone(p)) });
    if (changes.REMOVE.length > 0) emit('REMOVE', changes.REMOVE);
    if (changes.ADD.length > 0) emit('ADD', changes.ADD);
    if (changes.UPDATE.length > 0) emit('UPDATE', changes.UPDATE);
    if (changes.DELETE.length > 0) emit('DELETE', changes.DELETE);
    if (firstSet && changes.ADD.length + changes.UPDATE.length + changes.DELETE.length === 0) emit('ADD', []);
    if (changes.RECONCILE.length > 0) emit('RECONCILE', changes.RECONCILE);
  }

  /** Upstream filterInvalidPods: a second pod with the same `<name>_<namespace>` in one source is dropped. */
  private withoutDuplicateNames(source: SourceName, pods: readonly SourcePod[]): SourcePod[] {
    const names = new Set<string>();
    return pods.filter((pod) => {
      const name = podFullName(pod);
      if (!names.has(name)) return names.add(name);
      const message = `Error validating pod ${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid ?? ''}) from ${source} due to duplicate pod name "${pod.metadata.name}", ignoring`;
      this.log.info('Pod failed validation due to duplicate pod name, ignoring', 'pod', name, 'source', source);
      this.options.onProblem?.({ source, origin: name, message });
      return false;
    });
  }

  /** True once every source in `sources` has pushed at least one set (upstream SeenAllSources). */
  seenAllSources(sources: Iterable<SourceName>): boolean {
    for (const source of sources) if (!this.seen.has(source)) return false;
    return true;
  }

  /** Copies of the current pods of one source, or of all. */
  pods(source?: SourceName): SourcePod[] {
    const maps = source ? [this.bySource.get(source) ?? new Map()] : [...this.bySource.values()];
    return maps.flatMap((m) => [...m.values()].map((p) => structuredClone(p)));
  }
}
