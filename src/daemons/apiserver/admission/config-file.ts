/**
 * `--admission-control-config-file`: upstream's AdmissionConfiguration (apiserver.config.<domain>
 * v1 or v1alpha1, or the older apiserver.<domain>/v1alpha1), YAML or JSON, whose `plugins` give
 * each plugin's configuration inline (`configuration`) or in a file (`path`, relative to the
 * configuration file's directory), as upstream's ReadAdmissionConfiguration. Reading and parsing
 * only: each plugin's factory checks its own configuration.
 */
import {readFile} from 'node:fs/promises';
import {dirname, isAbsolute, resolve} from 'node:path';
import {parse as parseYaml} from 'yaml';
import {names} from '../../../api/names.js';
import {isJsonObject, type JsonObject} from '../../../patch/types.js';
import {ADMISSION_PLUGIN_NAMES_SORTED} from '../../../api/admission-plugins.js';

export interface PluginConfiguration {
  configuration: JsonObject;
  /** `<file>: plugin <name>` (and the path it was read from), for the plugin's error messages. */
  source: string;
}

export class AdmissionConfigError extends Error {}

/** The apiVersions a configuration file may have. */
export function admissionConfigVersions(): string[] {
  const domain = names().domain;
  return [`apiserver.config.${domain}/v1`, `apiserver.config.${domain}/v1alpha1`, `apiserver.${domain}/v1alpha1`];
}

function parseDocument(text: string, what: string): unknown {
  try {
    return parseYaml(text);
  } catch (error) {
    throw new AdmissionConfigError(`${what}: not valid YAML or JSON: ${(error as Error).message}`);
  }
}

/**
 * The configuration of every plugin the file names, by plugin name. `file` is the option's value
 * (paths inside are relative to its directory); `readText` is the file reader (tests pass theirs).
 */
export async function readAdmissionConfiguration(
  file: string,
  readText: (path: string) => Promise<string> = (path) => readFile(path, 'utf8'),
): Promise<Map<string, PluginConfiguration>> {
  const where = `--admission-control-config-file ${file}`;
  let text: string;
  try {
    text = await readText(file);
  } catch (error) {
    throw new AdmissionConfigError(`${where}: unable to read the admission control configuration: ${(error as Error).message}`);
  }
  const document = parseDocument(text, where);
  if (!isJsonObject(document)) throw new AdmissionConfigError(`${where}: not an AdmissionConfiguration object`);
  const problems: string[] = [];
  const versions = admissionConfigVersions();
  if (!versions.includes(String(document.apiVersion))) {
    problems.push(`apiVersion: Unsupported value: ${JSON.stringify(document.apiVersion ?? '')}: supported values: ${versions.map((v) => JSON.stringify(v)).join(', ')}`);
  }
  if (document.kind !== 'AdmissionConfiguration') problems.push(`kind: Unsupported value: ${JSON.stringify(document.kind ?? '')}: supported values: "AdmissionConfiguration"`);
  const plugins = document.plugins ?? [];
  if (!Array.isArray(plugins)) problems.push('plugins: Invalid value: must be a list of {name, path | configuration}');
  if (problems.length) throw new AdmissionConfigError(`${where}: ${problems.join('; ')}`);

  const known = new Set<string>(ADMISSION_PLUGIN_NAMES_SORTED);
  const result = new Map<string, PluginConfiguration>();
  const baseDir = dirname(resolve(file));
  for (const [i, entry] of (plugins as unknown[]).entries()) {
    const at = `${where}: plugins[${i}]`;
    if (!isJsonObject(entry)) throw new AdmissionConfigError(`${at}: Invalid value: must be an object with name and path or configuration`);
    const name = entry.name;
    if (typeof name !== 'string' || name === '') throw new AdmissionConfigError(`${at}.name: Required value`);
    if (!known.has(name)) {
      throw new AdmissionConfigError(`${where}: plugin ${name}: unknown admission plugin; known plugins: ${ADMISSION_PLUGIN_NAMES_SORTED.join(', ')}`);
    }
    if (result.has(name)) throw new AdmissionConfigError(`${where}: plugin ${name}: Duplicate value: the plugin is configured more than once`);
    const inline = entry.configuration;
    const path = entry.path;
    if (inline !== undefined && inline !== null) {
      if (!isJsonObject(inline)) throw new AdmissionConfigError(`${where}: plugin ${name}: configuration: Invalid value: must be an object`);
      result.set(name, {configuration: inline, source: `${file}: plugin ${name}`});
      continue;
    }
    if (typeof path !== 'string' || path === '') {
      throw new AdmissionConfigError(`${where}: plugin ${name}: Required value: one of path or configuration`);
    }
    const absolute = isAbsolute(path) ? path : resolve(baseDir, path);
    let content: string;
    try {
      content = await readText(absolute);
    } catch (error) {
      throw new AdmissionConfigError(`${where}: plugin ${name}: unable to read ${absolute}: ${(error as Error).message}`);
    }
    const parsed = parseDocument(content, `${where}: plugin ${name}: ${absolute}`);
    if (!isJsonObject(parsed)) throw new AdmissionConfigError(`${where}: plugin ${name}: ${absolute}: not a configuration object`);
    result.set(name, {configuration: parsed, source: `${file}: plugin ${name} (${absolute})`});
  }
  return result;
}
