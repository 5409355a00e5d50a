/**
 * oclif flags derived from an option table. oclif parses the command line and renders --help; the
 * values stay raw strings here and are turned into typed values by ./resolve.ts, so every type's
 * error message comes from one parser and every bad value exits 1 the same way.
 */
import * as Flags from '@oclif/core/flags';
import type {OptionSpec, OptionTable} from './spec.js';

const TYPE_LABEL: Record<OptionSpec['type'], string> = {
  string: 'string',
  strings: 'strings',
  bool: 'bool',
  int: 'int',
  int32: 'int32',
  float: 'float',
  duration: 'duration',
  quantity: 'quantity',
  keyValue: 'key=value,',
  configurationMap: 'key[=value],',
  featureGates: 'key=true|false,',
  multimap: 'name:value',
  taints: 'key=value:Effect,',
  evictionThresholds: 'signal<quantity|N%,',
  evictionDurations: 'signal=duration,',
  evictionQuantities: 'signal=quantity|N%,',
  percentPairs: 'key=N%,',
  reservedMemory: 'numa:name=quantity,',
  portRange: 'N1-N2',
  cidrs: 'cidr[,cidr]',
  ip: 'ip',
  tlsVersion: 'VersionTLS1x',
  cipherSuites: 'suite,',
  int32Slice: 'int,',
  vmodule: 'pattern=N,',
  version: 'true|raw|vX.Y.Z',
  dryRun: 'none|server|client',
  stringToString: 'key=value,',
};

export function typeLabel(spec: OptionSpec): string {
  return spec.enum && spec.type === 'string' ? spec.enum.join('|') : TYPE_LABEL[spec.type];
}

/** The help line: our text, then the default, deprecation and whether it works yet. */
export function describeOption(spec: OptionSpec): string {
  const parts = [spec.help];
  if (spec.default !== undefined && spec.default !== '') parts.push(`(default ${spec.default})`);
  else if (!['none', 'empty', '[]', ''].includes(spec.seedDefault) && spec.type !== 'bool') {
    parts.push(`(default: ${spec.seedDefault})`);
  }
  if (spec.deprecated) {
    parts.push(typeof spec.deprecated === 'string' ? `[deprecated: ${spec.deprecated}]` : '[deprecated]');
  }
  if (!spec.implemented) parts.push('[no effect yet]');
  return parts.join(' ');
}

/** oclif handles -h/--help itself; every other option becomes a flag. */
export function oclifFlagsFor(table: OptionTable): Record<string, any> {
  const flags: Record<string, any> = {};
  for (const spec of table) {
    if (spec.name === 'help') continue;
    const common = {
      description: describeOption(spec),
      helpGroup: spec.section,
      ...(spec.short && spec.short !== 'h' ? {char: spec.short as any} : {}),
    };
    const option = {...common, helpValue: typeLabel(spec)};
    // Lists and maps may be repeated and accumulate, as with pflag; oclif collects them.
    // A scalar given twice is refused by oclif with a clear message.
    flags[spec.name] =
      spec.type === 'bool'
        ? Flags.boolean({...common, allowNo: true})
        : spec.repeatable
          ? Flags.string({...option, multiple: true, multipleNonGreedy: true})
          : Flags.string(option);
  }
  return flags;
}
