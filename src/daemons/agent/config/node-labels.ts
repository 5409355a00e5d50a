/**
 * `--node-labels` rules (upstream ValidateKubeletFlags, with the reserved domain renamed): labels in the
 * reserved `orch.io` namespace are refused unless they begin with an allowed prefix or are one of the
 * allowed names the seed lists; every key must be a qualified name and every value a label value.
 */
import { labelValueErrors, qualifiedNameErrors } from '../../../options/value-labels.js';

export const RESERVED_LABEL_DOMAIN = 'orch.io';

/** The seed: "must begin with an allowed prefix (`agent.<domain>`, `node.<domain>`)". */
export const ALLOWED_NODE_LABEL_PREFIXES: readonly string[] = ['agent.orch.io', 'node.orch.io'];

/** The seed's allowed names, in the seed's order (upstream's sorted list with the domain renamed). */
export const ALLOWED_NODE_LABELS: readonly string[] = [
  'beta.orch.io/arch',
  'beta.orch.io/instance-type',
  'beta.orch.io/os',
  'failure-domain.beta.orch.io/region',
  'failure-domain.beta.orch.io/zone',
  'orch.io/arch',
  'orch.io/hostname',
  'orch.io/os',
  'node.orch.io/instance-type',
  'topology.orch.io/region',
  'topology.orch.io/zone',
];

function namespaceOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

const inDomain = (namespace: string, domain: string) => namespace === domain || namespace.endsWith(`.${domain}`);

/** Whether the key's prefix is `orch.io` or a subdomain of it. */
export function isReservedNodeLabel(key: string): boolean {
  return inDomain(namespaceOf(key), RESERVED_LABEL_DOMAIN);
}

/** Whether the agent may set this key on its own Node (upstream IsKubeletLabel). */
export function isAllowedNodeLabel(key: string): boolean {
  if (!isReservedNodeLabel(key)) return true;
  const namespace = namespaceOf(key);
  return ALLOWED_NODE_LABELS.includes(key) || ALLOWED_NODE_LABEL_PREFIXES.some((prefix) => inDomain(namespace, prefix));
}

/** The error message for a set of labels, or undefined when all are acceptable. */
export function validateNodeLabels(labels: Readonly<Record<string, string>>): string | undefined {
  const unknown = Object.keys(labels).filter((key) => !isAllowedNodeLabel(key)).sort();
  if (unknown.length > 0) {
    return (
      `unknown '${RESERVED_LABEL_DOMAIN}' labels specified with --node-labels: [${unknown.join(' ')}]\n` +
      `--node-labels in the '${RESERVED_LABEL_DOMAIN}' namespace must begin with an allowed prefix ` +
      `(${ALLOWED_NODE_LABEL_PREFIXES.join(', ')}) or be in the specifically allowed set (${ALLOWED_NODE_LABELS.join(', ')})`
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
