/**
 * Between a field's value in an AgentConfiguration file (JSON shapes as upstream writes them: durations
 * as Go duration strings, maps as objects, taints as objects) and the typed option value of
 * src/options/types.ts.
 *
 * Decoding goes through the option parsers (parseOptionValue) by writing each entry as the flag would
 * take it, so a file and a command line accept exactly the same values with the same reasons.
 */
import { OptionValueError, formatOptionValue, parseOptionValue } from '../../../options/types.js';
import type {
  DurationValue,
  EvictionDurations,
  EvictionQuantities,
  EvictionThreshold,
  MemoryReservation,
  MultiMap,
  PercentMap,
  Quantity,
  Taint,
  VmoduleEntry,
} from '../../../options/types.js';
import { formatEvictionValue } from '../../../options/value-eviction.js';
import type { ConfigField } from './schema.js';

/** A field value a file cannot hold. The loader adds the file's path. */
export class ConfigFieldError extends Error {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`field "${path}": ${reason}`);
    this.name = 'ConfigFieldError';
  }
}

type Json = unknown;

const describe = (value: Json) => JSON.stringify(value) ?? String(value);

function isPlainObject(value: Json): value is Record<string, Json> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses one flag-style text, turning the option error into one about the field. */
function parseAs(field: ConfigField, text: string, previous?: unknown): unknown {
  try {
    return parseOptionValue(field.spec, text, previous);
  } catch (error) {
    if (error instanceof OptionValueError) {
      throw new ConfigFieldError(field.path, `invalid value ${JSON.stringify(text)}: ${error.reason}; expected ${error.acceptedForm}`);
    }
    throw error;
  }
}

function expectString(field: ConfigField, value: Json, what = 'a string'): string {
  if (typeof value !== 'string') throw new ConfigFieldError(field.path, `expected ${what}, got ${describe(value)}`);
  return value;
}

function expectObject(field: ConfigField, value: Json, what: string): Record<string, Json> {
  if (!isPlainObject(value)) throw new ConfigFieldError(field.path, `expected ${what}, got ${describe(value)}`);
  return value;
}

function expectArray(field: ConfigField, value: Json, what: string): Json[] {
  if (!Array.isArray(value)) throw new ConfigFieldError(field.path, `expected ${what}, got ${describe(value)}`);
  return value;
}

/** Map entries rendered as flag text `<key><sep><value>`, parsed one by one so commas in values stay harmless. */
function parseEntries(field: ConfigField, value: Json, separator: string, what: string): unknown {
  const entries = Object.entries(expectObject(field, value, what));
  let parsed: unknown;
  for (const [key, entry] of entries) {
    const text = typeof entry === 'number' ? String(entry) : expectString(field, entry, `a string for key ${JSON.stringify(key)}`);
    parsed = parseAs(field, `${key}${separator}${text}`, parsed);
  }
  return parsed ?? (field.spec.type === 'evictionThresholds' ? [] : {});
}

function rejectUnknownKeys(field: ConfigField, object: Record<string, Json>, allowed: readonly string[], where: string): void {
  const unknown = Object.keys(object).find((key) => !allowed.includes(key));
  if (unknown !== undefined) throw new ConfigFieldError(field.path, `unknown field "${unknown}" in ${where}`);
}

/** Decodes and validates a file's value into the option's typed value. */
export function configToOptionValue(field: ConfigField, value: Json): unknown {
  const { spec } = field;
  switch (spec.type) {
    case 'bool':
      if (typeof value !== 'boolean') throw new ConfigFieldError(field.path, `expected true or false, got ${describe(value)}`);
      return value;
    case 'int':
    case 'int32':
    case 'float':
      if (typeof value !== 'number') throw new ConfigFieldError(field.path, `expected a number, got ${describe(value)}`);
      return parseAs(field, String(value));
    case 'quantity':
      // Upstream's Quantity also reads a bare JSON number.
      return parseAs(field, typeof value === 'number' ? String(value) : expectString(field, value, 'a quantity string such as 10Mi'));
    case 'string':
    case 'ip':
    case 'tlsVersion':
    case 'duration':
      return parseAs(field, expectString(field, value));
    case 'cidrs':
      // podCIDR is one string upstream; a dual-stack pair is written "v4,v6".
      return parseAs(field, expectString(field, value));
    case 'strings':
    case 'cipherSuites':
    case 'int32Slice': {
      let parsed: unknown = [];
      for (const item of expectArray(field, value, 'a list')) {
        const text = typeof item === 'number' ? String(item) : expectString(field, item, 'a list of strings');
        parsed = parseAs(field, text, parsed);
      }
      return parsed;
    }
    case 'keyValue': {
      const object = expectObject(field, value, 'a map of strings');
      for (const [key, entry] of Object.entries(object)) expectString(field, entry, `a string for key ${JSON.stringify(key)}`);
      return { ...object };
    }
    case 'featureGates': {
      const object = expectObject(field, value, 'a map of feature names to true or false');
      for (const [key, entry] of Object.entries(object)) {
        if (typeof entry !== 'boolean') throw new ConfigFieldError(field.path, `expected true or false for ${key}, got ${describe(entry)}`);
      }
      return { ...object };
    }
    case 'multimap': {
      const object = expectObject(field, value, 'a map of header names to lists of values');
      const result: MultiMap = {};
      for (const [key, entries] of Object.entries(object)) {
        result[key] = expectArray(field, entries, `a list of values for ${key}`).map((v) => expectString(field, v, `a list of strings for ${key}`));
      }
      return result;
    }
    case 'taints': {
      let parsed: unknown = [];
      for (const item of expectArray(field, value, 'a list of taints')) {
        const taint = expectObject(field, item, 'a taint {key, value, effect}');
        rejectUnknownKeys(field, taint, ['key', 'value', 'effect', 'timeAdded'], 'a taint');
        const key = expectString(field, taint.key ?? '', 'a string taint key');
        const effect = expectString(field, taint.effect ?? '', 'a string taint effect');
        const text = taint.value === undefined || taint.value === '' ? `${key}:${effect}` : `${key}=${expectString(field, taint.value)}:${effect}`;
        parsed = parseAs(field, text, parsed);
      }
      return parsed;
    }
    case 'evictionThresholds':
      return parseEntries(field, value, '<', 'a map of eviction signals to thresholds');
    case 'evictionDurations':
    case 'evictionQuantities':
    case 'percentPairs':
      return parseEntries(field, value, '=', 'a map');
    case 'reservedMemory': {
      let parsed: unknown = [];
      for (const item of expectArray(field, value, 'a list of {numaNode, limits}')) {
        const entry = expectObject(field, item, 'a {numaNode, limits} object');
        rejectUnknownKeys(field, entry, ['numaNode', 'limits'], 'a reserved memory entry');
        if (typeof entry.numaNode !== 'number') throw new ConfigFieldError(field.path, `expected a numeric numaNode, got ${describe(entry.numaNode)}`);
        const limits = Object.entries(expectObject(field, entry.limits, 'a limits map'))
          .map(([type, q]) => `${type}=${typeof q === 'number' ? q : expectString(field, q, 'a quantity string')}`)
          .join(',');
        parsed = parseAs(field, `${entry.numaNode}:${limits}`, parsed);
      }
      return parsed;
    }
    case 'vmodule': {
      const items = expectArray(field, value, 'a list of {filePattern, verbosity}').map((item) => {
        const entry = expectObject(field, item, 'a {filePattern, verbosity} object');
        rejectUnknownKeys(field, entry, ['filePattern', 'verbosity'], 'a vmodule entry');
        return `${expectString(field, entry.filePattern, 'a string filePattern')}=${describe(entry.verbosity)}`;
      });
      return items.length === 0 ? [] : parseAs(field, items.join(','));
    }
    default:
      throw new ConfigFieldError(field.path, `has no file form (${spec.type})`);
  }
}

/** The file form of a typed option value: what --print-config shows and drop-ins merge onto. */
export function optionValueToConfig(field: ConfigField, value: unknown): Json {
  switch (field.spec.type) {
    case 'bool':
    case 'int':
    case 'int32':
    case 'float':
    case 'string':
    case 'ip':
    case 'tlsVersion':
      return value;
    case 'duration':
      return (value as DurationValue).text;
    case 'quantity':
      return (value as Quantity).text;
    case 'cidrs':
      return (value as string[]).join(',');
    case 'strings':
    case 'cipherSuites':
    case 'int32Slice':
      return [...(value as unknown[])];
    case 'keyValue':
    case 'featureGates':
      return { ...(value as Record<string, unknown>) };
    case 'multimap':
      return Object.fromEntries(Object.entries(value as MultiMap).map(([k, v]) => [k, [...v]]));
    case 'taints':
      return (value as Taint[]).map((t) => (t.value === undefined ? { key: t.key, effect: t.effect } : { key: t.key, value: t.value, effect: t.effect }));
    case 'evictionThresholds':
      return Object.fromEntries((value as EvictionThreshold[]).map((t) => [t.signal, formatEvictionValue(t.value)]));
    case 'evictionDurations':
      return Object.fromEntries(Object.entries(value as EvictionDurations).map(([s, d]) => [s, d!.text]));
    case 'evictionQuantities':
      return Object.fromEntries(Object.entries(value as EvictionQuantities).map(([s, q]) => [s, formatEvictionValue(q!)]));
    case 'percentPairs':
      return Object.fromEntries(Object.entries(value as PercentMap).map(([k, p]) => [k, `${p}%`]));
    case 'reservedMemory':
      return (value as MemoryReservation[]).map((r) => ({
        numaNode: r.numaNode,
        limits: Object.fromEntries(Object.entries(r.limits).map(([type, q]) => [type, q.text])),
      }));
    case 'vmodule':
      return (value as VmoduleEntry[]).map((e) => ({ filePattern: e.pattern, verbosity: e.level }));
    default:
      return formatOptionValue(field.spec, value);
  }
}

/** Validates a file value and returns its canonical file form (`1m` -> `1m0s`, `1.5Gi` -> `1536Mi`). */
export function canonicalConfigValue(field: ConfigField, value: Json): Json {
  return optionValueToConfig(field, configToOptionValue(field, value));
}
