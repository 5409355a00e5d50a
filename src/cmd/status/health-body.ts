/**
 * Reads the bodies of the health endpoints (`/livez?verbose`, `/readyz?verbose`, `/healthz?verbose`
 * and the single-check endpoints) in upstream's format (shared/reference/health.md §2-3), as served
 * by orch's API server, controller manager and agent. Pure: text in, checks out.
 *
 * Hand-written because the format is a handful of fixed line shapes that no library parses.
 */

export type CheckState = 'ok' | 'failed' | 'excluded';

export interface HealthCheckLine {
  name: string;
  state: CheckState;
  /** The group named by `excluded with <group>: ok`. */
  group?: string;
  /** The text after `failed: ` when it is not upstream's `reason withheld` (server logs carry it). */
  reason?: string;
}

export interface ParsedHealthBody {
  /** `passed`/`failed` from the closing `<label> check passed|failed` line (or a bare `ok`); `unknown` when there is none. */
  verdict: 'passed' | 'failed' | 'unknown';
  /** The endpoint's own name from the closing line (`livez`, `readyz`, `healthz`). */
  label?: string;
  checks: HealthCheckLine[];
  /** `warn: ...` lines, without the prefix. */
  warnings: string[];
}

const WITHHELD = 'reason withheld';

/** One check line, or undefined for any other line. The excluded shapes are tried before the plain `ok`. */
function parseCheckLine(line: string): HealthCheckLine | undefined {
  let m = /^\[\+\](.+) excluded with (.+): ok$/.exec(line);
  if (m) return {name: m[1]!, state: 'excluded', group: m[2]!};
  m = /^\[\+\](.+) excluded: ok$/.exec(line);
  if (m) return {name: m[1]!, state: 'excluded'};
  m = /^\[\+\](.+) ok$/.exec(line);
  if (m) return {name: m[1]!, state: 'ok'};
  m = /^\[-\](.+?) failed: (.*)$/.exec(line);
  if (m) return m[2] === WITHHELD || m[2] === '' ? {name: m[1]!, state: 'failed'} : {name: m[1]!, state: 'failed', reason: m[2]!};
  return undefined;
}

/** Parses a root health body; lines of other shapes (an HTML page, a Status object) are ignored. */
export function parseHealthBody(body: string): ParsedHealthBody {
  const result: ParsedHealthBody = {verdict: 'unknown', checks: [], warnings: []};
  // The non-verbose success body is exactly `ok`, without a newline.
  if (body.trim() === 'ok') return {...result, verdict: 'passed'};
  for (const raw of body.split('\n')) {
    const line = raw.trimEnd();
    const check = parseCheckLine(line);
    if (check) {
      result.checks.push(check);
      continue;
    }
    if (line.startsWith('warn: ')) {
      result.warnings.push(line.slice('warn: '.length));
      continue;
    }
    const closing = /^(\S+) check (passed|failed)$/.exec(line);
    if (closing) {
      result.label = closing[1]!;
      result.verdict = closing[2] as 'passed' | 'failed';
    }
  }
  return result;
}

/**
 * The reason a single-check endpoint (`/readyz/<name>`) gives for a failing check: its body is
 * `internal server error: <error text>\n` (Go's http.Error), unlike the root, which withholds it.
 * Undefined when the check passes or the body is not of that shape.
 */
export function parseCheckReason(statusCode: number, body: string): string | undefined {
  if (statusCode < 400) return undefined;
  const m = /^internal server error: ([\s\S]*?)\n?$/.exec(body);
  const reason = m?.[1]?.trim();
  return reason ? reason : undefined;
}
