/** `--print-config`: the effective AgentConfiguration as YAML or JSON, keys sorted, type metadata first. */
import { fileKey } from './schema.js';
import { stringify } from 'yaml';
import type { AgentConfiguration } from './types.js';

export type ConfigFormat = 'yaml' | 'json';

/** Keys sorted at every level, so two prints of the same configuration compare line by line. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export function formatAgentConfiguration(config: AgentConfiguration, format: ConfigFormat): string {
  const { apiVersion, kind, ...fields } = config;
  // Top-level keys as the name set's file spells them (kubeAPIQPS in a KubeletConfiguration).
  const spelled = Object.fromEntries(Object.entries(fields).map(([key, value]) => [fileKey(key), value]));
  const ordered = { apiVersion, kind, ...(sortKeys(spelled) as object) };
  return format === 'json' ? `${JSON.stringify(ordered, null, 2)}\n` : stringify(ordered, { lineWidth: 0 });
}
