/**
 * The Node object the agent registers (upstream kubelet initialNode): its name, the well-known labels
 * it sets itself plus --node-labels, --register-with-taints, --provider-id, and a first status.
 */
import { names } from '../../../api/names.js';
import { goArch } from './machine.js';
import { computeNodeStatus, type StatusComputation, type StatusInput } from './status.js';
import type { NodeObject } from './types.js';

export const labelHostname = (): string => names().labels.hostname;
export const labelOs = (): string => names().labels.os;
export const labelArch = (): string => names().labels.arch;
/** The labels the agent owns and puts back on an existing Node (upstream's updateDefaultLabels, in the active names). */
export function defaultLabels(): readonly string[] {
  const l = names().labels;
  return [l.hostname, l.zone, l.region, l.failureDomainZone, l.failureDomainRegion, l.instanceType, l.betaInstanceType, l.os, l.arch, l.betaOs, l.betaArch];
}

/** Upstream's GetHostname: --hostname-override when given, else the system's host name; trimmed, lowercased. */
export function resolveNodeName(hostnameOverride: string | undefined, systemHostname: string): string {
  const name = (hostnameOverride?.trim() ? hostnameOverride : systemHostname).trim().toLowerCase();
  if (!name) throw new Error('empty hostname is invalid');
  return name;
}

/** The registration labels: the agent's own, then --node-labels (which win, as upstream logs and allows). */
export function registrationLabels(nodeName: string, nodeLabels: Readonly<Record<string, string>> | undefined, arch = goArch()): Record<string, string> {
  return { [labelHostname()]: nodeName, [labelOs()]: 'linux', [labelArch()]: arch, ...nodeLabels };
}

export type InitialNodeInput = StatusInput;

/** The Node to POST, with its first status (upstream registers with status set). */
export function initialNode(input: InitialNodeInput): StatusComputation {
  const { settings, nodeName } = input;
  const node: NodeObject = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: nodeName, labels: registrationLabels(nodeName, settings.nodeLabels, input.arch) },
    spec: {},
  };
  if (settings.registerWithTaints && settings.registerWithTaints.length > 0) {
    node.spec.taints = settings.registerWithTaints.map((t) => ({ key: t.key, ...(t.value ? { value: t.value } : {}), effect: t.effect }));
  }
  if (settings.providerID) node.spec.providerID = settings.providerID;
  return computeNodeStatus(node, input);
}

/**
 * Upstream's reconciliation of a Node that already exists at registration: the agent's own labels are
 * put back to the values it would register with (labels given an empty value are removed). User labels
 * from --node-labels, taints and the spec are registration-time only and not touched, as upstream.
 * Returns the labels patch, or undefined when nothing differs.
 */
export function defaultLabelsPatch(wanted: NodeObject, existing: NodeObject): Record<string, string | null> | undefined {
  const patch: Record<string, string | null> = {};
  const current = existing.metadata.labels ?? {};
  for (const key of defaultLabels()) {
    const value = wanted.metadata.labels?.[key];
    if (value === undefined) continue;
    if (value === '') {
      if (key in current) patch[key] = null;
    } else if (current[key] !== value) {
      patch[key] = value;
    }
  }
  return Object.keys(patch).length > 0 ? patch : undefined;
}
