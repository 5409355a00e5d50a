/**
 * The bodies of the root health endpoints (/healthz, /livez, /readyz), exactly as upstream's
 * handleRootHealth writes them (health.md §2). Pure apart from running the checks, so that the
 * HTTP handler, the dashboard and the tests share it.
 */
import {runCheck, type HealthCheck} from './check.js';

export type CheckOutcome =
  | {name: string; state: 'ok'}
  | {name: string; state: 'excluded'; group?: string}
  | {name: string; state: 'failed'; error: string};

export interface RootResult {
  /** 200 when every check passed or was excluded, else 500. */
  statusCode: 200 | 500;
  body: string;
  outcomes: CheckOutcome[];
  /** Exclusions that matched no check, sorted (for the warn line). */
  unmatchedExclusions: string[];
  /** Lines for the server log, with their verbosity. */
  logs: {verbosity: number; message: string}[];
}

/** Go's %q of a plain string (JSON's quoting matches for printable text). */
const quote = (text: string): string => JSON.stringify(text);

/**
 * Evaluates the checks of root `label` (healthz, livez, readyz) sequentially, in order, skipping
 * excluded ones. `exclude` values match check names first, then group names.
 */
export async function evaluateRoot(
  label: string,
  checks: readonly HealthCheck[],
  query: {verbose: boolean; exclude: readonly string[]},
): Promise<RootResult> {
  const excluded = new Set(query.exclude);
  const matched = new Set<string>();
  const outcomes: CheckOutcome[] = [];
  let lines = '';
  let failedLog = '';
  const failed: string[] = [];

  for (const check of checks) {
    if (excluded.has(check.name)) {
      matched.add(check.name);
      outcomes.push({name: check.name, state: 'excluded'});
      lines += `[+]${check.name} excluded: ok\n`;
      continue;
    }
    if (check.group !== undefined && excluded.has(check.group)) {
      matched.add(check.group);
      outcomes.push({name: check.name, state: 'excluded', group: check.group});
      lines += `[+]${check.name} excluded with ${check.group}: ok\n`;
      continue;
    }
    const error = await runCheck(check);
    if (error === undefined) {
      outcomes.push({name: check.name, state: 'ok'});
      lines += `[+]${check.name} ok\n`;
    } else {
      outcomes.push({name: check.name, state: 'failed', error});
      // The root endpoints are public (system:public-info-viewer): the reason goes to the log only.
      lines += `[-]${check.name} failed: reason withheld\n`;
      failedLog += `[-]${check.name} failed: ${error}\n`;
      failed.push(check.name);
    }
  }

  const logs: RootResult['logs'] = [];
  const unmatchedExclusions = [...excluded].filter((name) => !matched.has(name)).sort();
  if (unmatchedExclusions.length > 0) {
    const list = unmatchedExclusions.map(quote).join(',');
    lines += `warn: some health checks cannot be excluded: no matches for ${list}\n`;
    logs.push({verbosity: 6, message: `cannot exclude some health checks, no health checks are installed matching ${list}`});
  }

  if (failed.length > 0) {
    logs.push({verbosity: 2, message: `${failed.join(',')} check failed: ${label}\n${failedLog}`});
    // Always verbose on failure; Go's http.Error appends the final newline.
    return {statusCode: 500, body: `${lines}${label} check failed\n`, outcomes, unmatchedExclusions, logs};
  }
  const body = query.verbose ? `${lines}${label} check passed\n` : 'ok';
  return {statusCode: 200, body, outcomes, unmatchedExclusions, logs};
}

/** The query of a root request: `verbose` by presence (any value), `exclude` repeatable. */
export function parseHealthQuery(query: URLSearchParams): {verbose: boolean; exclude: string[]} {
  return {verbose: query.has('verbose'), exclude: query.getAll('exclude')};
}
