/**
 * Go's time.Duration grammar and canonical printing (time.ParseDuration and Duration.String).
 *
 * Hand-written because the seeds print every default in Go's exact form (1m0s, 8760h0m0s, 300ms) and
 * no npm package reproduces Go's format byte for byte. Arithmetic is done in BigInt nanoseconds, as Go
 * does in int64, so that 8760h and 100ns both stay exact.
 */

const NANOS_PER_UNIT: ReadonlyMap<string, bigint> = new Map([
  ['ns', 1n],
  ['us', 1_000n],
  ['\u00b5s', 1_000n], // U+00B5 MICRO SIGN, the one Go prints
  ['\u03bcs', 1_000n], // U+03BC GREEK SMALL LETTER MU, also accepted by Go
  ['ms', 1_000_000n],
  ['s', 1_000_000_000n],
  ['m', 60_000_000_000n],
  ['h', 3_600_000_000_000n],
]);

const MAX_INT64 = (1n << 63n) - 1n;
const NANOS_PER_MS = 1_000_000n;

/** Parses a Go duration into nanoseconds; throws an Error with Go's message on bad input. */
export function parseDurationNs(text: string): bigint {
  const invalid = () => new Error(`time: invalid duration ${JSON.stringify(text)}`);
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest[0] === '-';
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') throw invalid();

  let total = 0n;
  while (rest !== '') {
    const number = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    const [consumed, whole = '', fraction] = number;
    if (whole === '' && (fraction === undefined || fraction === '')) throw invalid();
    rest = rest.slice(consumed.length);

    const unitMatch = /^[^\d.]*/.exec(rest)![0];
    if (unitMatch === '') throw new Error(`time: missing unit in duration ${JSON.stringify(text)}`);
    const unit = NANOS_PER_UNIT.get(unitMatch);
    if (unit === undefined) {
      throw new Error(`time: unknown unit ${JSON.stringify(unitMatch)} in duration ${JSON.stringify(text)}`);
    }
    rest = rest.slice(unitMatch.length);

    // Go truncates a fraction finer than a nanosecond (1.0000000001s is 1s).
    let value = BigInt(whole || '0') * unit;
    if (fraction) value += (BigInt(fraction) * unit) / 10n ** BigInt(fraction.length);
    total += value;
    if (total > MAX_INT64 + (negative ? 1n : 0n)) throw invalid();
  }
  return negative ? -total : total;
}

/** Parses a Go duration into milliseconds (fractional for sub-millisecond durations). */
export function parseDuration(text: string): number {
  return nanosToMs(parseDurationNs(text));
}

/** Prints nanoseconds exactly as Go's Duration.String() does. */
export function formatDurationNs(nanos: bigint): string {
  const negative = nanos < 0n;
  let u = negative ? -nanos : nanos;
  let text: string;
  if (u < 1_000_000_000n) {
    // Below one second Go switches to the largest unit that keeps an integer part: 1.5ms, 300µs, 100ns.
    if (u === 0n) return '0s';
    if (u < 1_000n) text = `${u}ns`;
    else if (u < 1_000_000n) text = `${decimal(u, 3)}\u00b5s`;
    else text = `${decimal(u, 6)}ms`;
  } else {
    const seconds = decimal(u % 60_000_000_000n, 9);
    u /= 60_000_000_000n; // now whole minutes
    text = `${seconds}s`;
    if (u > 0n) {
      text = `${u % 60n}m${text}`;
      u /= 60n; // now whole hours
      if (u > 0n) text = `${u}h${text}`;
    }
  }
  return negative ? `-${text}` : text;
}

/** Prints milliseconds in Go's canonical form (1m0s, 300ms, 8760h0m0s). */
export function formatDuration(ms: number): string {
  return formatDurationNs(msToNanos(ms));
}

export function msToNanos(ms: number): bigint {
  const whole = Math.trunc(ms);
  return BigInt(whole) * NANOS_PER_MS + BigInt(Math.round((ms - whole) * 1e6));
}

export function nanosToMs(nanos: bigint): number {
  return Number(nanos / NANOS_PER_MS) + Number(nanos % NANOS_PER_MS) / 1e6;
}

/** value / 10^digits printed without trailing zeros (Go's fmtFrac + fmtInt). */
function decimal(value: bigint, digits: number): string {
  const scale = 10n ** BigInt(digits);
  const fraction = (value % scale).toString().padStart(digits, '0').replace(/0+$/, '');
  return fraction === '' ? `${value / scale}` : `${value / scale}.${fraction}`;
}

/** How a parsed duration option is represented: milliseconds plus Go's canonical text. */
export interface DurationValue {
  ms: number;
  text: string;
}

/** Parses a Go duration into its option representation; throws an Error with Go's message. */
export function toDurationValue(text: string): DurationValue {
  const nanos = parseDurationNs(text.trim());
  return { ms: nanosToMs(nanos), text: formatDurationNs(nanos) };
}
