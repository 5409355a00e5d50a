/**
 * The host checks the agent makes before starting (--fail-swap-on, --fail-cgroupv1,
 * --protect-kernel-defaults). Each is a pure function over an injected reader and returns the message
 * to refuse start with (naming the option that turns the check off), or undefined when all is well.
 */

/** Reads a file's text, or undefined when it does not exist. */
export type TextReader = (path: string) => string | undefined;
export type ExistsCheck = (path: string) => boolean;

export const PROC_SWAPS = '/proc/swaps';
export const CGROUP2_CONTROLLERS = '/sys/fs/cgroup/cgroup.controllers';

/** /proc/swaps is a header line plus one line per active swap area. */
export function isSwapOn(procSwaps: string): boolean {
  return procSwaps.trim().split('\n').length > 1;
}

export function checkSwap(failSwapOn: boolean, read: TextReader): string | undefined {
  if (!failSwapOn) return undefined;
  // Upstream treats a missing /proc/swaps (no swap support compiled in) as swap off.
  const content = read(PROC_SWAPS);
  return content !== undefined && isSwapOn(content)
    ? 'running with swap on is not supported, please disable swap or set --fail-swap-on flag to false'
    : undefined;
}

/** The unified (v2) hierarchy has cgroup.controllers at its root; v1 and hybrid hosts do not. */
export function checkCgroupV1(failCgroupV1: boolean, exists: ExistsCheck): string | undefined {
  if (!failCgroupV1 || exists(CGROUP2_CONTROLLERS)) return undefined;
  return (
    'agent is configured to not run on a host using cgroup v1. cgroup v1 support is unsupported and will be ' +
    'removed in a future release; please use cgroup v2 or set --fail-cgroupv1 flag to false'
  );
}

/** The tunables upstream's setupKernelTunables expects, in its order. */
export const KERNEL_DEFAULTS: ReadonlyArray<readonly [name: string, expected: number]> = [
  ['vm.overcommit_memory', 1],
  ['vm.panic_on_oom', 0],
  ['kernel.panic', 10],
  ['kernel.panic_on_oops', 1],
  ['kernel.keys.root_maxkeys', 1000000],
  ['kernel.keys.root_maxbytes', 25000000],
];

export function sysctlPath(name: string): string {
  return `/proc/sys/${name.replace(/\./g, '/')}`;
}

/**
 * With --protect-kernel-defaults the agent refuses to start when a tunable differs, instead of changing
 * it. Problems are joined as upstream's error aggregate prints them (one alone, several in brackets).
 */
export function checkKernelDefaults(protectKernelDefaults: boolean, read: TextReader): string | undefined {
  if (!protectKernelDefaults) return undefined;
  const problems: string[] = [];
  for (const [name, expected] of KERNEL_DEFAULTS) {
    const path = sysctlPath(name);
    const text = read(path);
    const actual = text === undefined ? NaN : Number.parseInt(text.trim(), 10);
    if (Number.isNaN(actual)) problems.push(`cannot read kernel flag ${name} from ${path}`);
    else if (actual !== expected) problems.push(`invalid kernel flag: ${name}, expected value: ${expected}, actual value: ${actual}`);
  }
  if (problems.length === 0) return undefined;
  const aggregate = problems.length === 1 ? problems[0] : `[${problems.join(', ')}]`;
  return `${aggregate}; please set them with sysctl or set --protect-kernel-defaults flag to false`;
}
