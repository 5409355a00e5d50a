/**
 * The fields of an AgentConfiguration file, as one list: each field is either backed by a command-line
 * option (its `configKey` in src/options/agent.ts, so the option table stays the single source of the
 * field's type, bounds and default) or a config-only field declared here with upstream's default.
 *
 * Config-only fields reuse the OptionSpec shape so that one set of converters (./convert.ts) decodes,
 * validates and prints both kinds.
 */
import { names } from '../../../api/names.js';
import { agentOptions } from '../../../options/agent.js';
import type { OptionSpec } from '../../../options/spec.js';

export const agentConfigApiVersion = (): string => names().agentConfig.apiVersion;
export const agentConfigKind = (): string => names().agentConfig.kind;

/**
 * A top-level key as a file of the active name set spells it: orch's `orchAPIQPS`, `orchReserved`...
 * are upstream's `kubeAPIQPS`, `kubeReserved`... in a KubeletConfiguration (upstream's names).
 */
export function fileKey(internal: string): string {
  const product = names().product;
  return product !== 'orch' && internal.startsWith('orch') ? `${product}${internal.slice('orch'.length)}` : internal;
}

/** The field path of a top-level key of a file (the inverse of fileKey); undefined for orch's spelling in an upstream file. */
export function internalKey(key: string): string | undefined {
  const product = names().product;
  if (product === 'orch') return key;
  if (key.startsWith('orch')) return undefined;
  const renamed = `orch${key.slice(product.length)}`;
  return key.startsWith(product) && FIELD_BY_PATH.has(renamed) ? renamed : key;
}

export interface ConfigField {
  /** Dotted path in the file, e.g. `maxPods` or `authentication.webhook.cacheTTL`. */
  path: string;
  /** The option's spec, or a synthetic one for config-only fields (flag undefined then). */
  spec: OptionSpec;
  /** The command-line option that sets this field, when there is one. */
  flag?: string;
  /** Holds a file path: a relative value in a file is resolved against that file's directory. */
  pathRef?: boolean;
}

/** A config-only field: the spec's `default` is upstream's v1beta1 default, as option text. */
function configOnly(path: string, type: OptionSpec['type'], defaultText: string | undefined, extra: Partial<OptionSpec> = {}): ConfigField {
  return {
    path,
    spec: {
      name: path, type, seedType: type, seedDefault: defaultText ?? 'none', default: defaultText,
      help: '', section: 'config', implemented: false, configKey: path, ...extra,
    },
  };
}

/**
 * Upstream KubeletConfiguration fields that have no flag, with their v1beta1 defaults
 * (pkg/kubelet/apis/config/v1beta1/defaults.go). Only fields meaningful to orch's agent are kept;
 * anything else in a file is an unknown field.
 */
const CONFIG_ONLY_FIELDS: readonly ConfigField[] = [
  // 5m, or nodeStatusUpdateFrequency when that is set explicitly (see ./load.ts).
  configOnly('nodeStatusReportFrequency', 'duration', undefined),
  configOnly('nodeLeaseDurationSeconds', 'int32', '40', { min: 1 }),
  configOnly('shutdownGracePeriod', 'duration', '0s'),
  configOnly('shutdownGracePeriodCriticalPods', 'duration', '0s'),
  configOnly('enableProfilingHandler', 'bool', 'true'),
  configOnly('enableDebugFlagsHandler', 'bool', 'true'),
  configOnly('enableSystemLogHandler', 'bool', 'true'),
  configOnly('containerLogMaxWorkers', 'int32', '1', { min: 1 }),
  configOnly('containerLogMonitorInterval', 'duration', '10s'),
  configOnly('imageMaximumGCAge', 'duration', '0s'),
  configOnly('maxParallelImagePulls', 'int32', undefined, { min: 1 }),
  configOnly('memoryThrottlingFactor', 'float', '0.9'),
  configOnly('configMapAndSecretChangeDetectionStrategy', 'string', 'Watch', { enum: ['Get', 'Cache', 'Watch'] }),
  configOnly('mergeDefaultEvictionSettings', 'bool', 'false'),
];

/** Upstream's KubeletConfigurationPathRefs: the fields whose relative paths are file-relative. */
const PATH_FIELDS = new Set(['staticPodPath', 'tlsCertFile', 'tlsPrivateKeyFile', 'authentication.x509.clientCAFile', 'resolvConf']);

export const CONFIG_FIELDS: readonly ConfigField[] = [
  ...agentOptions
    .filter((spec) => spec.configKey !== undefined)
    .map((spec): ConfigField => ({ path: spec.configKey!, spec, flag: spec.name })),
  ...CONFIG_ONLY_FIELDS,
].map((field) => (PATH_FIELDS.has(field.path) ? { ...field, pathRef: true } : field));

export const FIELD_BY_PATH: ReadonlyMap<string, ConfigField> = new Map(CONFIG_FIELDS.map((f) => [f.path, f]));

/** Every object that holds fields (`authentication`, `authentication.webhook`, `logging.options`...). */
export const OBJECT_PATHS: ReadonlySet<string> = new Set(
  CONFIG_FIELDS.flatMap((f) => {
    const parts = f.path.split('.');
    return parts.slice(1).map((_, i) => parts.slice(0, i + 1).join('.'));
  }),
);

/**
 * Upstream's default evictionHard for Linux (reference eviction.md, "Defaults"). The option has no
 * default text because the seed says "none"; the configuration does have one.
 */
export const DEFAULT_EVICTION_HARD: Readonly<Record<string, string>> = {
  'memory.available': '100Mi',
  'nodefs.available': '10%',
  'nodefs.inodesFree': '5%',
  'imagefs.available': '15%',
  'imagefs.inodesFree': '5%',
};

/** Fields with an upstream default the option table cannot express (a map, or a value the seed calls none). */
export const EXTRA_DEFAULTS: Readonly<Record<string, unknown>> = {
  evictionHard: DEFAULT_EVICTION_HARD,
  evictionMaxPodGracePeriod: 0,
  'logging.verbosity': 0,
};
