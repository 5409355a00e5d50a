/**
 * Parsers for the map-shaped flag types of component-base and pflag: key=value maps, feature gates,
 * name:value multimaps, stringToString, key=percentage pairs and klog's vmodule.
 *
 * Each takes the previous value of a repeated flag and accumulates onto it, as upstream's flag types do.
 */
import { ValueFormatError, splitList } from './value-error.js';
import { parseBool, parseInteger } from './value-scalars.js';

export type KeyValueMap = Record<string, string>;
export type FeatureGateMap = Record<string, boolean>;
export type MultiMap = Record<string, string[]>;
export type PercentMap = Record<string, number>;
export interface VmoduleEntry {
  /** A file name glob, as klog matches it. */
  pattern: string;
  level: number;
}

/** component-base MapStringString: `a=b,c=d`; a repeated flag merges, later keys win. */
export function parseKeyValue(raw: string, previous?: KeyValueMap): KeyValueMap {
  const result: KeyValueMap = { ...previous };
  for (const pair of splitList(raw)) {
    const [key, value] = splitPair(pair, '=');
    result[key] = value;
  }
  return result;
}

/** component-base ConfigurationMap (--runtime-config): `a=b,c`; a key without `=` has the empty value. */
export function parseConfigurationMap(raw: string, previous?: KeyValueMap): KeyValueMap {
  const result: KeyValueMap = { ...previous };
  for (const pair of splitList(raw)) {
    if (pair.includes('=')) {
      const [key, value] = splitPair(pair, '=');
      result[key] = value;
    } else result[pair.trim()] = '';
  }
  return result;
}

/** component-base featuregate Set: `Name=true,Other=false`, or `component:Name=true`. */
export function parseFeatureGates(raw: string, previous?: FeatureGateMap): FeatureGateMap {
  const result: FeatureGateMap = { ...previous };
  for (const pair of splitList(raw)) {
    const [key, value] = splitPair(pair, '=', `missing bool value for ${pair}`);
    try {
      result[key] = parseBool(value);
    } catch {
      throw new ValueFormatError(`invalid value of ${key}=${value}, not a boolean`);
    }
  }
  return result;
}

/** component-base ColonSeparatedMultimapStringString: `name:value`, same-named entries append in order. */
export function parseMultimap(raw: string, previous?: MultiMap): MultiMap {
  const result: MultiMap = Object.fromEntries(Object.entries(previous ?? {}).map(([k, v]) => [k, [...v]]));
  for (const pair of splitList(raw)) {
    const [key, value] = splitPair(pair, ':');
    (result[key] ??= []).push(value);
  }
  return result;
}

/**
 * `memory=50%`: percentages are integers from 0 to 100 (upstream's ParseQOSReserved). The number is
 * stored as written: 50 for 50%.
 */
export function parsePercentPairs(raw: string, previous?: PercentMap): PercentMap {
  const result: PercentMap = { ...previous };
  for (const pair of splitList(raw)) {
    const [key, value] = splitPair(pair, '=');
    const match = /^(\d+)%$/.exec(value);
    if (!match) throw new ValueFormatError(`percentage expected for ${key}, got ${JSON.stringify(value)}`);
    const percent = Number(match[1]);
    if (percent > 100) throw new ValueFormatError(`percentage for ${key} must be between 0 and 100`);
    result[key] = percent;
  }
  return result;
}

/**
 * pflag stringToString. With a single `=` the whole text is one pair, so `metric,label=a,b` keeps its
 * commas (the metric allow-list form). With several `=` the text is one CSV record, so pairs containing
 * commas must be double-quoted. The empty text and `[]` (the seeds' empty default) are the empty map.
 */
export function parseStringToString(raw: string, previous?: KeyValueMap): KeyValueMap {
  const text = raw.trim();
  if (text === '' || text === '[]') return { ...previous };
  const equalSigns = text.split('=').length - 1;
  if (equalSigns === 0) throw new ValueFormatError(`${text} must be formatted as key=value`);
  const records = equalSigns === 1 ? [text.replace(/^"+|"+$/g, '')] : parseCsvRecord(text);
  const result: KeyValueMap = { ...previous };
  for (const record of records) {
    const at = record.indexOf('=');
    if (at < 0) throw new ValueFormatError(`${record} must be formatted as key=value`);
    result[record.slice(0, at)] = record.slice(at + 1);
  }
  return result;
}

/** Prints a stringToString map so that parseStringToString reads it back. */
export function formatStringToString(map: KeyValueMap): string {
  const records = Object.entries(map).map(([k, v]) => `${k}=${v}`);
  if (records.length === 1) return records[0];
  return records.map((r) => (/[",\s]/.test(r) ? `"${r.replace(/"/g, '""')}"` : r)).join(',');
}

/** klog's vmodule: `pattern=N,...` with N a non-negative integer. */
export function parseVmodule(raw: string): VmoduleEntry[] {
  return splitList(raw).map((item) => {
    const parts = item.split('=');
    if (parts.length !== 2 || parts[0] === '' || parts[1] === '') {
      throw new ValueFormatError(`${JSON.stringify(item)} is not of the form pattern=N`);
    }
    let level: number;
    try {
      level = parseInteger(parts[1], 0, 2147483647);
    } catch {
      throw new ValueFormatError(`level ${JSON.stringify(parts[1])} of ${parts[0]} is not a non-negative integer`);
    }
    return { pattern: parts[0], level };
  });
}

/** Splits `key<sep>value` at the first separator; both sides trimmed; the key must not be empty. */
export function splitPair(pair: string, separator: string, missing?: string): [string, string] {
  const at = pair.indexOf(separator);
  if (at < 0) throw new ValueFormatError(missing ?? `malformed pair ${JSON.stringify(pair)}, expect key${separator}value`);
  const key = pair.slice(0, at).trim();
  if (key === '') throw new ValueFormatError(`empty key in ${JSON.stringify(pair)}`);
  return [key, pair.slice(at + 1).trim()];
}

/** One record of Go's encoding/csv (RFC 4180): fields split on commas, double quotes escape. */
function parseCsvRecord(text: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    let field = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new ValueFormatError('extraneous or missing " in quoted-field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        field += text[i++];
      }
      if (i < text.length && text[i] !== ',') throw new ValueFormatError('extraneous or missing " in quoted-field');
    } else {
      const end = text.indexOf(',', i);
      field = text.slice(i, end < 0 ? text.length : end);
      if (field.includes('"')) throw new ValueFormatError('bare " in non-quoted-field');
      i = end < 0 ? text.length : end;
    }
    fields.push(field);
    if (i >= text.length) return fields;
    i++; // the comma
  }
}
