/**
 * `--tracing-config-file`: upstream's TracingConfiguration (apiserver.config.<domain>/v1, v1beta1 or
 * v1alpha1): `endpoint` of the OTLP gRPC collector (default localhost:4317) and
 * `samplingRatePerMillion` (default 0: only requests whose caller sampled them are traced). Decoded
 * strictly; a bad file stops the start with the field and the problem, as upstream's validation.
 */
import {readFile} from 'node:fs/promises';
import {parse as parseYaml} from 'yaml';
import {names} from '../../../api/names.js';

export interface TracingConfiguration {
  endpoint: string;
  samplingRatePerMillion: number;
}

export const DEFAULT_TRACING_ENDPOINT = 'localhost:4317';
const VERSIONS = ['v1', 'v1beta1', 'v1alpha1'];
const KNOWN_KEYS = new Set(['apiVersion', 'kind', 'endpoint', 'samplingRatePerMillion']);

export function parseTracingConfiguration(text: string, source: string): TracingConfiguration {
  const fail = (message: string): never => {
    throw new Error(`${source}: ${message}`);
  };
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    return fail(`cannot parse: ${(error as Error).message}`);
  }
  if (!data || typeof data !== 'object' || Array.isArray(data)) return fail('expected a TracingConfiguration object');
  const d = data as Record<string, unknown>;
  const group = `apiserver.config.${names().domain}`;
  const accepted = VERSIONS.map((v) => `${group}/${v}`);
  if (!accepted.includes(String(d.apiVersion))) return fail(`apiVersion: Unsupported value: ${JSON.stringify(d.apiVersion)}: supported values: ${accepted.map((a) => JSON.stringify(a)).join(', ')}`);
  if (d.kind !== 'TracingConfiguration') return fail(`kind: Unsupported value: ${JSON.stringify(d.kind)}: supported values: "TracingConfiguration"`);
  for (const key of Object.keys(d)) if (!KNOWN_KEYS.has(key)) fail(`strict decoding error: unknown field "${key}"`);
  const endpoint = d.endpoint === undefined || d.endpoint === null ? DEFAULT_TRACING_ENDPOINT : d.endpoint;
  if (typeof endpoint !== 'string') return fail(`endpoint: Invalid value: ${JSON.stringify(endpoint)}: must be a string`);
  const rate = d.samplingRatePerMillion ?? 0;
  if (typeof rate !== 'number' || !Number.isInteger(rate)) return fail(`samplingRatePerMillion: Invalid value: ${JSON.stringify(rate)}: must be an integer`);
  if (rate < 0) fail(`samplingRatePerMillion: Invalid value: ${rate}: sampling rate must be positive`);
  if (rate > 1_000_000) fail(`samplingRatePerMillion: Invalid value: ${rate}: sampling rate per million must be less than or equal to one million`);
  validateEndpoint(endpoint, fail);
  return {endpoint, samplingRatePerMillion: rate};
}

/** Upstream parses the endpoint as a URL (scheme optional, as gRPC targets are host:port). */
function validateEndpoint(endpoint: string, fail: (message: string) => never): void {
  const withScheme = endpoint.includes('://') ? endpoint : `grpc://${endpoint}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return fail(`endpoint: Invalid value: ${JSON.stringify(endpoint)}: not a valid URL or host:port`);
  }
  if (!url.hostname) fail(`endpoint: Invalid value: ${JSON.stringify(endpoint)}: no host`);
}

export async function readTracingConfiguration(file: string): Promise<TracingConfiguration> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new Error(`--tracing-config-file: cannot read ${file}: ${(error as Error).message}`);
  }
  return parseTracingConfiguration(text, `--tracing-config-file ${file}`);
}
