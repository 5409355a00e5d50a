/**
 * The shape of one command-line option, declared once as data.
 *
 * Everything about an option (oclif flag, --help text, configuration-file key, validation, the
 * "not implemented yet" warning, `orch options`) is derived from an OptionSpec, so a new option is one
 * row in a table, never code in several places.
 */

/** Value types our parsers know. Each has a real parser in ./types.ts. */
export type ValueType =
  | 'string'
  | 'strings' // comma-separated list, repeatable
  | 'bool' // --flag, --flag=true, --flag=false
  | 'int' // 64-bit-safe JS integer
  | 'int32' // integer within int32 range
  | 'float'
  | 'duration' // Go duration: 300ms, 1m0s, 8760h0m0s
  | 'quantity' // resource quantity: 1Gi, 100m, 1.5
  | 'keyValue' // key=value,key=value (mapStringString); repeatable
  | 'configurationMap' // key[=value],... (component-base ConfigurationMap: a bare key has the empty value); repeatable
  | 'featureGates' // key=bool or component:key=bool, comma-separated
  | 'multimap' // name:value, repeatable (colonSeparatedMultimapStringString)
  | 'taints' // <key>=<value>:<effect>, comma-separated
  | 'evictionThresholds' // memory.available<1Gi,nodefs.available<10%
  | 'evictionDurations' // memory.available=1m30s (signal=duration)
  | 'evictionQuantities' // imagefs.available=2Gi (signal=quantity or percent)
  | 'percentPairs' // memory=50% (key=percentage)
  | 'reservedMemory' // 0:memory=1Gi,hugepages-1M=2Gi; repeatable
  | 'portRange' // N1-N2
  | 'cidrs' // at most two CIDRs, dual-stack
  | 'ip' // one IP address
  | 'tlsVersion' // VersionTLS10..VersionTLS13
  | 'cipherSuites' // cipher suite names, comma-separated
  | 'int32Slice' // 23,24
  | 'vmodule' // pattern=N,...
  | 'version' // --version[=raw|vX.Y.Z]
  | 'dryRun' // --dry-run[=none|server|client]; bare means "unchanged"
  | 'stringToString'; // <a>,<b>=<c>,<d>;... (metric label allow-lists)

import type { NameSet } from '../api/names.js';

export type Program = 'apiserver' | 'controller-manager' | 'agent' | 'patch';

export interface OptionSpec {
  /** Long name without dashes, e.g. `secure-port`. */
  name: string;
  /** One-letter shorthand without the dash, e.g. `v`. */
  short?: string;
  /** The parser used for the value. */
  type: ValueType;
  /** The type exactly as the seed writes it (`int32`, `key=value pairs`, `string N1-N2`...). */
  seedType: string;
  /**
   * The default exactly as the seed writes it (`1m0s`, `none`, `runtime default suites`...).
   * The seed-table test compares this text with the seed.
   */
  seedDefault: string;
  /**
   * The effective default as a raw command-line value our parser accepts, or undefined when the
   * option has none (the seed says `none`, `empty`, or describes a computed default).
   */
  default?: string;
  /** Help text in our own words. */
  help: string;
  /** The seed section the option comes from, used to group --help. */
  section: string;
  /** Deprecated options still work and print one warning when used. A string names the replacement. */
  deprecated?: boolean | string;
  /** Whether setting the option has an effect yet. When false, setting it prints a warning. */
  implemented: boolean;
  /** Accepted values, for string options with a closed set. */
  enum?: readonly string[];
  /** Inclusive numeric bounds, for int, int32 and float. */
  min?: number;
  max?: number;
  /** May be given more than once (list and map types accumulate). */
  repeatable?: boolean;
  /** Key in the agent's configuration file (AgentConfiguration), when the option has one. */
  configKey?: string;
  /** Not in the seeds: an option orch adds (for example --data-dir). */
  orchOnly?: boolean;
  /**
   * The default under a name set, for options whose default is a product identifier (the seed's
   * `orch-system` is `kube-system` under upstream's names). `default` stays the seed's; this one is
   * used when the option is not given, with the name set in effect (see src/api/names.ts).
   */
  namesDefault?: (names: NameSet) => string;
}

export type OptionTable = readonly OptionSpec[];
