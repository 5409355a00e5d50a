/**
 * Compatibility versions (KEP-4330), as component-base's compatibility package keeps them: the
 * binary version (the release orch emulates by default, 1.36), the emulation version a server
 * behaves as (--emulated-version, n-3..n) and the minimum compatibility version it must stay
 * compatible with (--min-compatibility-version, from n-3 up to the emulation version; one below
 * the emulation version by default). Pure.
 */
import {compareVersions, formatVersion, type MinorVersion} from './feature-gates.js';

export interface EffectiveVersion {
  binary: MinorVersion;
  emulation: MinorVersion;
  minCompatibility: MinorVersion;
}

export class EffectiveVersionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EffectiveVersionError';
  }
}

/** The component the version flags address when no `component=` prefix is given. */
const COMPONENT = 'kube';
/** upstream's floor: emulation and compatibility reach back three releases, never before 1.31. */
const HARD_FLOOR: MinorVersion = {major: 1, minor: 31};

export function parseMinorVersion(text: string): MinorVersion {
  const match = /^v?(\d+)\.(\d+)(?:\.\d+)?$/.exec(text.trim());
  if (!match) throw new EffectiveVersionError(`illegal version string "${text}"`);
  return {major: Number(match[1]), minor: Number(match[2])};
}

/**
 * The value of --emulated-version or --min-compatibility-version for kube: entries are
 * `component=version` or a bare version (kube's); another component is refused, as upstream's
 * registry knows only the components it has.
 */
export function versionForComponent(entries: readonly string[] | undefined, flag: string): MinorVersion | undefined {
  let found: MinorVersion | undefined;
  for (const entry of entries ?? []) {
    for (const part of entry.split(',').map((p) => p.trim()).filter(Boolean)) {
      const eq = part.indexOf('=');
      const component = eq < 0 ? COMPONENT : part.slice(0, eq).trim();
      const value = eq < 0 ? part : part.slice(eq + 1);
      if (component !== COMPONENT) throw new EffectiveVersionError(`--${flag}: component not registered: ${component}`);
      try {
        found = parseMinorVersion(value);
      } catch (error) {
        throw new EffectiveVersionError(`--${flag}: ${(error as Error).message}`);
      }
    }
  }
  return found;
}

function subtractMinor(v: MinorVersion, n: number): MinorVersion {
  return {major: v.major, minor: Math.max(0, v.minor - n)};
}

function max(a: MinorVersion, b: MinorVersion): MinorVersion {
  return compareVersions(a, b) >= 0 ? a : b;
}

/** `1.33.0`: how upstream prints the bounds (the binary version with its patch). */
const withPatch = (v: MinorVersion) => `${formatVersion(v)}.0`;

/**
 * upstream's effectiveVersion.Validate: the emulation version within [binary-3, binary] (floored
 * at 1.31) and the minimum compatibility version within [that floor, emulation]. All problems at once.
 */
export function effectiveVersion(binary: MinorVersion, emulation?: MinorVersion, minCompatibility?: MinorVersion): EffectiveVersion {
  const emulated = emulation ?? binary;
  const floor = max(subtractMinor(binary, 3), HARD_FLOOR);
  const compat = minCompatibility ?? max(subtractMinor(emulated, 1), floor);
  const errors: string[] = [];
  if (compareVersions(emulated, binary) > 0 || compareVersions(emulated, floor) < 0) {
    errors.push(`emulation version ${formatVersion(emulated)} is not between [${withPatch(floor)}, ${withPatch(binary)}]`);
  }
  if (compareVersions(compat, emulated) > 0 || compareVersions(compat, floor) < 0) {
    errors.push(`minCompatibilityVersion version ${formatVersion(compat)} is not between [${withPatch(floor)}, ${formatVersion(emulated)}]`);
  }
  if (errors.length > 0) throw new EffectiveVersionError(errors.join('; '));
  return {binary, emulation: emulated, minCompatibility: compat};
}
