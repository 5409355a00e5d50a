/**
 * The value types of option specs: one parser, one accepted-form description and one printer per
 * ValueType. Parsers live in ./duration.ts, ./quantity.ts and ./value-*.ts; this module dispatches on
 * spec.type and turns a parser's reason into an error that names the option, the value and the form.
 */
import type { OptionSpec, ValueType } from './spec.js';
import { type DurationValue, toDurationValue } from './duration.js';
import { type Quantity, QuantityError, parseQuantity } from './quantity.js';
import { ValueFormatError } from './value-error.js';
import {
  INT32_MAX,
  INT32_MIN,
  checkBounds,
  checkEnum,
  describeBounds,
  parseBool,
  parseFloatValue,
  parseInt32Slice,
  parseInteger,
  parseStrings,
} from './value-scalars.js';
import {
  type FeatureGateMap,
  type KeyValueMap,
  type MultiMap,
  type PercentMap,
  type VmoduleEntry,
  formatStringToString,
  parseFeatureGates,
  parseConfigurationMap,
  parseKeyValue,
  parseMultimap,
  parsePercentPairs,
  parseStringToString,
  parseVmodule,
} from './value-maps.js';
import { type Taint, TAINT_EFFECTS, formatTaint, parseTaints } from './value-labels.js';
import {
  type EvictionDurations,
  type EvictionQuantities,
  type EvictionThreshold,
  formatEvictionValue,
  parseEvictionDurations,
  parseEvictionQuantities,
  parseEvictionThresholds,
} from './value-eviction.js';
import { type MemoryReservation, formatReservedMemory, parseReservedMemory } from './value-resources.js';
import { type PortRange, formatPortRange, parseCidrs, parseIp, parsePortRange } from './value-network.js';
import { TLS_VERSIONS, type TlsVersionName, parseCipherSuites, parseTlsVersion } from './value-tls.js';
import { type DryRunMode, type VersionRequest, formatVersion, parseDryRun, parseVersion } from './value-cli.js';

export type { DurationValue } from './duration.js';
export type { Quantity } from './quantity.js';
export type { FeatureGateMap, KeyValueMap, MultiMap, PercentMap, VmoduleEntry } from './value-maps.js';
export type { Taint, TaintEffect } from './value-labels.js';
export type {
  EvictionDurations,
  EvictionQuantities,
  EvictionSignal,
  EvictionThreshold,
  EvictionValue,
} from './value-eviction.js';
export type { MemoryReservation } from './value-resources.js';
export type { PortRange } from './value-network.js';
export type { TlsVersionName } from './value-tls.js';
export type { DryRunMode, VersionRequest } from './value-cli.js';
export { CIPHER_SUITE_OPENSSL_NAMES, NODE_TLS_VERSION, defaultServingCiphers, toOpenSslCipherList } from './value-tls.js';
export { EVICTION_SIGNALS, isDisabledThreshold } from './value-eviction.js';

/** The parsed representation of each value type. */
export interface ParsedValues {
  string: string;
  strings: string[];
  bool: boolean;
  int: number;
  int32: number;
  float: number;
  duration: DurationValue;
  quantity: Quantity;
  keyValue: KeyValueMap;
  configurationMap: KeyValueMap;
  featureGates: FeatureGateMap;
  multimap: MultiMap;
  taints: Taint[];
  evictionThresholds: EvictionThreshold[];
  evictionDurations: EvictionDurations;
  evictionQuantities: EvictionQuantities;
  percentPairs: PercentMap;
  reservedMemory: MemoryReservation[];
  portRange: PortRange;
  cidrs: string[];
  ip: string;
  tlsVersion: TlsVersionName;
  cipherSuites: string[];
  int32Slice: number[];
  vmodule: VmoduleEntry[];
  /** undefined for --version=false. */
  version: VersionRequest | undefined;
  dryRun: DryRunMode;
  stringToString: KeyValueMap;
}
export type ParsedValue<T extends ValueType = ValueType> = ParsedValues[T];

/** A command-line value an option cannot take. The message names the option, the value and the form. */
export class OptionValueError extends Error {
  constructor(
    readonly option: string,
    readonly value: string,
    readonly reason: string,
    readonly acceptedForm: string,
  ) {
    super(`invalid value ${JSON.stringify(value)} for --${option}: ${reason}; expected ${acceptedForm}`);
    this.name = 'OptionValueError';
  }
}

interface TypeHandler<T extends ValueType> {
  parse(raw: string, spec: OptionSpec, previous?: ParsedValues[T]): ParsedValues[T];
  describe(spec: OptionSpec): string;
  format(value: ParsedValues[T], spec: OptionSpec): string;
}

const commaJoin = (values: readonly unknown[]) => values.join(',');
const pairs = (map: Record<string, unknown>, separator: string) =>
  Object.keys(map)
    .sort()
    .map((key) => `${key}${separator}${map[key]}`)
    .join(',');

function quantityOrReason(text: string): Quantity {
  try {
    return parseQuantity(text.trim());
  } catch (error) {
    if (error instanceof QuantityError) throw new ValueFormatError('not a quantity');
    throw error;
  }
}

function numberForm(noun: string, spec: OptionSpec, min?: number, max?: number): string {
  const bounds = describeBounds(spec.min ?? min, spec.max ?? max);
  return bounds ? `${noun} that ${bounds.replace(/^must be/, 'is')}` : noun;
}

const HANDLERS: { [T in ValueType]: TypeHandler<T> } = {
  string: {
    parse: (raw, spec) => checkEnum(raw, spec.enum),
    describe: (spec) => (spec.enum ? `one of ${spec.enum.join(', ')}` : 'a string'),
    format: (value) => value,
  },
  strings: {
    parse: (raw, spec, previous) => [
      ...(previous ?? []),
      ...parseStrings(raw).map((item) => checkEnum(item, spec.enum, true)),
    ],
    describe: (spec) =>
      spec.enum ? `a comma-separated list of ${spec.enum.join(', ')}` : 'a comma-separated list of strings',
    format: commaJoin,
  },
  bool: {
    parse: (raw) => parseBool(raw),
    describe: () => 'true or false',
    format: (value) => String(value),
  },
  int: {
    parse: (raw, spec) => checkBounds(parseInteger(raw), spec.min, spec.max),
    describe: (spec) => numberForm('an integer', spec),
    format: (value) => String(value),
  },
  int32: {
    parse: (raw, spec) => checkBounds(parseInteger(raw, INT32_MIN, INT32_MAX), spec.min, spec.max),
    describe: (spec) =>
      spec.min !== undefined || spec.max !== undefined
        ? numberForm('an integer', spec)
        : `an integer between ${INT32_MIN} and ${INT32_MAX}`,
    format: (value) => String(value),
  },
  float: {
    parse: (raw, spec) => checkBounds(parseFloatValue(raw), spec.min, spec.max),
    describe: (spec) => numberForm('a number such as 0.5', spec),
    format: (value) => String(value),
  },
  duration: {
    parse: (raw) => {
      try {
        return toDurationValue(raw);
      } catch {
        throw new ValueFormatError('not a duration');
      }
    },
    describe: () => 'a Go duration such as 300ms, 1m0s or 1h30m',
    format: (value) => value.text,
  },
  quantity: {
    parse: quantityOrReason,
    describe: () => 'a resource quantity such as 100m, 1.5, 128Mi, 1Gi or 1e3',
    format: (value) => value.text,
  },
  keyValue: {
    parse: (raw, _spec, previous) => parseKeyValue(raw, previous),
    describe: () => 'comma-separated key=value pairs',
    format: (value) => pairs(value, '='),
  },
  configurationMap: {
    parse: (raw, _spec, previous) => parseConfigurationMap(raw, previous),
    describe: () => 'comma-separated key=value pairs; a key alone has the empty value',
    format: (value) => pairs(value, '='),
  },
  featureGates: {
    parse: (raw, _spec, previous) => parseFeatureGates(raw, previous),
    describe: () => 'comma-separated Name=true|false pairs, a name optionally prefixed by component:',
    format: (value) => pairs(value, '='),
  },
  multimap: {
    parse: (raw, _spec, previous) => parseMultimap(raw, previous),
    describe: () => 'comma-separated name:value pairs such as a:hello,b:again',
    format: (value) =>
      Object.keys(value)
        .sort()
        .flatMap((key) => value[key].map((v) => `${key}:${v}`))
        .join(','),
  },
  taints: {
    parse: (raw, _spec, previous) => parseTaints(raw, previous),
    describe: () =>
      `comma-separated taints <key>=<value>:<effect> or <key>:<effect>, the effect one of ${TAINT_EFFECTS.join(', ')}`,
    format: (value) => value.map(formatTaint).join(','),
  },
  evictionThresholds: {
    parse: (raw, _spec, previous) => parseEvictionThresholds(raw, previous),
    describe: () => 'comma-separated <signal><<quantity or percentage> such as memory.available<1Gi,nodefs.available<10%',
    format: (value) => value.map((t) => `${t.signal}<${formatEvictionValue(t.value)}`).join(','),
  },
  evictionDurations: {
    parse: (raw, _spec, previous) => parseEvictionDurations(raw, previous),
    describe: () => 'comma-separated <signal>=<duration> such as memory.available=1m30s',
    format: (value) =>
      Object.entries(value)
        .map(([signal, d]) => `${signal}=${d!.text}`)
        .join(','),
  },
  evictionQuantities: {
    parse: (raw, _spec, previous) => parseEvictionQuantities(raw, previous),
    describe: () => 'comma-separated <signal>=<quantity or percentage> such as imagefs.available=2Gi,nodefs.available=5%',
    format: (value) =>
      Object.entries(value)
        .map(([signal, q]) => `${signal}=${formatEvictionValue(q!)}`)
        .join(','),
  },
  percentPairs: {
    parse: (raw, _spec, previous) => parsePercentPairs(raw, previous),
    describe: () => 'comma-separated <resource>=<percentage> pairs such as memory=50%',
    format: (value) =>
      Object.keys(value)
        .sort()
        .map((key) => `${key}=${value[key]}%`)
        .join(','),
  },
  reservedMemory: {
    parse: (raw, _spec, previous) => parseReservedMemory(raw, previous),
    describe: () => '<NUMA node>:<type>=<quantity>[,<type>=<quantity>...] such as 0:memory=1Gi,hugepages-1M=2Gi, entries separated by ;',
    format: (value) => formatReservedMemory(value),
  },
  portRange: {
    parse: (raw) => parsePortRange(raw),
    describe: () => 'a port range N1-N2 such as 30000-32767 (or N, or N+M), ports between 1 and 65535',
    format: (value) => formatPortRange(value),
  },
  cidrs: {
    parse: (raw) => parseCidrs(raw),
    describe: () => 'a CIDR, or an IPv4 and an IPv6 CIDR separated by a comma, such as 10.0.0.0/24,fd00::/108',
    format: commaJoin,
  },
  ip: {
    parse: (raw) => parseIp(raw),
    describe: () => 'an IPv4 or IPv6 address',
    format: (value) => value,
  },
  tlsVersion: {
    parse: (raw) => parseTlsVersion(raw),
    describe: () => `one of ${TLS_VERSIONS.join(', ')}`,
    format: (value) => value,
  },
  cipherSuites: {
    parse: (raw, _spec, previous) => parseCipherSuites(raw, previous),
    describe: () =>
      'a comma-separated list of Go cipher suite names such as TLS_AES_128_GCM_SHA256,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
    format: commaJoin,
  },
  int32Slice: {
    parse: (raw, _spec, previous) => [...(previous ?? []), ...parseInt32Slice(raw)],
    describe: () => 'a comma-separated list of 32-bit integers such as 23,24',
    format: commaJoin,
  },
  vmodule: {
    parse: (raw) => parseVmodule(raw),
    describe: () => 'comma-separated pattern=N pairs such as file*=2,other=3, N a non-negative integer',
    format: (value) => value.map((e) => `${e.pattern}=${e.level}`).join(','),
  },
  version: {
    parse: (raw) => parseVersion(raw),
    describe: () => 'true, false, raw, or a version such as v1.32.0',
    format: (value) => formatVersion(value),
  },
  dryRun: {
    parse: (raw) => parseDryRun(raw),
    describe: () => 'one of none, server, client',
    format: (value) => value,
  },
  stringToString: {
    parse: (raw, _spec, previous) => parseStringToString(raw, previous),
    describe: () => 'comma-separated key=value pairs; with several pairs, quote a pair that contains commas',
    format: (value) => formatStringToString(value),
  },
};

function handlerOf(spec: OptionSpec): TypeHandler<ValueType> {
  const handler = HANDLERS[spec.type] as TypeHandler<ValueType> | undefined;
  if (!handler) throw new Error(`option --${spec.name} has unknown value type ${String(spec.type)}`);
  return handler;
}

/**
 * Parses one command-line value of an option. `previous` is the value so far when the flag is
 * repeated: list and map types append or merge onto it, scalar types ignore it (the last one wins).
 */
export function parseOptionValue(spec: OptionSpec, raw: string, previous?: unknown): unknown {
  const handler = handlerOf(spec);
  try {
    return handler.parse(raw, spec, previous as ParsedValue | undefined);
  } catch (error) {
    if (error instanceof ValueFormatError) {
      throw new OptionValueError(spec.name, raw, error.reason, handler.describe(spec));
    }
    throw error;
  }
}

/** The accepted form of an option's value, for errors and --help ("a Go duration such as 300ms..."). */
export function describeAcceptedForm(spec: OptionSpec): string {
  return handlerOf(spec).describe(spec);
}

/** A parsed value as canonical text that parseOptionValue accepts again (durations in Go form...). */
export function formatOptionValue(spec: OptionSpec, value: unknown): string {
  return handlerOf(spec).format(value as ParsedValue, spec);
}
