/**
 * The shapes of the agent's pod sources (upstream pkg/kubelet/types/pod_update.go): the pod
 * subset the sources read and write, the annotation keys, the source names and the updates the
 * merger hands to its listener.
 */
import { names } from '../../../api/names.js';
import type {OwnerReference} from '../../../api/meta.js';

export type {OwnerReference};

export interface SourcePodMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  [field: string]: unknown;
}

/**
 * A pod as the sources see it: metadata is typed, spec and status are carried as decoded JSON
 * because the sources only default and compare them (the runtime types what it runs).
 */
export interface SourcePod {
  apiVersion?: string;
  kind?: string;
  metadata: SourcePodMeta;
  spec: Record<string, unknown> & { nodeName?: string };
  status?: Record<string, unknown>;
}

/** Where a pod came from; the value of `orch.io/config.source`. */
export type SourceName = 'api' | 'file' | 'http';

export const ALL_SOURCES: readonly SourceName[] = ['file', 'http', 'api'];

/** Upstream kubernetes.io/config.* keys, renamed to the orch.io domain. */
export const configSourceAnnotation = (): string => names().annotations.configSource;
export const configHashAnnotation = (): string => names().annotations.configHash;
export const configSeenAnnotation = (): string => names().annotations.configSeen;
export const configMirrorAnnotation = (): string => names().annotations.mirrorPod;

/**
 * The operations of a PodUpdate (upstream kubetypes.PodOperation). Sources only push SET (their
 * whole current set); the merger turns sets into the others:
 * - ADD: a pod the source did not have before;
 * - UPDATE: a pod whose spec, labels, annotations or deletion fields changed;
 * - DELETE: a pod the source now marks for graceful deletion (deletionTimestamp set);
 * - REMOVE: a pod gone from its source (a deleted manifest file, a pod unbound from the node);
 * - RECONCILE: only the status differs (the agent owns status, so it reconciles it).
 */
export type PodOperation = 'SET' | 'ADD' | 'UPDATE' | 'DELETE' | 'REMOVE' | 'RECONCILE';

export interface PodUpdate {
  op: Exclude<PodOperation, 'SET'>;
  source: SourceName;
  /** Copies: the listener may keep or change them without affecting the merger's state. */
  pods: SourcePod[];
}

export type PodUpdateListener = (update: PodUpdate) => void;

/** A problem a source met and survived (a bad manifest, an unreachable URL): for logs and events. */
export interface SourceProblem {
  source: SourceName;
  /** The file path or URL concerned. */
  origin: string;
  message: string;
}

export type ProblemReporter = (problem: SourceProblem) => void;

/** What a source pushes into: its complete current set of pods (upstream's SET semantics). */
export type SetPods = (source: SourceName, pods: SourcePod[]) => void;

/** `<name>_<namespace>`, upstream's pod full name (unique per node). */
export function podFullName(pod: SourcePod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}`;
}

export function podSource(pod: SourcePod): SourceName | undefined {
  return pod.metadata.annotations?.[configSourceAnnotation()] as SourceName | undefined;
}

/** A pod from a file or a URL (upstream IsStaticPod: any source but the API server). */
export function isStaticPod(pod: SourcePod): boolean {
  const source = podSource(pod);
  return source !== undefined && source !== 'api';
}

/** A pod in the API server that mirrors a static pod (carries the mirror annotation). */
export function isMirrorPod(pod: SourcePod): boolean {
  return pod.metadata.annotations?.[configMirrorAnnotation()] !== undefined;
}
