/** The two client-style flags with an optional value: --version[=...] and --dry-run[=...]. */
import { ValueFormatError } from './value-error.js';
import { parseBool } from './value-scalars.js';

export interface VersionRequest {
  /** print: print version info and exit; raw: print raw version info and exit; set: report this version. */
  mode: 'print' | 'raw' | 'set';
  version?: string;
}

const SEMVER = /^v(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;

/**
 * component-base verflag: bare `--version` (empty text) and true values print, `raw` prints raw,
 * false values turn it off (undefined), `vX.Y.Z[...]` sets the reported version.
 */
export function parseVersion(raw: string): VersionRequest | undefined {
  const text = raw.trim();
  if (text === '') return { mode: 'print' };
  if (text === 'raw') return { mode: 'raw' };
  if (text.startsWith('v')) {
    if (!SEMVER.test(text)) throw new ValueFormatError('not a semantic version such as v1.32.0');
    return { mode: 'set', version: text };
  }
  try {
    return parseBool(text) ? { mode: 'print' } : undefined;
  } catch {
    throw new ValueFormatError('not true, false, raw or a version');
  }
}

export function formatVersion(value: VersionRequest | undefined): string {
  if (value === undefined) return 'false';
  if (value.mode === 'print') return 'true';
  return value.mode === 'raw' ? 'raw' : value.version!;
}

export const DRY_RUN_MODES = ['none', 'server', 'client', 'unchanged'] as const;
/** `unchanged` is what a bare --dry-run arrives as (kubectl treats it as client, with a warning). */
export type DryRunMode = (typeof DRY_RUN_MODES)[number];

export function parseDryRun(raw: string): DryRunMode {
  const text = raw.trim();
  if (!(DRY_RUN_MODES as readonly string[]).includes(text)) throw new ValueFormatError('not a dry-run mode');
  return text as DryRunMode;
}
