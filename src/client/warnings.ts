/**
 * Server warnings: the `Warning` response headers (RFC 7234 §5.5: `299 - "text" ["date"]`, several
 * per header separated by commas) parsed exactly as client-go's ParseWarningHeaders does, and the
 * writer kubectl installs: `Warning: <text>` on stderr, each distinct text once, counted for
 * `--warnings-as-errors`.
 */

export interface WarningHeader {
  code: number;
  agent: string;
  text: string;
}

const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A quoted-string with backslash escapes; returns the text and what follows the closing quote. */
function parseQuotedString(input: string): {text: string; rest: string} {
  if (input.length === 0) throw new Error('invalid quoted string: 0-length');
  if (input[0] !== '"') throw new Error('invalid quoted string: missing initial quote');
  let text = '';
  let escaping = false;
  for (let i = 1; i < input.length; i++) {
    const c = input[i];
    if (c === '"' && !escaping) return {text, rest: input.slice(i + 1).trim()};
    if (c === '\\' && !escaping) {
      escaping = true;
      continue;
    }
    text += c;
    escaping = false;
  }
  throw new Error('invalid quoted string: missing closing quote');
}

/** Parses the first warning of a header value; returns it and the remaining (comma-separated) values. */
export function parseWarningHeader(header: string): {warning: WarningHeader; rest: string} {
  const trimmed = header.trim();
  const first = trimmed.indexOf(' ');
  const second = first < 0 ? -1 : trimmed.indexOf(' ', first + 1);
  if (second < 0) throw new Error('invalid warning header: fewer than 3 segments');
  const code = trimmed.slice(0, first);
  const agent = trimmed.slice(first + 1, second);
  const textAndRest = trimmed.slice(second + 1);
  if (!/^[0-9]{3}$/.test(code)) throw new Error('invalid warning header: code segment is not 3 digits between 100-299');
  if (agent.length === 0) throw new Error('invalid warning header: empty agent segment');
  if (CONTROL.test(agent)) throw new Error('invalid warning header: invalid agent');
  if (textAndRest.length === 0) throw new Error('invalid warning header: empty text segment');
  let parsed: {text: string; rest: string};
  try {
    parsed = parseQuotedString(textAndRest);
  } catch (error) {
    throw new Error(`invalid warning header: ${(error as Error).message}`);
  }
  if (CONTROL.test(parsed.text)) throw new Error('invalid warning header: invalid text');
  let rest = parsed.rest;
  if (rest.startsWith('"')) {
    // An optional quoted warn-date: skipped, as client-go does.
    const end = rest.indexOf('"', 1);
    if (end < 0) throw new Error('invalid warning header: unterminated date segment');
    rest = rest.slice(end + 1).trim();
  }
  if (rest.length > 0) {
    if (rest[0] !== ',') throw new Error('invalid warning header: unexpected token after warn-date');
    rest = rest.slice(1).trim();
  }
  return {warning: {code: Number(code), agent, text: parsed.text}, rest};
}

/** Every warning of every `Warning` header value; a malformed value stops that value only. */
export function parseWarningHeaders(values: readonly string[]): {warnings: WarningHeader[]; errors: string[]} {
  const warnings: WarningHeader[] = [];
  const errors: string[] = [];
  for (let value of values) {
    while (value.length > 0) {
      try {
        const {warning, rest} = parseWarningHeader(value);
        warnings.push(warning);
        value = rest;
      } catch (error) {
        errors.push((error as Error).message);
        break;
      }
    }
  }
  return {warnings, errors};
}

/** Receives the server warnings of every response. */
export interface WarningHandler {
  handleWarning(warning: WarningHeader): void;
}

/**
 * kubectl's warning writer: only code 299 with a text is shown (other codes are cache warnings
 * from intermediaries), each distinct text once, as `Warning: <text>`.
 */
export class WarningWriter implements WarningHandler {
  private readonly seen = new Set<string>();
  /** How many warnings were written (what `--warnings-as-errors` counts). */
  written = 0;

  constructor(
    private readonly write: (text: string) => void,
    private readonly options: {color?: boolean; deduplicate?: boolean} = {},
  ) {}

  handleWarning({code, text}: WarningHeader): void {
    if (code !== 299 || text.length === 0) return;
    if (this.options.deduplicate !== false && this.seen.has(text)) return;
    this.seen.add(text);
    this.written += 1;
    // client-go's colored form: bold yellow "Warning:".
    const label = this.options.color ? '\u001b[33;1mWarning:\u001b[0m' : 'Warning:';
    this.write(`${label} ${text}\n`);
  }
}

/** kubectl's `--warnings-as-errors` failure text. */
export function warningsAsErrorsMessage(count: number): string | undefined {
  if (count === 0) return undefined;
  return count === 1 ? '1 warning received' : `${count} warnings received`;
}
