/**
 * `--authorization-config`: the structured authorization configuration (AuthorizationConfiguration
 * of `apiserver.config.<domain>`, versions v1, v1beta1 and v1alpha1, YAML or JSON), as upstream's
 * (k8s.io/apiserver/pkg/apis/apiserver and its validation): an ordered list of authorizers, each
 * Webhook with its own timeout, SubjectAccessReview version, failure policy, cache TTLs, connection
 * and CEL match conditions. Parsing and validation are pure and give upstream's field paths; the
 * authorizers are built in authorization-setup.ts.
 */
import {parse as parseYaml} from 'yaml';
import {names} from '../../../api/names.js';
import {parseDuration} from '../../../options/duration.js';
import {kubernetesEnvironment} from '../../../api/cel/library.js';

export type ConfiguredAuthorizerType = 'AlwaysAllow' | 'AlwaysDeny' | 'Node' | 'RBAC' | 'Webhook';

export interface WebhookConfiguration {
  timeoutMs: number;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  failurePolicy: 'NoOpinion' | 'Deny';
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  cacheAuthorizedRequests: boolean;
  cacheUnauthorizedRequests: boolean;
  /** KubeConfigFile: the client-configuration file; InClusterConfig is not available outside a pod. */
  kubeConfigFile: string;
  matchConditions: string[];
}

export interface ConfiguredAuthorizer {
  type: ConfiguredAuthorizerType;
  name: string;
  webhook?: WebhookConfiguration;
}

const TYPES: readonly ConfiguredAuthorizerType[] = ['AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC', 'Webhook'];
const SINGLETONS = new Set(['AlwaysAllow', 'AlwaysDeny', 'Node', 'RBAC']);
const MAX_TIMEOUT_MS = 30_000;
const MAX_MATCH_CONDITIONS = 64;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export class AuthorizationConfigError extends Error {}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

function durationMs(value: unknown, path: string, errors: string[], fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'string') {
    errors.push(`${path}: Invalid value: ${JSON.stringify(value)}: must be a duration such as "30s"`);
    return fallback;
  }
  try {
    return parseDuration(value);
  } catch {
    errors.push(`${path}: Invalid value: ${JSON.stringify(value)}: must be a duration such as "30s"`);
    return fallback;
  }
}

/** A match condition's compile problem, or undefined when it compiles to a bool. */
export function matchConditionProblem(expression: string): string | undefined {
  const env = kubernetesEnvironment();
  env.registerVariable('request', 'map');
  try {
    const checked = env.parse(expression).check() as {valid?: boolean; type?: string; error?: Error};
    if (checked.valid === false) return `compilation failed: ${checked.error?.message ?? 'invalid expression'}`;
    if (!['bool', 'dyn'].includes(checked.type ?? '')) return 'must evaluate to bool';
    return undefined;
  } catch (error) {
    return `compilation failed: ${(error as Error).message}`;
  }
}

function parseWebhook(raw: unknown, path: string, errors: string[]): WebhookConfiguration | undefined {
  if (!isObject(raw)) {
    errors.push(`${path}: Required value: required when type=Webhook`);
    return undefined;
  }
  const timeoutMs = durationMs(raw.timeout, `${path}.timeout`, errors, 0);
  if (raw.timeout === undefined) errors.push(`${path}.timeout: Required value`);
  else if (timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS) errors.push(`${path}.timeout: Invalid value: ${JSON.stringify(raw.timeout)}: must be > 0s and <= 30s`);
  const version = raw.subjectAccessReviewVersion;
  if (version === undefined) errors.push(`${path}.subjectAccessReviewVersion: Required value`);
  else if (version !== 'v1' && version !== 'v1beta1') errors.push(`${path}.subjectAccessReviewVersion: Unsupported value: ${JSON.stringify(version)}: supported values: "v1", "v1beta1"`);
  const failurePolicy = raw.failurePolicy;
  if (failurePolicy === undefined) errors.push(`${path}.failurePolicy: Required value`);
  else if (failurePolicy !== 'NoOpinion' && failurePolicy !== 'Deny') errors.push(`${path}.failurePolicy: Unsupported value: ${JSON.stringify(failurePolicy)}: supported values: "Deny", "NoOpinion"`);
  const cacheAuthorized = raw.cacheAuthorizedRequests !== false;
  const cacheUnauthorized = raw.cacheUnauthorizedRequests !== false;
  const authorizedTtlMs = durationMs(raw.authorizedTTL, `${path}.authorizedTTL`, errors, 300_000);
  const unauthorizedTtlMs = durationMs(raw.unauthorizedTTL, `${path}.unauthorizedTTL`, errors, 30_000);
  if (cacheAuthorized && authorizedTtlMs <= 0) errors.push(`${path}.authorizedTTL: Invalid value: ${JSON.stringify(raw.authorizedTTL)}: must be > 0s when cacheAuthorizedRequests is true`);
  if (cacheUnauthorized && unauthorizedTtlMs <= 0) errors.push(`${path}.unauthorizedTTL: Invalid value: ${JSON.stringify(raw.unauthorizedTTL)}: must be > 0s when cacheUnauthorizedRequests is true`);

  const connection = isObject(raw.connectionInfo) ? raw.connectionInfo : undefined;
  let kubeConfigFile = '';
  if (!connection) errors.push(`${path}.connectionInfo: Required value`);
  else if (connection.type === 'InClusterConfig') {
    errors.push(`${path}.connectionInfo.type: Unsupported value: "InClusterConfig": orch's API server does not run in a pod; use "KubeConfigFile"`);
  } else if (connection.type !== 'KubeConfigFile') {
    errors.push(`${path}.connectionInfo.type: Unsupported value: ${JSON.stringify(connection.type)}: supported values: "InClusterConfig", "KubeConfigFile"`);
  } else if (typeof connection.kubeConfigFile !== 'string' || connection.kubeConfigFile === '') {
    errors.push(`${path}.connectionInfo.kubeConfigFile: Required value`);
  } else if (!connection.kubeConfigFile.startsWith('/')) {
    errors.push(`${path}.connectionInfo.kubeConfigFile: Invalid value: ${JSON.stringify(connection.kubeConfigFile)}: must be an absolute path`);
  } else kubeConfigFile = connection.kubeConfigFile;

  const matchConditions: string[] = [];
  const conditions = raw.matchConditions ?? [];
  if (!Array.isArray(conditions)) errors.push(`${path}.matchConditions: Invalid value: must be a list`);
  else {
    if (conditions.length > MAX_MATCH_CONDITIONS) errors.push(`${path}.matchConditions: Too many: ${conditions.length}: must have at most ${MAX_MATCH_CONDITIONS} items`);
    if (conditions.length > 0 && raw.matchConditionSubjectAccessReviewVersion === undefined) {
      errors.push(`${path}.matchConditionSubjectAccessReviewVersion: Required value`);
    } else if (conditions.length > 0 && raw.matchConditionSubjectAccessReviewVersion !== 'v1') {
      errors.push(`${path}.matchConditionSubjectAccessReviewVersion: Unsupported value: ${JSON.stringify(raw.matchConditionSubjectAccessReviewVersion)}: supported values: "v1"`);
    }
    conditions.forEach((condition, i) => {
      const at = `${path}.matchConditions[${i}].expression`;
      const expression = isObject(condition) ? condition.expression : undefined;
      if (typeof expression !== 'string' || expression.trim() === '') return errors.push(`${at}: Required value`);
      if (matchConditions.includes(expression)) return errors.push(`${at}: Duplicate value: ${JSON.stringify(expression)}`);
      const problem = matchConditionProblem(expression);
      if (problem) errors.push(`${at}: Invalid value: ${JSON.stringify(expression)}: ${problem}`);
      matchConditions.push(expression);
    });
  }
  return {
    timeoutMs,
    subjectAccessReviewVersion: version === 'v1beta1' ? 'v1beta1' : 'v1',
    failurePolicy: failurePolicy === 'Deny' ? 'Deny' : 'NoOpinion',
    authorizedTtlMs,
    unauthorizedTtlMs,
    cacheAuthorizedRequests: cacheAuthorized,
    cacheUnauthorizedRequests: cacheUnauthorized,
    kubeConfigFile,
    matchConditions,
  };
}

/** Parses and validates a configuration file's text; throws one error listing every problem. */
export function parseAuthorizationConfig(text: string, file: string): ConfiguredAuthorizer[] {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new AuthorizationConfigError(`--authorization-config ${file}: ${(error as Error).message}`);
  }
  const errors: string[] = [];
  if (!isObject(document)) throw new AuthorizationConfigError(`--authorization-config ${file}: not an AuthorizationConfiguration object`);
  const group = `apiserver.config.${names().domain}`;
  const versions = ['v1', 'v1beta1', 'v1alpha1'].map((v) => `${group}/${v}`);
  if (!versions.includes(String(document.apiVersion))) errors.push(`apiVersion: Unsupported value: ${JSON.stringify(document.apiVersion)}: supported values: ${versions.map((v) => JSON.stringify(v)).join(', ')}`);
  if (document.kind !== 'AuthorizationConfiguration') errors.push(`kind: Unsupported value: ${JSON.stringify(document.kind)}: supported values: "AuthorizationConfiguration"`);
  const list = document.authorizers;
  const authorizers: ConfiguredAuthorizer[] = [];
  if (!Array.isArray(list) || list.length === 0) errors.push('authorizers: Required value: at least one authorizer is required');
  else {
    const seenTypes = new Set<string>();
    const seenNames = new Set<string>();
    list.forEach((raw, i) => {
      const path = `authorizers[${i}]`;
      if (!isObject(raw)) return errors.push(`${path}: Invalid value: must be an object`);
      const type = raw.type;
      if (type === undefined) return errors.push(`${path}.type: Required value`);
      if (!TYPES.includes(type as ConfiguredAuthorizerType)) {
        return errors.push(`${path}.type: Unsupported value: ${JSON.stringify(type)}: supported values: ${TYPES.map((t) => JSON.stringify(t)).join(', ')}`);
      }
      if (SINGLETONS.has(type as string)) {
        if (seenTypes.has(type as string)) errors.push(`${path}.type: Duplicate value: ${JSON.stringify(type)}`);
        seenTypes.add(type as string);
      }
      const name = raw.name;
      if (typeof name !== 'string' || name === '') errors.push(`${path}.name: Required value`);
      else if (!DNS1123_SUBDOMAIN.test(name)) errors.push(`${path}.name: Invalid value: ${JSON.stringify(name)}: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'`);
      else if (seenNames.has(name)) errors.push(`${path}.name: Duplicate value: ${JSON.stringify(name)}`);
      if (typeof name === 'string') seenNames.add(name);
      let webhook: WebhookConfiguration | undefined;
      if (type === 'Webhook') webhook = parseWebhook(raw.webhook, `${path}.webhook`, errors);
      else if (raw.webhook !== undefined && raw.webhook !== null) errors.push(`${path}.webhook: Invalid value: non-null webhook config is only allowed when type=Webhook`);
      authorizers.push({type: type as ConfiguredAuthorizerType, name: String(name ?? ''), ...(webhook ? {webhook} : {})});
    });
  }
  if (errors.length > 0) throw new AuthorizationConfigError(`--authorization-config ${file}: ${errors.join('; ')}`);
  return authorizers;
}

/**
 * The match conditions of a webhook as one predicate over the SubjectAccessReview spec (v1 wire
 * form, the `request` variable): true when every condition holds; a condition that fails to
 * evaluate throws, and the webhook's failure policy applies.
 */
export function compileMatchConditions(expressions: readonly string[]): ((request: Record<string, unknown>) => boolean) | undefined {
  if (expressions.length === 0) return undefined;
  const env = kubernetesEnvironment();
  env.registerVariable('request', 'map');
  const programs = expressions.map((e) => ({expression: e, program: env.parse(e)}));
  return (request) =>
    programs.every(({expression, program}) => {
      const value = program({request});
      if (typeof value !== 'boolean') throw new Error(`match condition ${JSON.stringify(expression)} did not evaluate to a bool`);
      return value;
    });
}
