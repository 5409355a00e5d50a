/**
 * `--authentication-config`: the structured authentication configuration (AuthenticationConfiguration
 * of `apiserver.config.<domain>`, versions v1, v1beta1 and v1alpha1, YAML or JSON), as upstream's
 * (k8s.io/apiserver/pkg/apis/apiserver and its validation): several JWT issuers, each with its
 * audiences, CA, claim validation rules, claim mappings (a claim with a prefix, or a CEL expression
 * over `claims`) and user validation rules (CEL over `user`), and anonymous authentication with the
 * paths it is limited to. Parsing and validation are pure and give upstream's field paths; the
 * expressions are compiled here so that an expression that does not compile stops the start.
 */
import {X509Certificate} from 'node:crypto';
import {parse as parseYaml} from 'yaml';
import {names} from '../../../api/names.js';
import {kubernetesEnvironment} from '../../../api/cel/library.js';

export type Program = (vars: Record<string, unknown>) => unknown;

export interface ClaimOrExpression {
  claim?: string;
  prefix?: string;
  expression?: Program;
  expressionText?: string;
}

export interface JwtConfiguration {
  issuer: {url: string; discoveryUrl?: string; certificateAuthority?: string; audiences: string[]};
  claimValidationRules: Array<{claim: string; requiredValue: string} | {expression: Program; expressionText: string; message: string}>;
  claimMappings: {
    username: ClaimOrExpression;
    groups?: ClaimOrExpression;
    uid?: ClaimOrExpression;
    extra: Array<{key: string; valueExpression: Program}>;
  };
  userValidationRules: Array<{expression: Program; expressionText: string; message: string}>;
}

export interface AuthenticationConfiguration {
  jwt: JwtConfiguration[];
  /** Present when the file configures anonymous authentication (then `--anonymous-auth` may not be given). */
  anonymous?: {enabled: boolean; paths: string[]};
}

export class AuthenticationConfigError extends Error {}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
/** Upstream's limit on JWT authenticators. */
const MAX_JWT = 64;

function compile(expression: unknown, variable: 'claims' | 'user', path: string, errors: string[], want?: 'bool'): {program: Program; text: string} | undefined {
  if (typeof expression !== 'string' || expression.trim() === '') {
    errors.push(`${path}: Required value`);
    return undefined;
  }
  const env = kubernetesEnvironment();
  env.registerVariable(variable, 'map');
  try {
    const parsed = env.parse(expression);
    const checked = parsed.check() as {valid?: boolean; type?: string; error?: Error};
    if (checked.valid === false) {
      errors.push(`${path}: Invalid value: ${JSON.stringify(expression)}: compilation failed: ${checked.error?.message ?? 'invalid expression'}`);
      return undefined;
    }
    if (want && !['bool', 'dyn'].includes(checked.type ?? '')) {
      errors.push(`${path}: Invalid value: ${JSON.stringify(expression)}: must evaluate to bool`);
      return undefined;
    }
    return {program: parsed as unknown as Program, text: expression};
  } catch (error) {
    errors.push(`${path}: Invalid value: ${JSON.stringify(expression)}: compilation failed: ${(error as Error).message}`);
    return undefined;
  }
}

function claimOrExpression(raw: unknown, path: string, errors: string[], prefixRequired: boolean): ClaimOrExpression | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw)) {
    errors.push(`${path}: Invalid value: must be an object`);
    return undefined;
  }
  const claim = str(raw.claim) ?? '';
  const expression = raw.expression;
  if (claim && expression !== undefined && expression !== '') {
    errors.push(`${path}: Invalid value: claim and expression can't both be set`);
    return undefined;
  }
  if (!claim && (expression === undefined || expression === '')) {
    errors.push(`${path}: Required value: claim or expression is required`);
    return undefined;
  }
  if (claim) {
    if (prefixRequired && raw.prefix === undefined) errors.push(`${path}.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing`);
    return {claim, prefix: str(raw.prefix) ?? ''};
  }
  if (raw.prefix !== undefined && raw.prefix !== '') errors.push(`${path}.prefix: Invalid value: ${JSON.stringify(raw.prefix)}: may not be specified when expression is set`);
  const compiled = compile(expression, 'claims', `${path}.expression`, errors);
  return compiled && {expression: compiled.program, expressionText: compiled.text};
}

function parseJwt(raw: unknown, path: string, errors: string[], seenIssuers: Set<string>): JwtConfiguration | undefined {
  if (!isObject(raw)) {
    errors.push(`${path}: Invalid value: must be an object`);
    return undefined;
  }
  const issuer = isObject(raw.issuer) ? raw.issuer : {};
  const url = str(issuer.url) ?? '';
  if (!url) errors.push(`${path}.issuer.url: Required value`);
  else {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      errors.push(`${path}.issuer.url: Invalid value: ${JSON.stringify(url)}: must be a valid URL`);
    }
    if (parsed && parsed.protocol !== 'https:') errors.push(`${path}.issuer.url: Invalid value: ${JSON.stringify(url)}: URL scheme must be https`);
    if (parsed && (parsed.username || parsed.password)) errors.push(`${path}.issuer.url: Invalid value: ${JSON.stringify(url)}: URL must not contain a username or password`);
    if (parsed && (parsed.search || parsed.hash)) errors.push(`${path}.issuer.url: Invalid value: ${JSON.stringify(url)}: URL must not contain a query or fragment`);
    if (seenIssuers.has(url)) errors.push(`${path}.issuer.url: Duplicate value: ${JSON.stringify(url)}`);
    seenIssuers.add(url);
  }
  const discoveryUrl = str(issuer.discoveryURL);
  if (discoveryUrl !== undefined && discoveryUrl !== '') {
    if (!discoveryUrl.startsWith('https://')) errors.push(`${path}.issuer.discoveryURL: Invalid value: ${JSON.stringify(discoveryUrl)}: URL scheme must be https`);
    if (discoveryUrl === url) errors.push(`${path}.issuer.discoveryURL: Invalid value: ${JSON.stringify(discoveryUrl)}: discoveryURL must be different from URL`);
  }
  const ca = str(issuer.certificateAuthority);
  if (ca) {
    try {
      new X509Certificate(ca);
    } catch (error) {
      errors.push(`${path}.issuer.certificateAuthority: Invalid value: "<omitted>": ${(error as Error).message}`);
    }
  }
  const audiences = Array.isArray(issuer.audiences) ? issuer.audiences.filter((a): a is string => typeof a === 'string') : [];
  if (audiences.length === 0) errors.push(`${path}.issuer.audiences: Required value: at least one issuer.audiences is required`);
  if (new Set(audiences).size !== audiences.length) errors.push(`${path}.issuer.audiences: Duplicate value: audiences must be unique`);
  const policy = str(issuer.audienceMatchPolicy) ?? '';
  if (audiences.length > 1 && policy !== 'MatchAny') errors.push(`${path}.issuer.audienceMatchPolicy: Invalid value: ${JSON.stringify(policy)}: audienceMatchPolicy must be MatchAny for multiple audiences`);
  if (policy !== '' && policy !== 'MatchAny') errors.push(`${path}.issuer.audienceMatchPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "MatchAny"`);

  const claimValidationRules: JwtConfiguration['claimValidationRules'] = [];
  (Array.isArray(raw.claimValidationRules) ? raw.claimValidationRules : []).forEach((rule, i) => {
    const p = `${path}.claimValidationRules[${i}]`;
    if (!isObject(rule)) return errors.push(`${p}: Invalid value: must be an object`);
    if (rule.claim !== undefined && rule.expression !== undefined) return errors.push(`${p}: Invalid value: claim and expression can't both be set`);
    if (typeof rule.claim === 'string' && rule.claim) {
      claimValidationRules.push({claim: rule.claim, requiredValue: str(rule.requiredValue) ?? ''});
      return;
    }
    const compiled = compile(rule.expression, 'claims', `${p}.expression`, errors, 'bool');
    if (compiled) claimValidationRules.push({expression: compiled.program, expressionText: compiled.text, message: str(rule.message) ?? ''});
  });

  const mappings = isObject(raw.claimMappings) ? raw.claimMappings : {};
  const username = claimOrExpression(mappings.username ?? {}, `${path}.claimMappings.username`, errors, true);
  const groups = claimOrExpression(mappings.groups, `${path}.claimMappings.groups`, errors, true);
  const uid = claimOrExpression(mappings.uid, `${path}.claimMappings.uid`, errors, false);
  const extra: JwtConfiguration['claimMappings']['extra'] = [];
  const seenKeys = new Set<string>();
  (Array.isArray(mappings.extra) ? mappings.extra : []).forEach((entry, i) => {
    const p = `${path}.claimMappings.extra[${i}]`;
    if (!isObject(entry)) return errors.push(`${p}: Invalid value: must be an object`);
    const key = str(entry.key) ?? '';
    if (!key) errors.push(`${p}.key: Required value`);
    else if (key !== key.toLowerCase()) errors.push(`${p}.key: Invalid value: ${JSON.stringify(key)}: key must be lowercase`);
    else if (!/^[^/]+\.[^/]+\/.+$/.test(key)) errors.push(`${p}.key: Invalid value: ${JSON.stringify(key)}: must be a domain-prefixed path (such as "acme.io/foo")`);
    if (seenKeys.has(key)) errors.push(`${p}.key: Duplicate value: ${JSON.stringify(key)}`);
    seenKeys.add(key);
    const compiled = compile(entry.valueExpression, 'claims', `${p}.valueExpression`, errors);
    if (key && compiled) extra.push({key, valueExpression: compiled.program});
  });
  const userValidationRules: JwtConfiguration['userValidationRules'] = [];
  (Array.isArray(raw.userValidationRules) ? raw.userValidationRules : []).forEach((rule, i) => {
    const p = `${path}.userValidationRules[${i}]`;
    if (!isObject(rule)) return errors.push(`${p}: Invalid value: must be an object`);
    const compiled = compile(rule.expression, 'user', `${p}.expression`, errors, 'bool');
    if (compiled) userValidationRules.push({expression: compiled.program, expressionText: compiled.text, message: str(rule.message) ?? ''});
  });
  if (!username) return undefined;
  return {
    issuer: {url, discoveryUrl: discoveryUrl || undefined, certificateAuthority: ca, audiences},
    claimValidationRules,
    claimMappings: {username, groups, uid, extra},
    userValidationRules,
  };
}

/** Parses and validates a configuration file's text; throws one error listing every problem. */
export function parseAuthenticationConfig(text: string, file: string): AuthenticationConfiguration {
  let document: unknown;
  try {
    document = parseYaml(text);
  } catch (error) {
    throw new AuthenticationConfigError(`--authentication-config ${file}: ${(error as Error).message}`);
  }
  if (!isObject(document)) throw new AuthenticationConfigError(`--authentication-config ${file}: not an AuthenticationConfiguration object`);
  const errors: string[] = [];
  const group = `apiserver.config.${names().domain}`;
  const versions = ['v1', 'v1beta1', 'v1alpha1'].map((v) => `${group}/${v}`);
  if (!versions.includes(String(document.apiVersion))) errors.push(`apiVersion: Unsupported value: ${JSON.stringify(document.apiVersion)}: supported values: ${versions.map((v) => JSON.stringify(v)).join(', ')}`);
  if (document.kind !== 'AuthenticationConfiguration') errors.push(`kind: Unsupported value: ${JSON.stringify(document.kind)}: supported values: "AuthenticationConfiguration"`);
  const list = document.jwt === undefined || document.jwt === null ? [] : document.jwt;
  const jwt: JwtConfiguration[] = [];
  if (!Array.isArray(list)) errors.push('jwt: Invalid value: must be a list');
  else {
    if (list.length > MAX_JWT) errors.push(`jwt: Too many: ${list.length}: must have at most ${MAX_JWT} items`);
    const seen = new Set<string>();
    list.forEach((raw, i) => {
      const parsed = parseJwt(raw, `jwt[${i}]`, errors, seen);
      if (parsed) jwt.push(parsed);
    });
  }
  let anonymous: AuthenticationConfiguration['anonymous'];
  if (document.anonymous !== undefined && document.anonymous !== null) {
    if (!isObject(document.anonymous)) errors.push('anonymous: Invalid value: must be an object');
    else {
      const enabled = document.anonymous.enabled === true;
      const conditions = Array.isArray(document.anonymous.conditions) ? document.anonymous.conditions : [];
      const paths: string[] = [];
      conditions.forEach((c, i) => {
        const p = isObject(c) ? str(c.path) : undefined;
        if (!p) errors.push(`anonymous.conditions[${i}].path: Required value`);
        else if (paths.includes(p)) errors.push(`anonymous.conditions[${i}].path: Duplicate value: ${JSON.stringify(p)}`);
        else paths.push(p);
      });
      if (!enabled && paths.length > 0) errors.push('anonymous.conditions: Invalid value: enabled should be set to true when conditions are defined');
      anonymous = {enabled, paths};
    }
  }
  if (errors.length > 0) throw new AuthenticationConfigError(`--authentication-config ${file}: ${errors.join('; ')}`);
  return {jwt, anonymous};
}
