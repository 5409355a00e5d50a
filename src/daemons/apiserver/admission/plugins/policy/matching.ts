/**
 * Whether a request falls within a policy's matchConstraints or a binding's matchResources
 * (upstream's admission/plugin/policy/matching with the webhook predicates it uses):
 * namespaceSelector on the namespace's labels (the namespace itself for Namespace requests; cluster
 * scoped resources always pass), objectSelector on the object's or the old object's labels,
 * excludeResourceRules first, then resourceRules (none: everything), with `matchPolicy:
 * Equivalent` also trying the other served versions of the resource. Pure but for the namespace
 * lookup it is given.
 */
import { labelSelectorString, matchesLabels, parseLabelSelector, type LabelSelectorObject } from '../../../../../api/selectors.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../../../patch/types.js';
import type { AdmissionAttributes, GroupVersionKind, GroupVersionResource } from '../../interfaces.js';
export type { GroupVersionKind, GroupVersionResource } from '../../interfaces.js';


export interface MatchResult {
  matches: boolean;
  /** The resource and kind the request matched as (another version under matchPolicy Equivalent). */
  resource?: GroupVersionResource;
  kind?: GroupVersionKind;
}

export interface MatchEnvironment {
  /** The namespace object of a namespaced request (undefined when it does not exist). */
  namespace(name: string): Promise<JsonObject | undefined>;
  /** The other served versions of a resource, with their kinds (matchPolicy Equivalent). */
  equivalents(resource: GroupVersionResource): Array<GroupVersionResource & { kind: string }>;
}

/** Thrown when a selector cannot be evaluated (the namespace is missing): a configuration error of the policy. */
export class MatchError extends Error {}

const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
const strings = (v: JsonValue | undefined): string[] => list(v).filter((x): x is string => typeof x === 'string');

function labelsOf(object: JsonValue | undefined): Record<string, string> | undefined {
  if (!isJsonObject(object) || !isJsonObject(object.metadata)) return undefined;
  const labels = object.metadata.labels;
  return isJsonObject(labels) ? (labels as Record<string, string>) : {};
}

/** A LabelSelector's requirements; `undefined` or `{}` selects everything. */
function selectorMatches(selector: JsonValue | undefined, labels: Record<string, string> | undefined): boolean {
  if (!isJsonObject(selector)) return true;
  const text = labelSelectorString(selector as LabelSelectorObject);
  if (text === '') return true;
  return matchesLabels(parseLabelSelector(text), labels);
}

const isEmptySelector = (selector: JsonValue | undefined) => !isJsonObject(selector) || labelSelectorString(selector as LabelSelectorObject) === '';

/** One rule (upstream's webhook predicates/rules Matcher) against a resource. */
export function ruleMatches(rule: JsonObject, attributes: Pick<AdmissionAttributes, 'operation' | 'namespace' | 'subresource'>, gvr: GroupVersionResource): boolean {
  const isNamespace = gvr.group === '' && gvr.resource === 'namespaces';
  const scope = typeof rule.scope === 'string' ? rule.scope : '*';
  if (scope === 'Cluster' && attributes.namespace !== '' && !isNamespace) return false;
  if (scope === 'Namespaced' && (isNamespace || attributes.namespace === '')) return false;
  const operations = strings(rule.operations);
  if (!operations.includes('*') && !operations.includes(attributes.operation)) return false;
  const groups = strings(rule.apiGroups);
  if (!groups.includes('*') && !groups.includes(gvr.group)) return false;
  const versions = strings(rule.apiVersions);
  if (!versions.includes('*') && !versions.includes(gvr.version)) return false;
  return strings(rule.resources).some((entry) => {
    const slash = entry.indexOf('/');
    const resource = slash < 0 ? entry : entry.slice(0, slash);
    const subresource = slash < 0 ? '' : entry.slice(slash + 1);
    return (resource === '*' || resource === gvr.resource) && (subresource === '*' || subresource === attributes.subresource);
  });
}

function namedRuleMatches(rule: JsonObject, attributes: AdmissionAttributes, gvr: GroupVersionResource): boolean {
  if (!ruleMatches(rule, attributes, gvr)) return false;
  const names = strings(rule.resourceNames);
  return names.length === 0 || names.includes(attributes.name);
}

function requestResource(attributes: AdmissionAttributes): GroupVersionResource {
  return { group: attributes.resource.group, version: attributes.resource.version, resource: attributes.resource.plural };
}

function requestKind(attributes: AdmissionAttributes): GroupVersionKind {
  return { group: attributes.resource.group, version: attributes.resource.version, kind: attributes.resource.kind };
}

function matchRules(rules: JsonObject[], matchPolicy: string | undefined, attributes: AdmissionAttributes, env: MatchEnvironment): MatchResult {
  const own = requestResource(attributes);
  if (rules.some((rule) => namedRuleMatches(rule, attributes, own))) return { matches: true, resource: own, kind: requestKind(attributes) };
  if (matchPolicy !== 'Equivalent') return { matches: false };
  for (const rule of rules) {
    for (const equivalent of env.equivalents(own)) {
      if (equivalent.version === own.version && equivalent.group === own.group && equivalent.resource === own.resource) continue;
      const gvr = { group: equivalent.group, version: equivalent.version, resource: equivalent.resource };
      if (namedRuleMatches(rule, attributes, gvr)) {
        return { matches: true, resource: gvr, kind: { group: equivalent.group, version: equivalent.version, kind: equivalent.kind } };
      }
    }
  }
  return { matches: false };
}

/**
 * Whether the request matches `matchResources` (a policy's matchConstraints or a binding's
 * matchResources). Selector problems matter only when the rules match, as upstream.
 */
export async function matchesResources(matchResources: JsonValue | undefined, attributes: AdmissionAttributes, env: MatchEnvironment): Promise<MatchResult> {
  const m = isJsonObject(matchResources) ? matchResources : {};
  let namespaceError: MatchError | undefined;
  const isNamespace = attributes.resource.group === '' && attributes.resource.plural === 'namespaces';
  if (!isEmptySelector(m.namespaceSelector) && (attributes.namespace !== '' || isNamespace)) {
    let labels: Record<string, string> | undefined;
    if (isNamespace) labels = labelsOf(attributes.operation === 'DELETE' ? attributes.oldObject : attributes.object) ?? {};
    else {
      const namespace = await env.namespace(attributes.namespace);
      if (!namespace) namespaceError = new MatchError(`namespaces "${attributes.namespace}" not found`);
      else labels = labelsOf(namespace) ?? {};
    }
    if (!namespaceError && !selectorMatches(m.namespaceSelector, labels)) return { matches: false };
  }
  if (!isEmptySelector(m.objectSelector)) {
    const matched = [attributes.object, attributes.oldObject].some((o) => o !== undefined && selectorMatches(m.objectSelector, labelsOf(o)));
    if (!matched) return { matches: false };
  }
  const matchPolicy = typeof m.matchPolicy === 'string' ? m.matchPolicy : undefined;
  const excluded = list(m.excludeResourceRules).filter(isJsonObject) as JsonObject[];
  if (excluded.length && matchRules(excluded, matchPolicy, attributes, env).matches) return { matches: false };
  const rules = list(m.resourceRules).filter(isJsonObject) as JsonObject[];
  const result = rules.length === 0
    ? { matches: true, resource: requestResource(attributes), kind: requestKind(attributes) }
    : matchRules(rules, matchPolicy, attributes, env);
  if (result.matches && namespaceError) throw namespaceError;
  return result;
}
