/**
 * Logging in klog's text form, as the Kubernetes daemons write it:
 *
 *   I1122 10:00:00.000000   12345 server.ts:12] "Serving securely" address="127.0.0.1:6443"
 *
 * Written by hand because klog's header (severity letter, month-day, microseconds, pid padded to 7,
 * file:line) and its key=value quoting are not what any Node logging library prints.
 * -v sets the verbosity; --vmodule raises it per module (glob on the module name without extension).
 */
import {basename} from 'node:path';
import {sourceLocation} from './source-location.js';

export type Severity = 'I' | 'W' | 'E' | 'F';

export interface VmoduleRule {
  pattern: string;
  level: number;
}

export interface KlogConfig {
  verbosity: number;
  vmodule: readonly VmoduleRule[];
  /** Where lines go; info to out, warnings and errors to err, as klog does with stderrthreshold. */
  out: (line: string) => void;
  err: (line: string) => void;
  now: () => Date;
  pid: number;
}

const defaultConfig: KlogConfig = {
  verbosity: 0,
  vmodule: [],
  out: (line) => process.stderr.write(line),
  err: (line) => process.stderr.write(line),
  now: () => new Date(),
  pid: process.pid,
};

let config: KlogConfig = {...defaultConfig};

export function configureKlog(partial: Partial<KlogConfig>): void {
  config = {...config, ...partial};
}

export function resetKlog(): void {
  config = {...defaultConfig};
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

/** The klog header for a line: `I1122 10:00:00.000000   12345 file.ts:12] `. */
export function klogHeader(severity: Severity, at: Date, pid: number, location: string): string {
  const micros = pad(at.getMilliseconds() * 1000, 6);
  return (
    `${severity}${pad(at.getMonth() + 1, 2)}${pad(at.getDate(), 2)} ` +
    `${pad(at.getHours(), 2)}:${pad(at.getMinutes(), 2)}:${pad(at.getSeconds(), 2)}.${micros} ` +
    `${String(pid).padStart(7, ' ')} ${location}] `
  );
}

/** klog quotes a value when it is a string with spaces, quotes or '=' (structured logging rules). */
export function formatKlogValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value instanceof Error) return JSON.stringify(value.message);
  if (value === undefined) return '<nil>';
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return String(value);
}

export function formatKlogLine(
  severity: Severity,
  at: Date,
  pid: number,
  location: string,
  msg: string,
  kv: readonly unknown[],
): string {
  let line = klogHeader(severity, at, pid, location) + JSON.stringify(msg);
  for (let i = 0; i < kv.length; i += 2) {
    line += ` ${String(kv[i])}=${formatKlogValue(kv[i + 1])}`;
  }
  return line + '\n';
}

function globToRegExp(glob: string): RegExp {
  const escaped = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`);
}

/** The verbosity in force for a module: the first matching --vmodule rule wins, else -v. */
export function verbosityFor(module: string, verbosity: number, vmodule: readonly VmoduleRule[]): number {
  const base = module.replace(/^.*\//, '').replace(/\.[tj]sx?$/, '');
  for (const rule of vmodule) {
    if (globToRegExp(rule.pattern).test(base) || globToRegExp(rule.pattern).test(module.replace(/\.[tj]sx?$/, ''))) {
      return rule.level;
    }
  }
  return verbosity;
}

/**
 * The caller's `file:line`, read from a stack trace (only when a line is written). Run from source,
 * that is the source file itself; run from the bundle, the line table the build wrote from the
 * bundle's source map gives the source file and line (./source-location.ts), and without one the
 * bundle file is named rather than pretending its line belongs to a source file.
 */
function callerLocation(module: string): string {
  const stack = new Error().stack?.split('\n') ?? [];
  // [0] "Error", [1] callerLocation, [2] emit, [3] Logger method, [4] the caller.
  const match = /\(?(?:file:\/\/)?([^()\s]+):(\d+):(\d+)\)?$/.exec(stack[4] ?? '');
  if (!match) return `${module}:0`;
  const [, path, line, column] = match as unknown as [string, string, string, string];
  if (/\.[cm]?js$/.test(path)) {
    const source = sourceLocation(path, Number(line), Number(column));
    if (source) return `${source.file}:${source.line}`;
  }
  return `${basename(path)}:${line}`;
}

export interface Logger {
  info(msg: string, ...kv: unknown[]): void;
  warning(msg: string, ...kv: unknown[]): void;
  error(msg: string, ...kv: unknown[]): void;
  /** A verbose logger: writes only when the verbosity for this module is at least `level`. */
  v(level: number): {info(msg: string, ...kv: unknown[]): void; enabled: boolean};
}

/** A logger for one module; `module` is the source file's name, shown in each line and matched by --vmodule. */
export function klog(module: string): Logger {
  const emit = (severity: Severity, msg: string, kv: unknown[]): void => {
    const line = formatKlogLine(severity, config.now(), config.pid, callerLocation(module), msg, kv);
    (severity === 'I' ? config.out : config.err)(line);
  };
  return {
    info: (msg, ...kv) => emit('I', msg, kv),
    warning: (msg, ...kv) => emit('W', msg, kv),
    error: (msg, ...kv) => emit('E', msg, kv),
    v(level) {
      const enabled = verbosityFor(module, config.verbosity, config.vmodule) >= level;
      return {enabled, info: (msg, ...kv) => (enabled ? emit('I', msg, kv) : undefined)};
    },
  };
}
