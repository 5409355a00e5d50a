/**
 * The error a value parser throws for text it cannot accept.
 *
 * It carries only the reason ("not a duration", "unsupported eviction signal foo"); parseOptionValue in
 * ./types.ts adds the option name, the bad value and the accepted form, so parsers need not know which
 * option they are parsing.
 */
export class ValueFormatError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'ValueFormatError';
  }
}

/** Splits a comma-separated list the way pflag and component-base do: items trimmed, empty items skipped. */
export function splitList(raw: string, separator = ','): string[] {
  return raw
    .split(separator)
    .map((item) => item.trim())
    .filter((item) => item !== '');
}
