/**
 * Kubernetes resource quantities (k8s.io/apimachinery resource.Quantity): parsing and canonical text.
 *
 * Hand-written because no maintained npm package implements the upstream grammar together with its
 * canonical String() form (1.5Gi prints as 1536Mi, 0.1 as 100m, 1000 as 1k), which messages such as the
 * eviction manager's "Threshold quantity: 100Mi" depend on. Exact arithmetic uses BigInt: a quantity is
 * held as `unscaled * 10^scale`.
 */

export interface Quantity {
  /** Canonical text, as upstream's Quantity.String() prints it. */
  text: string;
  /** The amount in base units (bytes, cores...): 100m -> 0.1, 1Gi -> 1073741824. */
  value: number;
}

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const DECIMAL_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['n', -9], ['u', -6], ['m', -3], ['', 0], ['k', 3], ['M', 6], ['G', 9], ['T', 12], ['P', 15], ['E', 18],
]);
const BINARY_SUFFIXES: ReadonlyMap<string, number> = new Map([
  ['Ki', 10], ['Mi', 20], ['Gi', 30], ['Ti', 40], ['Pi', 50], ['Ei', 60],
]);
const DECIMAL_SUFFIX_BY_EXPONENT = new Map([...DECIMAL_SUFFIXES].map(([suffix, exp]) => [exp, suffix]));
const BINARY_SUFFIX_BY_EXPONENT = new Map([...BINARY_SUFFIXES].map(([suffix, exp]) => [exp, suffix]));

/** Upstream's own description of the grammar, quoted in its error message. */
export const QUANTITY_PATTERN = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";

// Sign, digits with at most one decimal point (at least one digit), then the suffix.
const SYNTAX = /^([+-]?)(\d*)(?:\.(\d*))?([eEinumkKMGTP]*[-+]?\d*)$/;

export class QuantityError extends Error {}

/** Parses a quantity; throws QuantityError for anything upstream's ParseQuantity rejects. */
export function parseQuantity(text: string): Quantity {
  const match = SYNTAX.exec(text);
  // Upstream accepts a lone "." or sign as zero; we require a digit, since such input is always a typo.
  if (!match || (match[2] === '' && !match[3])) {
    throw new QuantityError(`quantities must match the regular expression '${QUANTITY_PATTERN}'`);
  }
  const [, sign, whole, fraction = '', suffix] = match;
  const interpreted = interpretSuffix(suffix);
  if (!interpreted) throw new QuantityError("unable to parse quantity's suffix");

  let unscaled = BigInt(`${whole}${fraction}` || '0');
  let scale = -fraction.length;
  if (interpreted.base === 10) scale += interpreted.exponent;
  else unscaled *= 1n << BigInt(interpreted.exponent);

  // Upstream rounds any non-zero amount finer than a nano *up* to the nano, "so that asking for some
  // resource gives some resource".
  if (scale < -9) {
    const divisor = 10n ** BigInt(-9 - scale);
    unscaled = (unscaled + divisor - 1n) / divisor;
    scale = -9;
  }
  if (sign === '-') unscaled = -unscaled;
  return {
    text: canonicalText(unscaled, scale, interpreted.format),
    value: Number(`${unscaled}e${scale}`),
  };
}

function interpretSuffix(suffix: string): { base: 2 | 10; exponent: number; format: Format } | undefined {
  const decimal = DECIMAL_SUFFIXES.get(suffix);
  if (decimal !== undefined) return { base: 10, exponent: decimal, format: 'DecimalSI' };
  const binary = BINARY_SUFFIXES.get(suffix);
  if (binary !== undefined) return { base: 2, exponent: binary, format: 'BinarySI' };
  const exponent = /^[eE]([-+]?\d+)$/.exec(suffix);
  if (exponent) return { base: 10, exponent: Number(exponent[1]), format: 'DecimalExponent' };
  return undefined;
}

/** Upstream's CanonicalizeBytes: the largest suffix that keeps the number an integer. */
function canonicalText(unscaled: bigint, scale: number, format: Format): string {
  if (unscaled === 0n) return '0';
  if (format === 'BinarySI') {
    const integer = scale >= 0 ? unscaled * 10n ** BigInt(scale) : undefined;
    const exact = integer !== undefined || unscaled % 10n ** BigInt(-scale) === 0n;
    const whole = integer ?? (exact ? unscaled / 10n ** BigInt(-scale) : 0n);
    // Fractions and amounts below 1024 are printed in decimal SI form.
    if (exact && (whole <= -1024n || whole >= 1024n)) {
      let number = whole;
      let exponent = 0;
      while (exponent < 60 && number % 1024n === 0n) {
        number /= 1024n;
        exponent += 10;
      }
      return `${number}${BINARY_SUFFIX_BY_EXPONENT.get(exponent) ?? ''}`;
    }
    format = 'DecimalSI';
  }
  // Strip trailing zeros into the exponent, then lower the exponent to a multiple of three.
  let number = unscaled;
  let exponent = scale;
  while (number % 10n === 0n) {
    number /= 10n;
    exponent += 1;
  }
  const remainder = ((exponent % 3) + 3) % 3;
  number *= 10n ** BigInt(remainder);
  exponent -= remainder;
  if (format === 'DecimalSI') {
    const suffix = DECIMAL_SUFFIX_BY_EXPONENT.get(exponent);
    if (suffix !== undefined) return `${number}${suffix}`;
  }
  return exponent === 0 ? `${number}` : `${number}e${exponent}`;
}
