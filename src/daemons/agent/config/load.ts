/**
 * loadAgentConfiguration: the agent's effective configuration from defaults, the --config file, the
 * command-line flags and the --config-dir drop-ins, with the layer each field came from.
 *
 * The only I/O is reading files and listing directories, both injectable, so tests run on fixtures.
 */
import { readFile as fsReadFile, readdir as fsReaddir } from 'node:fs/promises';
import { dirname, extname, join, resolve } from 'node:path';
import type { ResolvedOptions } from '../../../options/resolve.js';
import { optionValueToConfig } from './convert.js';
import { ConfigDecodeError, decodeAgentConfiguration } from './decode.js';
import {
  type ConfigSource,
  type FlatConfig,
  applyDerivedDefaults,
  applyDropInLayer,
  applyFileLayer,
  applyFlagLayer,
  defaultLayer,
  startFromDefaults,
} from './layers.js';
import { agentConfigApiVersion, agentConfigKind, CONFIG_FIELDS } from './schema.js';
import type { AgentConfiguration } from './types.js';
import { validateMergedConfig } from './validate.js';

export interface DirectoryEntry {
  name: string;
  isDirectory: boolean;
}

export interface LoadAgentConfigurationInput {
  /** --config; relative to the working directory. */
  configFile?: string;
  /** --config-dir. */
  configDir?: string;
  /** The resolved command line: only options in `explicit` override the file. */
  flags: Pick<ResolvedOptions, 'values' | 'explicit'>;
  readFile?: (path: string) => Promise<string>;
  readdir?: (dir: string) => Promise<DirectoryEntry[]>;
}

export interface LoadedAgentConfiguration {
  config: AgentConfiguration;
  /** Field path (dotted for nested fields) -> the layer that set it. */
  sources: Record<string, ConfigSource>;
  /** Typed values keyed by option name, merged: what the agent runs with. */
  options: Record<string, unknown>;
  /** Typed values keyed by field path, for the config-only fields too. */
  fields: Record<string, unknown>;
  warnings: string[];
}

/** Every problem of a configuration, each line naming the file or field at fault. */
export class AgentConfigError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
    this.name = 'AgentConfigError';
  }
}

const defaultReadFile = (path: string) => fsReadFile(path, 'utf8');
const defaultReaddir = async (dir: string): Promise<DirectoryEntry[]> =>
  (await fsReaddir(dir, { withFileTypes: true })).map((e) => ({ name: e.name, isDirectory: e.isDirectory() }));

/** Go's filepath.WalkDir order: each directory's entries sorted by name (bytewise), subdirectories descended in place. */
export async function listDropIns(dir: string, readdir: (dir: string) => Promise<DirectoryEntry[]>): Promise<string[]> {
  const entries = [...(await readdir(dir))].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const files: string[] = [];
  for (const entry of entries) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) files.push(...(await listDropIns(path, readdir)));
    else if (extname(entry.name) === '.conf') files.push(path);
  }
  return files;
}

function fileError(what: string, path: string, error: unknown): string {
  const reason = error instanceof ConfigDecodeError ? error.message : (error as Error).message;
  return `failed to load agent ${what}, path: ${path}, error: ${reason}`;
}

/** The explicitly given flags that stand for config fields, in file form. */
function flagLayer(flags: LoadAgentConfigurationInput['flags']): Map<string, unknown> {
  const layer = new Map<string, unknown>();
  for (const field of CONFIG_FIELDS) {
    if (field.flag && flags.explicit.has(field.flag) && flags.values[field.flag] !== undefined) {
      layer.set(field.path, optionValueToConfig(field, flags.values[field.flag]));
    }
  }
  return layer;
}

/** Nested file form of the flat field map, with type metadata. */
function toDocument(values: ReadonlyMap<string, unknown>): AgentConfiguration {
  const document: Record<string, unknown> = { apiVersion: agentConfigApiVersion(), kind: agentConfigKind() };
  for (const [path, value] of values) {
    const parts = path.split('.');
    let node = document;
    for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>;
    node[parts[parts.length - 1]] = value;
  }
  return document as unknown as AgentConfiguration;
}

/** Fields set in a file or drop-in whose option has no effect yet: said once, like unimplemented flags. */
function notImplementedWarning(config: FlatConfig): string[] {
  const fields = CONFIG_FIELDS.filter((f) => {
    const source = config.sources.get(f.path);
    return f.flag && !f.spec.implemented && (source === 'file' || source?.startsWith('drop-in:'));
  }).map((f) => f.path);
  return fields.length > 0 ? [`these configuration fields are accepted and validated but have no effect yet: ${fields.join(', ')}`] : [];
}

export async function loadAgentConfiguration(input: LoadAgentConfigurationInput): Promise<LoadedAgentConfiguration> {
  const readFile = input.readFile ?? defaultReadFile;
  const readdir = input.readdir ?? defaultReaddir;
  const config = startFromDefaults();

  if (input.configFile) {
    const path = resolve(input.configFile);
    try {
      applyFileLayer(config, decodeAgentConfiguration(await readFile(path), { baseDir: dirname(path), allowNull: false }));
    } catch (error) {
      throw new AgentConfigError([fileError('config file', input.configFile, error)]);
    }
  }

  applyFlagLayer(config, flagLayer(input.flags));

  if (input.configDir) {
    let dropIns: string[];
    try {
      dropIns = await listDropIns(input.configDir, readdir);
    } catch (error) {
      throw new AgentConfigError([`failed to walk through agent dropin directory "${input.configDir}": ${(error as Error).message}`]);
    }
    const defaults = defaultLayer();
    for (const path of dropIns) {
      try {
        const layer = decodeAgentConfiguration(await readFile(path), { baseDir: dirname(resolve(path)), allowNull: true });
        applyDropInLayer(config, layer, `drop-in:${path}`, defaults);
      } catch (error) {
        throw new AgentConfigError([fileError('dropin file', path, error)]);
      }
    }
  }

  applyDerivedDefaults(config);
  const validated = validateMergedConfig(config, input.flags.values, input.flags.explicit);
  if (validated.problems.length > 0) {
    throw new AgentConfigError(validated.problems.map((p) => `failed to validate agent configuration, error: ${p}`));
  }
  return {
    config: toDocument(config.values),
    sources: Object.fromEntries(config.sources),
    options: validated.optionValues,
    fields: validated.fieldValues,
    warnings: notImplementedWarning(config),
  };
}
