/**
 * PodSecurity's configuration (PodSecurityConfiguration, pod-security.admission.config.<domain>
 * v1, v1beta1 or v1alpha1), as upstream's admission/api: defaults for namespaces without labels
 * (privileged:latest for every mode when unset) and exemptions by user name, namespace and runtime
 * class. Decoded strictly (unknown fields are errors, as upstream's strict codec) and validated as
 * upstream's ValidatePodSecurityConfiguration. Pure.
 */
import {names} from '../../../../../api/names.js';
import {fieldErrorText, field, type FieldError} from '../../../../../api/status.js';
import {nameProblems} from '../../../../../api/validation.js';
import {LATEST, LEVEL_ERROR, parseLevel, parseVersion, VERSION_ERROR, type Level, type Policy, type Version} from './levels.js';

export interface PodSecurityConfiguration {
  defaults: Policy;
  exemptions: {usernames: readonly string[]; namespaces: readonly string[]; runtimeClasses: readonly string[]};
}

export const DEFAULT_CONFIGURATION: PodSecurityConfiguration = {
  defaults: {
    enforce: {level: 'privileged', version: LATEST},
    audit: {level: 'privileged', version: LATEST},
    warn: {level: 'privileged', version: LATEST},
  },
  exemptions: {usernames: [], namespaces: [], runtimeClasses: []},
};

export const CONFIGURATION_KIND = 'PodSecurityConfiguration';

export function configurationApiVersions(): string[] {
  return ['v1', 'v1beta1', 'v1alpha1'].map((v) => `pod-security.admission.config.${names().domain}/${v}`);
}

const DEFAULT_KEYS = ['enforce', 'enforce-version', 'audit', 'audit-version', 'warn', 'warn-version'] as const;
const EXEMPTION_KEYS = ['usernames', 'namespaces', 'runtimeClasses'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Reads the plugin's configuration; undefined means the defaults. Throws an Error whose message
 * lists every problem (the server does not start).
 */
export function parsePodSecurityConfiguration(raw: unknown): PodSecurityConfiguration {
  if (raw === undefined || raw === null) return DEFAULT_CONFIGURATION;
  if (!isObject(raw)) throw new Error(`expected a ${CONFIGURATION_KIND} object`);
  const problems: string[] = [];
  const unknown = (path: string, object: Record<string, unknown>, known: readonly string[]) => {
    for (const key of Object.keys(object)) if (!known.includes(key)) problems.push(`unknown field "${path}${key}"`);
  };
  unknown('', raw, ['apiVersion', 'kind', 'defaults', 'exemptions']);
  if (raw.kind !== CONFIGURATION_KIND) problems.push(`kind must be ${CONFIGURATION_KIND}, not ${JSON.stringify(raw.kind ?? '')}`);
  if (!configurationApiVersions().includes(String(raw.apiVersion))) {
    problems.push(`apiVersion ${JSON.stringify(raw.apiVersion ?? '')} is not one of ${configurationApiVersions().join(', ')}`);
  }

  const errors: FieldError[] = [];
  const defaults = raw.defaults ?? {};
  if (!isObject(defaults)) problems.push('defaults must be an object');
  const defaultsObject = isObject(defaults) ? defaults : {};
  unknown('defaults.', defaultsObject, DEFAULT_KEYS);
  const text = (path: string, value: unknown, fallback: string): string => {
    if (value === undefined || value === null || value === '') return fallback;
    if (typeof value !== 'string') {
      problems.push(`${path} must be a string`);
      return fallback;
    }
    return value;
  };
  const mode = (name: 'enforce' | 'audit' | 'warn') => {
    const levelText = text(`defaults.${name}`, defaultsObject[name], 'privileged');
    const versionText = text(`defaults.${name}-version`, defaultsObject[`${name}-version`], 'latest');
    const level = parseLevel(levelText);
    if (!level) errors.push(field.invalid(`defaults.${name}`, levelText, LEVEL_ERROR));
    const version = parseVersion(versionText);
    if (!version) errors.push(field.invalid(`defaults.${name}-version`, versionText, VERSION_ERROR));
    return {level: level ?? ('privileged' as Level), version: version ?? (LATEST as Version)};
  };
  // Upstream validates enforce, warn, audit in this order.
  const enforce = mode('enforce');
  const warn = mode('warn');
  const audit = mode('audit');

  const exemptions = raw.exemptions ?? {};
  if (!isObject(exemptions)) problems.push('exemptions must be an object');
  const exemptionsObject = isObject(exemptions) ? exemptions : {};
  unknown('exemptions.', exemptionsObject, EXEMPTION_KEYS);
  const list = (key: (typeof EXEMPTION_KEYS)[number], check: (value: string) => string[]): string[] => {
    const value = exemptionsObject[key] ?? [];
    if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
      problems.push(`exemptions.${key} must be a list of strings`);
      return [];
    }
    const seen = new Set<string>();
    value.forEach((item: string, i) => {
      const path = `exemptions.${key}[${i}]`;
      const itemErrors = check(item);
      if (itemErrors.length) errors.push(item === '' && key === 'usernames' ? field.required(path, '') : field.invalid(path, item, itemErrors.join(', ')));
      else if (seen.has(item)) errors.push(field.duplicate(path, item));
      else seen.add(item);
    });
    return [...seen];
  };
  const namespaces = list('namespaces', (n) => nameProblems(n, 'label'));
  const runtimeClasses = list('runtimeClasses', (n) => nameProblems(n, 'subdomain'));
  const usernames = list('usernames', (u) => (u === '' ? ['required'] : []));

  const all = [...problems, ...errors.map(fieldErrorText)];
  if (all.length) throw new Error(all.join('; '));
  return {defaults: {enforce, audit, warn}, exemptions: {usernames, namespaces, runtimeClasses}};
}
