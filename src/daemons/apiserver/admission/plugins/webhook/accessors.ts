/**
 * A webhook of a MutatingWebhookConfiguration or ValidatingWebhookConfiguration as the dispatcher
 * uses it (upstream's webhook.WebhookAccessor): fields defaulted as the API defaults them, label
 * selectors parsed and match conditions compiled once per configuration version (not per request),
 * and an id `<configuration>/<webhook>/<index>` that reinvocation remembers. Pure.
 */
import {labelSelectorString, parseLabelSelector, type LabelRequirement, type LabelSelectorObject} from '../../../../../api/selectors.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../../../patch/types.js';
import {compileMatchConditions, type MatchConditionMatcher} from './match-conditions.js';
import type {WebhookRule} from './rules.js';

export interface WebhookClientConfig {
  url?: string;
  service?: {namespace: string; name: string; path?: string; port: number};
  /** PEM bundle, base64 (the field's wire form). */
  caBundle?: string;
}

export type FailurePolicy = 'Fail' | 'Ignore';

export interface WebhookAccessor {
  uid: string;
  configurationName: string;
  name: string;
  mutating: boolean;
  clientConfig: WebhookClientConfig;
  rules: WebhookRule[];
  failurePolicy: FailurePolicy;
  matchPolicy: 'Exact' | 'Equivalent';
  /** Parsed selectors, or the parse error (reported when a request would use it, as upstream). */
  namespaceSelector: LabelRequirement[] | Error;
  objectSelector: LabelRequirement[] | Error;
  sideEffects?: string;
  timeoutSeconds: number;
  admissionReviewVersions: string[];
  reinvocationPolicy: 'Never' | 'IfNeeded';
  matchConditions?: MatchConditionMatcher;
}

const strings = (v: JsonValue | undefined): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);
const objects = (v: JsonValue | undefined): JsonObject[] => (Array.isArray(v) ? v.filter(isJsonObject) : []);
const str = (v: JsonValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

function selector(v: JsonValue | undefined): LabelRequirement[] | Error {
  if (!isJsonObject(v)) return [];
  try {
    return parseLabelSelector(labelSelectorString(v as LabelSelectorObject));
  } catch (error) {
    return error as Error;
  }
}

function clientConfig(v: JsonValue | undefined): WebhookClientConfig {
  const c = isJsonObject(v) ? v : {};
  const out: WebhookClientConfig = {};
  if (typeof c.url === 'string') out.url = c.url;
  if (isJsonObject(c.service)) {
    const s = c.service;
    out.service = {namespace: str(s.namespace) ?? '', name: str(s.name) ?? '', port: typeof s.port === 'number' ? s.port : 443};
    if (typeof s.path === 'string') out.service.path = s.path;
  }
  if (typeof c.caBundle === 'string' && c.caBundle) out.caBundle = c.caBundle;
  return out;
}

/** The webhooks of one configuration object, in their order. */
export function webhookAccessors(configuration: JsonObject, mutating: boolean): WebhookAccessor[] {
  const metadata = isJsonObject(configuration.metadata) ? configuration.metadata : {};
  const configurationName = str(metadata.name) ?? '';
  return objects(configuration.webhooks).map((hook, index) => {
    const name = str(hook.name) ?? '';
    const failurePolicy: FailurePolicy = hook.failurePolicy === 'Ignore' ? 'Ignore' : 'Fail';
    const conditions = objects(hook.matchConditions).map((c) => ({name: str(c.name) ?? '', expression: str(c.expression) ?? ''}));
    return {
      uid: `${configurationName}/${name}/${index}`,
      configurationName,
      name,
      mutating,
      clientConfig: clientConfig(hook.clientConfig),
      rules: objects(hook.rules).map((r) => ({
        operations: strings(r.operations),
        apiGroups: strings(r.apiGroups),
        apiVersions: strings(r.apiVersions),
        resources: strings(r.resources),
        scope: str(r.scope) ?? '*',
      })),
      failurePolicy,
      matchPolicy: hook.matchPolicy === 'Exact' ? 'Exact' : 'Equivalent',
      namespaceSelector: selector(hook.namespaceSelector),
      objectSelector: selector(hook.objectSelector),
      sideEffects: str(hook.sideEffects),
      timeoutSeconds: typeof hook.timeoutSeconds === 'number' ? hook.timeoutSeconds : 10,
      admissionReviewVersions: strings(hook.admissionReviewVersions),
      reinvocationPolicy: hook.reinvocationPolicy === 'IfNeeded' ? 'IfNeeded' : 'Never',
      matchConditions: conditions.length > 0 ? compileMatchConditions(conditions, failurePolicy) : undefined,
    };
  });
}
