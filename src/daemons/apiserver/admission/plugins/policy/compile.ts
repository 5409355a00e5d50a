/**
 * A ValidatingAdmissionPolicy's or MutatingAdmissionPolicy's expressions compiled (upstream's
 * compilePolicy): matchConditions and validations must be bools, messageExpression a string,
 * auditAnnotations' valueExpression a string or null; `params` is declared when the policy has
 * a paramKind, `authorizer` where upstream declares it (not in messageExpression nor
 * auditAnnotations), `variables` everywhere. The same compilation gives the
 * API's validation errors (a policy whose expression does not compile is refused at create, as
 * upstream's validation does) and the plugin's evaluators. Pure.
 */
import { compileAdmissionExpression, type AdmissionDeclarations, type CompiledExpression } from '../../../../../api/cel/admission.js';
import { field, type FieldError } from '../../../../../api/status.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../../../../../patch/types.js';

export interface NamedExpression {
  name: string;
  compiled: CompiledExpression;
}

export interface CompiledValidation {
  expression: CompiledExpression;
  message?: string;
  messageExpression?: CompiledExpression;
  reason?: string;
}

export interface CompiledAuditAnnotation {
  key: string;
  valueExpression: CompiledExpression;
}

export interface CompiledMutation {
  patchType: string;
  expression: CompiledExpression;
}

export interface CompiledPolicy {
  name: string;
  failurePolicy: string;
  paramKind?: JsonObject;
  matchConstraints?: JsonValue;
  matchConditions: NamedExpression[];
  variables: NamedExpression[];
  validations: CompiledValidation[];
  auditAnnotations: CompiledAuditAnnotation[];
  mutations: CompiledMutation[];
  reinvocationPolicy: string;
  /** The problems the API's validation reports (paths from `spec`). */
  errors: FieldError[];
}

const objects = (v: JsonValue | undefined): JsonObject[] => (Array.isArray(v) ? v.filter(isJsonObject) : []) as JsonObject[];
const text = (v: JsonValue | undefined): string | undefined => (typeof v === 'string' ? v : undefined);

const VALIDATION_REASONS = ['Unauthorized', 'Forbidden', 'Invalid', 'RequestEntityTooLarge'];
const FAILURE_POLICIES = ['Fail', 'Ignore'];
const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];
/** Upstream's limit on match conditions (webhooks and policies alike). */
const MAX_MATCH_CONDITIONS = 64;

export function compilePolicy(policy: JsonObject, mutating: boolean): CompiledPolicy {
  const spec = isJsonObject(policy.spec) ? policy.spec : {};
  const name = isJsonObject(policy.metadata) ? text(policy.metadata.name) ?? '' : '';
  const errors: FieldError[] = [];
  const paramKind = isJsonObject(spec.paramKind) ? spec.paramKind : undefined;
  const withAuthorizer: AdmissionDeclarations = { params: !!paramKind, authorizer: true, variables: true };
  const withoutAuthorizer: AdmissionDeclarations = { ...withAuthorizer, authorizer: false };
  const compile = (path: string, source: JsonValue | undefined, d: AdmissionDeclarations, expect?: readonly string[]): CompiledExpression => {
    if (typeof source !== 'string' || source.trim() === '') {
      errors.push(field.required(path));
      return { source: typeof source === 'string' ? source : '', error: 'expression is required' };
    }
    const compiled = compileAdmissionExpression(source, d, expect);
    if (compiled.error !== undefined) errors.push(field.invalid(path, source, compiled.error));
    return compiled;
  };

  const failurePolicy = text(spec.failurePolicy) ?? 'Fail';
  if (!FAILURE_POLICIES.includes(failurePolicy)) errors.push(field.notSupported('spec.failurePolicy', failurePolicy, FAILURE_POLICIES));
  if (paramKind) {
    if (!text(paramKind.apiVersion)) errors.push(field.required('spec.paramKind.apiVersion'));
    if (!text(paramKind.kind)) errors.push(field.required('spec.paramKind.kind'));
  }
  if (!isJsonObject(spec.matchConstraints)) errors.push(field.required('spec.matchConstraints'));
  else if (objects(spec.matchConstraints.resourceRules).length === 0) errors.push(field.required('spec.matchConstraints.resourceRules'));

  const conditions = objects(spec.matchConditions);
  if (conditions.length > MAX_MATCH_CONDITIONS) errors.push(field.tooMany('spec.matchConditions', conditions.length, MAX_MATCH_CONDITIONS));
  const seenConditions = new Set<string>();
  const matchConditions = conditions.map((c, i) => {
    const conditionName = text(c.name) ?? '';
    if (!conditionName) errors.push(field.required(`spec.matchConditions[${i}].name`));
    else if (seenConditions.has(conditionName)) errors.push(field.duplicate(`spec.matchConditions[${i}].name`, conditionName));
    seenConditions.add(conditionName);
    return { name: conditionName, compiled: compile(`spec.matchConditions[${i}].expression`, c.expression, withAuthorizer, ['bool']) };
  });

  const seenVariables = new Set<string>();
  const variables = objects(spec.variables).map((v, i) => {
    const variableName = text(v.name) ?? '';
    if (!variableName) errors.push(field.required(`spec.variables[${i}].name`));
    else if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variableName)) errors.push(field.invalid(`spec.variables[${i}].name`, variableName, 'name is not a valid CEL identifier'));
    else if (seenVariables.has(variableName)) errors.push(field.duplicate(`spec.variables[${i}].name`, variableName));
    seenVariables.add(variableName);
    return { name: variableName, compiled: compile(`spec.variables[${i}].expression`, v.expression, withAuthorizer) };
  });

  const validations = mutating ? [] : objects(spec.validations).map((v, i): CompiledValidation => {
    const at = `spec.validations[${i}]`;
    const message = text(v.message);
    if (message !== undefined && /[\r\n]/.test(message)) errors.push(field.invalid(`${at}.message`, message, 'message must not contain line breaks'));
    const reason = text(v.reason);
    if (reason !== undefined && !VALIDATION_REASONS.includes(reason)) errors.push(field.notSupported(`${at}.reason`, reason, VALIDATION_REASONS));
    const messageExpression = v.messageExpression === undefined
      ? undefined
      : compile(`${at}.messageExpression`, v.messageExpression, withoutAuthorizer, ['string']);
    return { expression: compile(`${at}.expression`, v.expression, withAuthorizer, ['bool']), message, reason, messageExpression };
  });

  const seenKeys = new Set<string>();
  const auditAnnotations = mutating ? [] : objects(spec.auditAnnotations).map((a, i): CompiledAuditAnnotation => {
    const key = text(a.key) ?? '';
    if (!key) errors.push(field.required(`spec.auditAnnotations[${i}].key`));
    else if (seenKeys.has(key)) errors.push(field.duplicate(`spec.auditAnnotations[${i}].key`, key));
    seenKeys.add(key);
    return { key, valueExpression: compile(`spec.auditAnnotations[${i}].valueExpression`, a.valueExpression, withoutAuthorizer, ['string', 'null_type']) };
  });
  if (!mutating && validations.length === 0 && auditAnnotations.length === 0) {
    errors.push(field.required('spec.validations', 'validations or auditAnnotations must contain at least one item'));
  }

  const mutations = !mutating ? [] : objects(spec.mutations).map((m, i): CompiledMutation => {
    const patchType = text(m.patchType) ?? '';
    const at = `spec.mutations[${i}]`;
    if (!PATCH_TYPES.includes(patchType)) errors.push(patchType ? field.notSupported(`${at}.patchType`, patchType, PATCH_TYPES) : field.required(`${at}.patchType`));
    const body = patchType === 'JSONPatch' ? m.jsonPatch : m.applyConfiguration;
    const sub = patchType === 'JSONPatch' ? 'jsonPatch' : 'applyConfiguration';
    const source = isJsonObject(body) ? body.expression : undefined;
    const d = { ...withAuthorizer, objectLiterals: patchType === 'JSONPatch' ? ['JSONPatch', 'Object'] : ['Object'] };
    return { patchType, expression: compile(`${at}.${sub}.expression`, source, d, patchType === 'JSONPatch' ? ['list'] : ['map']) };
  });
  if (mutating && mutations.length === 0) errors.push(field.required('spec.mutations'));
  const reinvocationPolicy = text(spec.reinvocationPolicy) ?? 'Never';
  if (mutating && !['Never', 'IfNeeded'].includes(reinvocationPolicy)) errors.push(field.notSupported('spec.reinvocationPolicy', reinvocationPolicy, ['IfNeeded', 'Never']));

  return {
    name, failurePolicy, paramKind, matchConstraints: spec.matchConstraints, matchConditions, variables, validations, auditAnnotations, mutations,
    reinvocationPolicy, errors,
  };
}

const VALIDATION_ACTIONS = ['Audit', 'Deny', 'Warn'];

/** The API's validation of a binding (ValidatingAdmissionPolicyBinding or MutatingAdmissionPolicyBinding). */
export function validateBinding(binding: JsonObject, validating: boolean): FieldError[] {
  const spec = isJsonObject(binding.spec) ? binding.spec : {};
  const errors: FieldError[] = [];
  if (!text(spec.policyName)) errors.push(field.required('spec.policyName'));
  if (validating) {
    const actions = Array.isArray(spec.validationActions) ? spec.validationActions : [];
    if (actions.length === 0) errors.push(field.required('spec.validationActions'));
    const seen = new Set<string>();
    actions.forEach((a, i) => {
      if (typeof a !== 'string' || !VALIDATION_ACTIONS.includes(a)) errors.push(field.notSupported(`spec.validationActions[${i}]`, a, VALIDATION_ACTIONS));
      else if (seen.has(a)) errors.push(field.duplicate(`spec.validationActions[${i}]`, a));
      seen.add(String(a));
    });
    if (actions.includes('Deny') && actions.includes('Warn')) {
      errors.push(field.invalid('spec.validationActions', actions, 'must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)'));
    }
  }
  const ref = spec.paramRef;
  if (isJsonObject(ref)) {
    const hasName = typeof ref.name === 'string' && ref.name !== '';
    if (hasName === (ref.selector !== undefined)) errors.push(field.forbidden('spec.paramRef.name', 'one of `name` or `selector` must be set'));
    if (ref.parameterNotFoundAction === undefined) errors.push(field.required('spec.paramRef.parameterNotFoundAction'));
    else if (!['Allow', 'Deny'].includes(String(ref.parameterNotFoundAction))) errors.push(field.notSupported('spec.paramRef.parameterNotFoundAction', ref.parameterNotFoundAction, ['Allow', 'Deny']));
  }
  return errors;
}
