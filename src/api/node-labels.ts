/**
 * `--node-labels` rules (upstream ValidateKubeletFlags, with the names of the active name set): labels
 * in the reserved domains (`orch.io` with orch's names; `kubernetes.io` and `k8s.io` with upstream's)
 * are refused unless they begin with an allowed prefix or are one of the allowed names the seed lists;
 * every key must be a qualified name and every value a label value.
 */
import { labelValueErrors, qualifiedNameErrors } from '../options/value-labels.js';
import { names, type NameSet } from './names.js';

/** The reserved label domains: the name set's label domain, and upstream's `k8s.io` too. */
export function reservedLabelDomains(n: NameSet = names()): readonly string[] {
  return n.id === 'kubernetes' ? [n.labelDomain, n.domain] : [n.labelDomain];
}

/** The seed: "must begin with an allowed prefix (`agent.<domain>`, `node.<domain>`)". */
export function allowedNodeLabelPrefixes(n: NameSet = names()): readonly string[] {
  return n.labels.nodeLabelAllowedPrefixes;
}

/** The seed's allowed names, in the seed's order (upstream's sorted list with the domain renamed). */
export function allowedNodeLabels(n: NameSet = names()): readonly string[] {
  const l = n.labels;
  return [l.betaArch, l.betaInstanceType, l.betaOs, l.failureDomainRegion, l.failureDomainZone, l.arch, l.hostname, l.os, l.instanceType, l.region, l.zone];
}

function namespaceOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

const inDomain = (namespace: string, domain: string) => namespace === domain || namespace.endsWith(`.${domain}`);

/** Whether the key's prefix is a reserved domain (`orch.io`) or a subdomain of it. */
export function isReservedNodeLabel(key: string, n: NameSet = names()): boolean {
  return reservedLabelDomains(n).some((domain) => inDomain(namespaceOf(key), domain));
}

/** Whether the agent may set this key on its own Node (upstream IsKubeletLabel). */
export function isAllowedNodeLabel(key: string, n: NameSet = names()): boolean {
  if (!isReservedNodeLabel(key, n)) return true;
  const namespace = namespaceOf(key);
  return allowedNodeLabels(n).includes(key) || allowedNodeLabelPrefixes(n).some((prefix) => inDomain(namespace, prefix));
}

/** The error message for a set of labels, or undefined when all are acceptable. */
export function validateNodeLabels(labels: Readonly<Record<string, string>>, n: NameSet = names()): string | undefined {
  const unknown = Object.keys(labels).filter((key) => !isAllowedNodeLabel(key, n)).sort();
  if (unknown.length > 0) {
    const domain = n.labelDomain;
    return (
      `unknown '${domain}' labels specified with --node-labels: [${unknown.join(' ')}]\n` +
      `--node-labels in the '${domain}' namespace must begin with an allowed prefix ` +
      `(${allowedNodeLabelPrefixes(n).join(', ')}) or be in the specifically allowed set (${allowedNodeLabels(n).join(', ')})`
    );
  }
  const invalid: string[] = [];
  for (const [key, value] of Object.entries(labels)) {
    const keyErrors = qualifiedNameErrors(key);
    if (keyErrors.length > 0) invalid.push(`'${key}' - ${keyErrors.join(', ')}`);
    const valueErrors = labelValueErrors(value);
    if (valueErrors.length > 0) invalid.push(`'${value}' - ${valueErrors.join(', ')}`);
  }
  return invalid.length > 0 ? `invalid node labels: ${invalid.join('; ')}` : undefined;
}
