/**
 * What every daemon does with the options all three share before it starts: --version (print and
 * exit, or set the reported version), and logging (-v, --vmodule, --logging-format).
 */
import {configureKlog, type VmoduleRule} from './klog.js';
import {formatVersion, versionInfo, type VersionInfo} from './version.js';
import {UserError} from './errors.js';
import {processLogOutputs, type LogOutputs} from './klog-streams.js';

let daemonOutputs: LogOutputs | undefined;

/** The log outputs the options chose (a dashboard borrows klog's output and gives it back with this). */
export function daemonLogOutputs(): {out: (line: string) => void; err: (line: string) => void} {
  return daemonOutputs ?? {out: (l) => process.stderr.write(l), err: (l) => process.stderr.write(l)};
}

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

/**
 * `textStreams`: the daemon implements --log-text-split-stream and --log-text-info-buffer-size (the
 * API server and the controller manager; the agent reads its logging from its configuration file).
 */
export function applyCommonDaemonOptions(values: Record<string, unknown>, textStreams = false): CommonDaemonSettings {
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
  if (textStreams) {
    const streams = {
      splitStream: values['log-text-split-stream'] === true,
      infoBufferSize: (values['log-text-info-buffer-size'] as {value: number} | undefined)?.value ?? 0,
    };
    // The options' rules (the LoggingAlphaOptions gate, the buffer only with split streams) held at parsing.
    if (streams.splitStream) {
      const flush = values['log-flush-frequency'] as {ms: number} | undefined;
      daemonOutputs = processLogOutputs(streams, flush?.ms ?? 5000);
      configureKlog({out: daemonOutputs.out, err: daemonOutputs.err});
    }
  }
  return {version: versionInfo(version?.mode === 'set' ? version.version : undefined)};
}
