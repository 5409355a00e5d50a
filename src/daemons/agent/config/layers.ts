/**
 * The effective configuration as a stack of layers, lowest first: defaults, the --config file, the
 * command-line flags, then each drop-in. Pure: the layers are already decoded.
 *
 * Precedence is the seed's ("command-line flags override the file; drop-in files from --config-dir
 * override both"), which differs from upstream (where flags win over drop-ins too).
 */
import jsonMergePatch from 'json-merge-patch';
import { parseOptionValue } from '../../../options/types.js';
import { optionValueToConfig } from './convert.js';
import { isMapField, type ConfigLayer } from './decode.js';
import { CONFIG_FIELDS, DEFAULT_EVICTION_HARD, EXTRA_DEFAULTS, FIELD_BY_PATH } from './schema.js';

export type ConfigSource = 'default' | 'file' | 'flag' | `drop-in:${string}`;

export interface FlatConfig {
  /** Field path -> file-form value. */
  values: Map<string, unknown>;
  /** Field path -> the layer that last set it. */
  sources: Map<string, ConfigSource>;
}

/** Every field's default in file form: the option table's default, else upstream's. */
export function defaultLayer(): Map<string, unknown> {
  const defaults = new Map<string, unknown>();
  for (const field of CONFIG_FIELDS) {
    if (field.path in EXTRA_DEFAULTS) defaults.set(field.path, structuredClone(EXTRA_DEFAULTS[field.path]));
    else if (field.spec.default !== undefined) {
      defaults.set(field.path, optionValueToConfig(field, parseOptionValue(field.spec, field.spec.default)));
    }
  }
  return defaults;
}

export function startFromDefaults(): FlatConfig {
  const values = defaultLayer();
  return { values, sources: new Map([...values.keys()].map((path) => [path, 'default' as const])) };
}

/** The --config file: each field it sets replaces the default whole (maps included, as upstream). */
export function applyFileLayer(config: FlatConfig, layer: ConfigLayer): void {
  for (const [path, value] of layer) {
    config.values.set(path, value);
    config.sources.set(path, 'file');
  }
}

/**
 * Explicitly given flags, in file form. Each replaces its field, except --feature-gates, which is
 * merged per gate as upstream does (gates named only in the file are kept).
 */
export function applyFlagLayer(config: FlatConfig, flags: ReadonlyMap<string, unknown>): void {
  for (const [path, value] of flags) {
    const current = config.values.get(path);
    const merged =
      FIELD_BY_PATH.get(path)?.spec.type === 'featureGates' && current && typeof current === 'object'
        ? { ...(current as object), ...(value as object) }
        : value;
    config.values.set(path, merged);
    config.sources.set(path, 'flag');
  }
}

/**
 * One drop-in, as a JSON merge patch (RFC 7386) over everything below it: map fields merge key by key,
 * lists and scalars are replaced, null removes (a removed field takes its default again).
 */
export function applyDropInLayer(config: FlatConfig, layer: ConfigLayer, source: `drop-in:${string}`, defaults: ReadonlyMap<string, unknown>): void {
  for (const [path, patch] of layer) {
    const field = FIELD_BY_PATH.get(path)!;
    if (patch === null) {
      if (defaults.has(path)) {
        config.values.set(path, structuredClone(defaults.get(path)));
        config.sources.set(path, 'default');
      } else {
        config.values.delete(path);
        config.sources.delete(path);
      }
      continue;
    }
    const current = config.values.get(path);
    const next = isMapField(field) ? jsonMergePatch.apply(structuredClone(current ?? {}), patch) : patch;
    config.values.set(path, next);
    config.sources.set(path, source);
  }
}

/** Defaults that depend on other fields, applied once all layers are in (upstream's SetDefaults rules). */
export function applyDerivedDefaults(config: FlatConfig): void {
  const { values, sources } = config;
  // "if nodeStatusUpdateFrequency is set explicitly, [nodeStatusReportFrequency] defaults to that value"
  if (!values.has('nodeStatusReportFrequency')) {
    const updateSetExplicitly = sources.get('nodeStatusUpdateFrequency') !== 'default';
    values.set('nodeStatusReportFrequency', updateSetExplicitly ? values.get('nodeStatusUpdateFrequency') : '5m0s');
    sources.set('nodeStatusReportFrequency', 'default');
  }
  // "SerializeImagePulls is default to true when MaxParallelImagePulls is not set, and false when [it] is set"
  const parallel = values.get('maxParallelImagePulls');
  if (typeof parallel === 'number' && parallel >= 2 && sources.get('serializeImagePulls') === 'default') {
    values.set('serializeImagePulls', false);
  }
  // mergeDefaultEvictionSettings: signals an explicit evictionHard leaves out keep their defaults.
  if (values.get('mergeDefaultEvictionSettings') === true && sources.get('evictionHard') !== 'default') {
    values.set('evictionHard', { ...DEFAULT_EVICTION_HARD, ...(values.get('evictionHard') as object | undefined) });
  }
}
