/**
 * orch up's pass-through options (`--apiserver-arg key=value`, as k3s does): merged over orch up's
 * own settings for that daemon, then parsed with the daemon's own option table, so a bad value is
 * reported exactly as the daemon would report it.
 */
import {UserError} from '../../lib/errors.js';

/** The keys orch up sets for a daemon that the user's entries do not override (they get no warnings). */
export function setByUpOnly(defaults: Record<string, string>, userArgs: readonly string[]): Set<string> {
  const user = new Set(userArgs.map((arg) => arg.replace(/^--?/, '').split('=')[0]));
  return new Set(Object.keys(defaults).filter((key) => !user.has(key)));
}

/** `key=value` or `--key=value` entries; a later entry for the same key wins. */
export function mergeDaemonArgs(daemon: string, defaults: Record<string, string>, userArgs: readonly string[]): string[] {
  const merged = new Map(Object.entries(defaults));
  for (const arg of userArgs) {
    const text = arg.replace(/^--?/, '');
    const eq = text.indexOf('=');
    if (eq <= 0) throw new UserError(`--${daemon}-arg ${JSON.stringify(arg)}: expected key=value, e.g. --${daemon}-arg secure-port=7443`);
    merged.set(text.slice(0, eq), text.slice(eq + 1));
  }
  return [...merged].map(([k, v]) => `--${k}=${v}`);
}

/** The value a daemon's pass-through arguments give `key` (the last one wins, as in mergeDaemonArgs). */
export function passedValue(userArgs: readonly string[], key: string): string | undefined {
  let value: string | undefined;
  for (const arg of userArgs) {
    const text = arg.replace(/^--?/, '');
    const eq = text.indexOf('=');
    if (eq > 0 && text.slice(0, eq) === key) value = text.slice(eq + 1);
  }
  return value;
}
