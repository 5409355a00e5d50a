/**
 * PodSecurity's levels, policy versions and the policy of a namespace read from its labels, as
 * upstream's pod-security-admission `api` package (helpers.go, constants.go). Pure.
 */
import {names, perNameSet} from '../../../../../api/names.js';
import {field, type FieldError} from '../../../../../api/status.js';

export type Level = 'privileged' | 'baseline' | 'restricted';

export const LEVELS: readonly Level[] = ['privileged', 'baseline', 'restricted'];

/** A policy version: `latest` or v1.<minor> (upstream has one major version). */
export interface Version {
  readonly latest: boolean;
  readonly minor: number;
}

export const LATEST: Version = {latest: true, minor: 0};

export function v1(minor: number): Version {
  return {latest: false, minor};
}

export function versionString(v: Version): string {
  return v.latest ? 'latest' : `v1.${v.minor}`;
}

/** True when `a` is older than `b`; `latest` is newer than every version, even future ones. */
export function older(a: Version, b: Version): boolean {
  if (a.latest) return false;
  if (b.latest) return true;
  return a.minor < b.minor;
}

export function sameVersion(a: Version, b: Version): boolean {
  return a.latest === b.latest && (a.latest || a.minor === b.minor);
}

export const LEVEL_ERROR = `must be one of ${LEVELS.join(', ')}`;
export const VERSION_ERROR = 'must be "latest" or "v1.x"';

export function parseLevel(value: string): Level | undefined {
  return (LEVELS as readonly string[]).includes(value) ? (value as Level) : undefined;
}

const VERSION_PATTERN = /^v1\.(0|[1-9][0-9]*)$/;

export function parseVersion(value: string): Version | undefined {
  if (value === 'latest') return LATEST;
  const match = VERSION_PATTERN.exec(value);
  if (!match) return undefined;
  const minor = Number(match[1]);
  return Number.isSafeInteger(minor) ? v1(minor) : undefined;
}

export interface LevelVersion {
  readonly level: Level;
  readonly version: Version;
}

/** `restricted:latest`, `baseline:v1.25`: how messages and audit annotations name a policy. */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && sameVersion(a.version, b.version);
}

/** Same level, and the same version unless privileged (where the version makes no difference). */
function equivalentLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return a.level === b.level && (a.level === 'privileged' || sameVersion(a.version, b.version));
}

export interface Policy {
  readonly enforce: LevelVersion;
  readonly audit: LevelVersion;
  readonly warn: LevelVersion;
}

export function fullyPrivileged(p: Policy): boolean {
  return p.enforce.level === 'privileged' && p.audit.level === 'privileged' && p.warn.level === 'privileged';
}

export function equivalentPolicies(a: Policy, b: Policy): boolean {
  return equivalentLevelVersion(a.enforce, b.enforce) && equivalentLevelVersion(a.audit, b.audit) && equivalentLevelVersion(a.warn, b.warn);
}

/** -1 when `a` is less strict than `b`, 0 when equal, 1 when stricter. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(LEVELS.indexOf(a) - LEVELS.indexOf(b));
}

/** The six namespace labels (`pod-security.<labelDomain>/enforce`, `.../enforce-version`, ...). */
export const podSecurityLabels = perNameSet((n) => {
  const prefix = n.labels.podSecurityPrefix;
  return {
    prefix,
    enforce: `${prefix}enforce`,
    enforceVersion: `${prefix}enforce-version`,
    audit: `${prefix}audit`,
    auditVersion: `${prefix}audit-version`,
    warn: `${prefix}warn`,
    warnVersion: `${prefix}warn-version`,
  };
});

/** The audit annotations the plugin writes, without their prefix. */
export type AuditAnnotationKey = 'enforce-policy' | 'audit-violations' | 'exempt' | 'error';

/** An audit annotation's full key (upstream's AuditAnnotationPrefix + key). */
export function podSecurityAnnotation(key: AuditAnnotationKey): string {
  return `${names().labels.podSecurityPrefix}${key}`;
}

export interface EvaluatedPolicy {
  policy: Policy;
  /** One per unparseable label (`metadata.labels[<key>]: Invalid value: ...`). */
  errors: FieldError[];
}

/**
 * The namespace's policy: its labels over the configured defaults. A valid policy is always
 * returned: an unparseable enforce level counts as restricted (fail closed), an unparseable audit or
 * warn level as privileged (fail open), an unparseable version as latest, as upstream's
 * PolicyToEvaluate.
 */
export function policyToEvaluate(labels: Readonly<Record<string, string>> | undefined, defaults: Policy): EvaluatedPolicy {
  const keys = podSecurityLabels();
  const errors: FieldError[] = [];
  const at = (key: string) => `metadata.labels[${key}]`;
  const mode = (current: LevelVersion, levelKey: string, versionKey: string, onBadLevel: Level): LevelVersion => {
    let {level, version} = current;
    const levelText = labels?.[levelKey];
    if (levelText !== undefined) {
      const parsed = parseLevel(levelText);
      if (!parsed) errors.push(field.invalid(at(levelKey), levelText, LEVEL_ERROR));
      level = parsed ?? onBadLevel;
    }
    const versionText = labels?.[versionKey];
    if (versionText !== undefined) {
      const parsed = parseVersion(versionText);
      if (!parsed) errors.push(field.invalid(at(versionKey), versionText, VERSION_ERROR));
      version = parsed ?? LATEST;
    }
    return {level, version};
  };
  const policy: Policy = {
    enforce: mode(defaults.enforce, keys.enforce, keys.enforceVersion, 'restricted'),
    audit: mode(defaults.audit, keys.audit, keys.auditVersion, 'privileged'),
    warn: mode(defaults.warn, keys.warn, keys.warnVersion, 'privileged'),
  };
  return {policy, errors};
}
