/**
 * The metric options every daemon shares upstream (component-base/metrics Options):
 * `--show-hidden-metrics-for-version`, `--disabled-metrics`, `--allow-metric-labels` and
 * `--allow-metric-labels-manifest`. Validation and the rules of precedence follow upstream: only the
 * previous minor version may show hidden metrics; the command-line allow-list replaces the manifest
 * when both are given. Pure apart from reading the manifest file.
 */
import {readFile} from 'node:fs/promises';
import {parse as parseYaml} from 'yaml';

export interface MetricsOptions {
  /** Deprecated metrics hidden in this release are registered again. */
  showHidden: boolean;
  /** Metric names that are never registered. */
  disabled: ReadonlySet<string>;
  /** metric -> label -> the values it may take; any other value is exported as "unexpected". */
  allowLists: ReadonlyMap<string, ReadonlyMap<string, ReadonlySet<string>>>;
}

export const NO_METRICS_OPTIONS: MetricsOptions = {showHidden: false, disabled: new Set(), allowLists: new Map()};

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const ALLOW_LIST_KEY = /^[a-zA-Z_:][a-zA-Z0-9_:]*,[a-zA-Z_][a-zA-Z0-9_]*$/;

export interface MetricsOptionValues {
  showHiddenMetricsForVersion?: string;
  disabledMetrics?: readonly string[];
  allowMetricLabels?: Readonly<Record<string, string>>;
  allowMetricLabelsManifest?: string;
}

/** The options' errors, in upstream's words; empty when they are valid. */
export function validateMetricsOptions(values: MetricsOptionValues, current: {major: number; minor: number}): string[] {
  const errors: string[] = [];
  const target = values.showHiddenMetricsForVersion;
  if (target) {
    const valid = `${current.major}.${current.minor - 1}`;
    if (target !== valid) errors.push(`--show-hidden-metrics-for-version must be omitted or have the value '${valid}'. Only the previous minor version is allowed`);
  }
  for (const name of values.disabledMetrics ?? []) {
    if (!METRIC_NAME.test(name)) errors.push(`--disabled-metrics must be fully qualified metric names matching "${METRIC_NAME.source}", got "${name}"`);
  }
  errors.push(...allowListErrors(values.allowMetricLabels, '--allow-metric-labels'));
  return errors;
}

function allowListErrors(mapping: Readonly<Record<string, string>> | undefined, source: string): string[] {
  for (const key of Object.keys(mapping ?? {})) {
    if (!ALLOW_LIST_KEY.test(key)) return [`${source} must have a list of kv pair with format \`metricName,labelName=labelValue, labelValue,...\`, got "${key}"`];
  }
  return [];
}

/** The allow-lists from `metric,label` keys and comma-separated values. */
export function parseAllowLists(mapping: Readonly<Record<string, string>>): Map<string, Map<string, Set<string>>> {
  const lists = new Map<string, Map<string, Set<string>>>();
  for (const [key, values] of Object.entries(mapping)) {
    const [metric, label] = key.split(',') as [string, string];
    let labels = lists.get(metric);
    if (!labels) lists.set(metric, (labels = new Map()));
    labels.set(label, new Set(values.replace(/^'(.*)'$/, '$1').split(',').map((v) => v.trim())));
  }
  return lists;
}

/** Reads the manifest: a YAML map of the same `metric,label: 'v1,v2'` entries as the flag. */
export async function readAllowListManifest(file: string): Promise<Record<string, string>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`--allow-metric-labels-manifest: failed to read allow list manifest ${file}: ${(error as Error).message}`);
  }
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    throw new Error(`--allow-metric-labels-manifest: failed to parse allow list manifest ${file}: ${(error as Error).message}`);
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data)) throw new Error(`--allow-metric-labels-manifest: ${file} must be a map of "metric,label" to "value,value"`);
  const mapping: Record<string, string> = {};
  for (const [key, value] of Object.entries(data as Record<string, unknown>)) {
    if (typeof value !== 'string') throw new Error(`--allow-metric-labels-manifest: ${file}: the value of "${key}" must be a string of comma-separated values`);
    mapping[key] = value;
  }
  const errors = allowListErrors(mapping, 'invalid allow list mapping in manifest');
  if (errors.length) throw new Error(`--allow-metric-labels-manifest: ${file}: ${errors[0]}`);
  return mapping;
}

/** Validates the values and resolves them (reading the manifest unless the flag gives the lists). */
export async function loadMetricsOptions(values: MetricsOptionValues, current: {major: number; minor: number}): Promise<MetricsOptions> {
  const errors = validateMetricsOptions(values, current);
  if (errors.length) throw new Error(errors.join('; '));
  const flag = values.allowMetricLabels && Object.keys(values.allowMetricLabels).length > 0 ? values.allowMetricLabels : undefined;
  // Upstream: the flag overrides the manifest file (which is still validated when given).
  const manifest = values.allowMetricLabelsManifest ? await readAllowListManifest(values.allowMetricLabelsManifest) : undefined;
  return {
    showHidden: Boolean(values.showHiddenMetricsForVersion),
    disabled: new Set((values.disabledMetrics ?? []).filter((n) => n !== '')),
    allowLists: parseAllowLists(flag ?? manifest ?? {}),
  };
}
