/**
 * The API's validation of MutatingWebhookConfiguration and ValidatingWebhookConfiguration objects
 * (upstream's pkg/apis/admissionregistration/validation), so a configuration the plugins could not
 * use is refused at creation with a 422 naming the field: unique webhook names, known policies,
 * side effects None or NoneOnDryRun, a timeout of 1 to 30 s, exactly one of url (https, no query or
 * fragment) and service, rules with known operations, review versions we speak, and match
 * conditions that compile. Pure.
 */
import {field, type FieldError} from '../../../../../api/status.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../../../patch/types.js';
import {compileMatchConditions} from './match-conditions.js';
import {REVIEW_VERSIONS} from './review.js';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const MAX_MATCH_CONDITIONS = 64;

const objects = (v: JsonValue | undefined): JsonObject[] => (Array.isArray(v) ? v.filter(isJsonObject) : []);
const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);

function validateUrl(path: string, text: string): FieldError[] {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return [field.invalid(path, text, 'host must be specified')];
  }
  const errors: FieldError[] = [];
  if (url.protocol !== 'https:') errors.push(field.invalid(path, text, "'https' is the only allowed URL scheme"));
  if (!url.hostname) errors.push(field.invalid(path, text, 'host must be specified'));
  if (url.username || url.password) errors.push(field.invalid(path, text, 'user information is not permitted in the URL'));
  if (url.hash || text.includes('#')) errors.push(field.invalid(path, text, 'fragments are not permitted in the URL'));
  if (url.search || text.includes('?')) errors.push(field.invalid(path, text, 'query parameters are not permitted in the URL'));
  return errors;
}

function validateClientConfig(path: string, c: JsonValue | undefined): FieldError[] {
  if (!isJsonObject(c) || (c.url === undefined) === (c.service === undefined)) return [field.required(path, 'exactly one of url or service is required')];
  if (typeof c.url === 'string') return validateUrl(`${path}.url`, c.url);
  const s = isJsonObject(c.service) ? c.service : {};
  const errors: FieldError[] = [];
  if (!s.name) errors.push(field.required(`${path}.service.name`, 'service name is required'));
  if (!s.namespace) errors.push(field.required(`${path}.service.namespace`, 'service namespace is required'));
  if (s.port !== undefined && (typeof s.port !== 'number' || s.port < 1 || s.port > 65535)) {
    errors.push(field.invalid(`${path}.service.port`, s.port, 'port is not valid: must be between 1 and 65535, inclusive'));
  }
  if (typeof s.path === 'string' && !s.path.startsWith('/')) errors.push(field.invalid(`${path}.service.path`, s.path, "must start with a '/'"));
  return errors;
}

function validateRule(path: string, rule: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const operations = list(rule.operations);
  if (operations.length === 0) errors.push(field.required(`${path}.operations`));
  if (operations.length > 1 && operations.includes('*')) errors.push(field.invalid(`${path}.operations`, operations, "if '*' is present, must not specify other operations"));
  operations.forEach((op, i) => {
    if (!OPERATIONS.includes(String(op))) errors.push(field.notSupported(`${path}.operations[${i}]`, op, OPERATIONS));
  });
  if (list(rule.apiGroups).length === 0) errors.push(field.required(`${path}.apiGroups`));
  if (list(rule.apiVersions).length === 0) errors.push(field.required(`${path}.apiVersions`));
  if (list(rule.resources).length === 0) errors.push(field.required(`${path}.resources`));
  if (rule.scope !== undefined && !SCOPES.includes(String(rule.scope))) errors.push(field.notSupported(`${path}.scope`, rule.scope, SCOPES));
  return errors;
}

function validateMatchConditions(path: string, conditions: JsonObject[]): FieldError[] {
  const errors: FieldError[] = [];
  if (conditions.length > MAX_MATCH_CONDITIONS) errors.push(field.tooLong(path, `must have at most ${MAX_MATCH_CONDITIONS} items`));
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const name = typeof c.name === 'string' ? c.name : '';
    if (!name) errors.push(field.required(`${path}[${i}].name`));
    else if (seen.has(name)) errors.push(field.duplicate(`${path}[${i}].name`, name));
    seen.add(name);
    const expression = typeof c.expression === 'string' ? c.expression : '';
    if (!expression) {
      errors.push(field.required(`${path}[${i}].expression`));
      return;
    }
    // Compiled alone with Fail: a compile error surfaces as the matcher's error.
    const result = compileMatchConditions([{name, expression}], 'Fail')({request: {}});
    if (result.error?.startsWith('compilation error: ')) {
      errors.push(field.invalid(`${path}[${i}].expression`, expression, `compilation failed: ${result.error.slice('compilation error: '.length)}`));
    }
  });
  return errors;
}

export function validateWebhookConfiguration(o: JsonObject, mutating: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  objects(o.webhooks).forEach((hook, i) => {
    const path = `webhooks[${i}]`;
    const name = typeof hook.name === 'string' ? hook.name : '';
    if (!name) errors.push(field.required(`${path}.name`));
    else if (name.split('.').length < 3) errors.push(field.invalid(`${path}.name`, name, 'should be a domain with at least three segments separated by dots'));
    else if (names.has(name)) errors.push(field.duplicate(`${path}.name`, name));
    names.add(name);
    objects(hook.rules).forEach((rule, r) => errors.push(...validateRule(`${path}.rules[${r}]`, rule)));
    if (hook.failurePolicy !== undefined && !['Fail', 'Ignore'].includes(String(hook.failurePolicy))) errors.push(field.notSupported(`${path}.failurePolicy`, hook.failurePolicy, ['Fail', 'Ignore']));
    if (hook.matchPolicy !== undefined && !['Equivalent', 'Exact'].includes(String(hook.matchPolicy))) errors.push(field.notSupported(`${path}.matchPolicy`, hook.matchPolicy, ['Equivalent', 'Exact']));
    if (hook.sideEffects === undefined) errors.push(field.required(`${path}.sideEffects`, 'must specify one of None, NoneOnDryRun'));
    else if (!['None', 'NoneOnDryRun'].includes(String(hook.sideEffects))) errors.push(field.notSupported(`${path}.sideEffects`, hook.sideEffects, ['None', 'NoneOnDryRun']));
    if (hook.timeoutSeconds !== undefined && (typeof hook.timeoutSeconds !== 'number' || hook.timeoutSeconds < 1 || hook.timeoutSeconds > 30)) {
      errors.push(field.invalid(`${path}.timeoutSeconds`, hook.timeoutSeconds, 'the timeout value must be between 1 and 30 seconds'));
    }
    if (mutating && hook.reinvocationPolicy !== undefined && !['IfNeeded', 'Never'].includes(String(hook.reinvocationPolicy))) {
      errors.push(field.notSupported(`${path}.reinvocationPolicy`, hook.reinvocationPolicy, ['IfNeeded', 'Never']));
    }
    errors.push(...validateClientConfig(`${path}.clientConfig`, hook.clientConfig));
    const versions = list(hook.admissionReviewVersions);
    if (versions.length === 0) errors.push(field.required(`${path}.admissionReviewVersions`, `must specify one of ${REVIEW_VERSIONS.join(', ')}`));
    else if (!versions.some((v) => (REVIEW_VERSIONS as readonly JsonValue[]).includes(v))) {
      errors.push(field.invalid(`${path}.admissionReviewVersions`, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
    }
    errors.push(...validateMatchConditions(`${path}.matchConditions`, objects(hook.matchConditions)));
  });
  return errors;
}
