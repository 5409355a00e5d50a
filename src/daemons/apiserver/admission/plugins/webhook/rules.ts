/**
 * Which requests a webhook's rules select (upstream's admission/plugin/webhook/predicates/rules):
 * a rule matches when its scope, operations, API groups, versions and resources all match.
 * Resources are `<resource>` (the main resource only), `<resource>/<subresource>`, `<resource>/*`
 * (its subresources and, as upstream's matcher has it, the resource itself), `*` (every main
 * resource) and `* / *` (everything, subresources included). Pure.
 */
import {names} from '../../../../../api/names.js';

export interface WebhookRule {
  operations: readonly string[];
  apiGroups: readonly string[];
  apiVersions: readonly string[];
  resources: readonly string[];
  /** `*` (default), `Cluster` or `Namespaced`. */
  scope: string;
}

/** The request as the rules see it: the resource (possibly an equivalent one) and where it lives. */
export interface RuleAttributes {
  operation: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
}

const exactOrWildcard = (items: readonly string[], requested: string) => items.some((item) => item === '*' || item === requested);

function splitResource(text: string): [string, string] {
  const slash = text.indexOf('/');
  return slash < 0 ? [text, ''] : [text.slice(0, slash), text.slice(slash + 1)];
}

/** A Namespace is cluster-scoped although its requests carry its own name as their namespace. */
const isNamespaceResource = (a: RuleAttributes) => a.group === '' && a.version === 'v1' && a.resource === 'namespaces';

function scopeMatches(scope: string, a: RuleAttributes): boolean {
  switch (scope || '*') {
    case '*':
      return true;
    case 'Namespaced':
      return !isNamespaceResource(a) && a.namespace !== '';
    case 'Cluster':
      return isNamespaceResource(a) || a.namespace === '';
    default:
      return false;
  }
}

function resourceMatches(resources: readonly string[], a: RuleAttributes): boolean {
  return resources.some((text) => {
    const [resource, subresource] = splitResource(text);
    return (resource === '*' || resource === a.resource) && (subresource === '*' || subresource === a.subresource);
  });
}

export function ruleMatches(rule: WebhookRule, a: RuleAttributes): boolean {
  return (
    scopeMatches(rule.scope, a) &&
    exactOrWildcard(rule.operations, a.operation) &&
    exactOrWildcard(rule.apiGroups, a.group) &&
    exactOrWildcard(rule.apiVersions, a.version) &&
    resourceMatches(rule.resources, a)
  );
}

const EXEMPT_KINDS = new Set(['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);

/**
 * Writes of webhook configurations (and validating policies) never go to webhooks: a broken
 * webhook could otherwise lock out its own repair.
 */
export function isExemptConfigurationKind(group: string, kind: string): boolean {
  return group === names().groups.admissionregistration && EXEMPT_KINDS.has(kind);
}
