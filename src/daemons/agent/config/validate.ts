/**
 * Validation of the merged configuration, once, after every layer (as upstream validates only the final
 * result). Each field goes back to its typed option value, so the option parsers and the cross-option
 * rules of src/options/rules.ts judge a file exactly as they judge a command line.
 */
import { validateOptionRules } from '../../../options/rules.js';
import type { DurationValue } from '../../../options/types.js';
import { ConfigFieldError, configToOptionValue } from './convert.js';
import type { FlatConfig } from './layers.js';
import { validateNodeLabels } from './node-labels.js';
import { CONFIG_FIELDS } from './schema.js';

export interface ValidatedConfig {
  /** Typed value of every option (flag-only options from the command line, the rest from the merge). */
  optionValues: Record<string, unknown>;
  /** Typed value of every config field, keyed by field path (config-only fields included). */
  fieldValues: Record<string, unknown>;
  problems: string[];
}

/** `--image-gc-low-threshold` -> `imageGCLowThresholdPercent (--image-gc-low-threshold)`, so a file user finds the field. */
function nameFields(message: string): string {
  return message.replace(/--([a-z0-9-]+)/g, (whole, flag: string) => {
    const field = CONFIG_FIELDS.find((f) => f.flag === flag);
    return field ? `${field.path} (${whole})` : whole;
  });
}

export function validateMergedConfig(
  config: FlatConfig,
  flagValues: Readonly<Record<string, unknown>>,
  flagsSet: ReadonlySet<string>,
): ValidatedConfig {
  const problems: string[] = [];
  const fieldValues: Record<string, unknown> = {};
  const optionValues: Record<string, unknown> = {};
  const explicit = new Set<string>();

  // Flag-only options (--orchconfig, --node-labels...) take part in the rules too.
  const fieldFlags = new Set(CONFIG_FIELDS.flatMap((f) => (f.flag ? [f.flag] : [])));
  for (const [name, value] of Object.entries(flagValues)) {
    if (fieldFlags.has(name)) continue;
    optionValues[name] = value;
    if (flagsSet.has(name)) explicit.add(name);
  }
  for (const field of CONFIG_FIELDS) {
    if (!config.values.has(field.path)) continue;
    try {
      const value = configToOptionValue(field, config.values.get(field.path));
      fieldValues[field.path] = value;
      if (field.flag) optionValues[field.flag] = value;
    } catch (error) {
      if (!(error instanceof ConfigFieldError)) throw error;
      problems.push(error.message);
      continue;
    }
    if (field.flag && config.sources.get(field.path) !== 'default') explicit.add(field.flag);
  }
  if (problems.length > 0) return { optionValues, fieldValues, problems };

  // Node labels get upstream's own message (./node-labels.ts), not the generic rule's.
  const labels = optionValues['node-labels'] as Record<string, string> | undefined;
  const labelProblem = labels ? validateNodeLabels(labels) : undefined;
  if (labelProblem) problems.push(labelProblem);
  const { 'node-labels': _labels, ...ruleValues } = optionValues;
  problems.push(...validateOptionRules('agent', ruleValues, explicit).map(nameFields));
  problems.push(...configOnlyRules(fieldValues));
  return { optionValues, fieldValues, problems };
}

/** Upstream's validation of the fields without a flag (pkg/kubelet/apis/config/validation). */
function configOnlyRules(values: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const ms = (path: string) => (values[path] as DurationValue | undefined)?.ms;
  const text = (path: string) => (values[path] as DurationValue | undefined)?.text;
  const shutdown = ms('shutdownGracePeriod') ?? 0;
  const critical = ms('shutdownGracePeriodCriticalPods') ?? 0;
  if (shutdown < 0 || critical < 0) problems.push('shutdownGracePeriod and shutdownGracePeriodCriticalPods must not be negative');
  if (critical > shutdown) {
    problems.push(`shutdownGracePeriodCriticalPods (${text('shutdownGracePeriodCriticalPods')}) must be <= shutdownGracePeriod (${text('shutdownGracePeriod')})`);
  }
  const monitor = ms('containerLogMonitorInterval');
  if (monitor !== undefined && monitor < 3000) {
    problems.push(`containerLogMonitorInterval must be a positive time duration greater than or equal to 3s, got ${text('containerLogMonitorInterval')}`);
  }
  const report = ms('nodeStatusReportFrequency');
  if (report !== undefined && report <= 0) problems.push(`nodeStatusReportFrequency must be positive, got ${text('nodeStatusReportFrequency')}`);
  const factor = values.memoryThrottlingFactor as number | undefined;
  if (factor !== undefined && (factor <= 0 || factor > 1)) {
    problems.push(`memoryThrottlingFactor (${factor}) must be greater than 0 and at most 1`);
  }
  const parallel = values.maxParallelImagePulls as number | undefined;
  if (parallel !== undefined && parallel > 1 && values.serializeImagePulls === true) {
    problems.push('maxParallelImagePulls cannot be larger than 1 unless serializeImagePulls (--serialize-image-pulls) is set to false');
  }
  return problems;
}
