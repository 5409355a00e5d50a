/**
 * A health check: a name (shown as `[+]<name> ok` and served at `/<root>/<name>`; it may contain
 * `/`), an optional group (`?exclude=<group>` skips every check of the group), and a function that
 * throws or rejects when unhealthy. The error message is what `/<root>/<name>` and the server log
 * show; the root endpoints withhold it.
 */
export interface HealthCheck {
  readonly name: string;
  readonly group?: string;
  check(): Promise<void> | void;
}

/** Always passes (upstream's PingHealthz). */
export const pingCheck: HealthCheck = {name: 'ping', check: () => {}};

export function namedCheck(name: string, check: () => Promise<void> | void, group?: string): HealthCheck {
  return group === undefined ? {name, check} : {name, group, check};
}

/** The text a failed check reports: the error's message (Go's %v of an error). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Runs a check; undefined when it passed, the error text when it failed. */
export async function runCheck(check: HealthCheck): Promise<string | undefined> {
  try {
    await check.check();
    return undefined;
  } catch (error) {
    return errorText(error);
  }
}

/**
 * Verbosity-levelled log sink of the health handlers: failures at level 2 and unmatched
 * exclusions at level 6, as upstream; wire it to klog's V(level).
 */
export type HealthLogger = (verbosity: number, message: string) => void;
