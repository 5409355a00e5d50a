/**
 * What every daemon does with the options all three share before it starts: --version (print and
 * exit, or set the reported version), and logging (-v, --vmodule, --logging-format).
 */
import {configureKlog, type VmoduleRule} from './klog.js';
import {formatVersion, versionInfo, type VersionInfo} from './version.js';
import {UserError} from './errors.js';

export interface VersionOption {
  mode: 'print' | 'raw' | 'set';
  version?: string;
}

export interface CommonDaemonSettings {
  /** The version this process reports (on /version, in logs). */
  version: VersionInfo;
  /** Set when --version asked to print and exit; the text to print. */
  printAndExit?: string;
}

export function applyCommonDaemonOptions(values: Record<string, unknown>): CommonDaemonSettings {
  const version = values.version as VersionOption | undefined;
  if (version && (version.mode === 'print' || version.mode === 'raw')) {
    return {version: versionInfo(), printAndExit: formatVersion(version.mode)};
  }
  const format = values['logging-format'];
  if (format !== undefined && format !== 'text') {
    throw new UserError(`invalid value "${String(format)}" for --logging-format: the only supported format is text`);
  }
  configureKlog({
    verbosity: typeof values.v === 'number' ? values.v : 0,
    vmodule: (values.vmodule as VmoduleRule[] | undefined) ?? [],
  });
  return {version: versionInfo(version?.mode === 'set' ? version.version : undefined)};
}
