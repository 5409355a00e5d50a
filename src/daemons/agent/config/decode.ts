/**
 * Strict decoding of one AgentConfiguration document (the --config file or one drop-in): YAML or JSON,
 * type metadata checked, every field known and of the right type, values canonicalized. The result is
 * flat: field path -> file value, so layers merge field by field.
 */
import { isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { ConfigFieldError, canonicalConfigValue } from './convert.js';
import { agentConfigApiVersion, agentConfigKind, CONFIG_FIELDS, FIELD_BY_PATH, internalKey, OBJECT_PATHS, type ConfigField } from './schema.js';

/** Field path -> canonical value; `null` (drop-ins only) removes the field, and inside maps removes a key. */
export type ConfigLayer = Map<string, unknown>;

export interface DecodeOptions {
  /** Directory of the file, against which relative paths in path fields are resolved. */
  baseDir: string;
  /** Drop-ins are merge patches: an explicit null removes a field or a map key. */
  allowNull: boolean;
}

/** Everything wrong with one document, in one message (a user fixes them all at once). */
export class ConfigDecodeError extends Error {
  constructor(readonly problems: readonly string[]) {
    super(problems.join('; '));
    this.name = 'ConfigDecodeError';
  }
}

/** The option types whose file form is a map, merged key by key by drop-ins. */
const MAP_TYPES = new Set(['keyValue', 'featureGates', 'multimap', 'evictionThresholds', 'evictionDurations', 'evictionQuantities', 'percentPairs']);

export function isMapField(field: ConfigField): boolean {
  return MAP_TYPES.has(field.spec.type);
}

/** Parses YAML or JSON (JSON is YAML) into a plain value; duplicate keys are errors, as in strict decoding. */
export function parseConfigText(text: string): unknown {
  const document = parseDocument(text, { uniqueKeys: true });
  if (document.errors.length > 0) throw new ConfigDecodeError([document.errors[0].message.split('\n')[0]]);
  return document.toJS();
}

export function checkTypeMeta(document: unknown): Record<string, unknown> {
  const expected = `expected kind "${agentConfigKind()}" and apiVersion "${agentConfigApiVersion()}"`;
  if (typeof document !== 'object' || document === null || Array.isArray(document)) {
    throw new ConfigDecodeError([`not an ${agentConfigKind()} object: ${expected}`]);
  }
  const { kind, apiVersion } = document as Record<string, unknown>;
  if (kind !== agentConfigKind() || apiVersion !== agentConfigApiVersion()) {
    const given = `kind ${kind === undefined ? '(missing)' : JSON.stringify(kind)} and apiVersion ${apiVersion === undefined ? '(missing)' : JSON.stringify(apiVersion)}`;
    throw new ConfigDecodeError([`unsupported ${given}: ${expected}`]);
  }
  return document as Record<string, unknown>;
}

/** Decodes one document's text into a layer; throws ConfigDecodeError listing every problem. */
export function decodeAgentConfiguration(text: string, options: DecodeOptions): ConfigLayer {
  const document = checkTypeMeta(parseConfigText(text));
  const layer: ConfigLayer = new Map();
  const problems: string[] = [];
  const unknown: string[] = [];

  const visit = (object: Record<string, unknown>, prefix: string) => {
    for (const [key, value] of Object.entries(object)) {
      if (prefix === '' && (key === 'apiVersion' || key === 'kind')) continue;
      const top = prefix === '' ? internalKey(key) : key;
      if (top === undefined) {
        unknown.push(`unknown field "${key}"`);
        continue;
      }
      const path = prefix === '' ? top : `${prefix}.${key}`;
      const field = FIELD_BY_PATH.get(path);
      if (field) {
        try {
          const decoded = decodeField(field, value, options);
          if (decoded !== undefined) layer.set(path, decoded);
        } catch (error) {
          if (!(error instanceof ConfigFieldError)) throw error;
          problems.push(error.message);
        }
      } else if (OBJECT_PATHS.has(path)) {
        if (value === null) {
          // A null object removes every field under it (drop-ins), or leaves them unset (the file).
          if (options.allowNull) for (const f of CONFIG_FIELDS) if (f.path.startsWith(`${path}.`)) layer.set(f.path, null);
        } else if (typeof value !== 'object' || Array.isArray(value)) {
          problems.push(`field "${path}": expected an object, got ${JSON.stringify(value)}`);
        } else {
          visit(value as Record<string, unknown>, path);
        }
      } else {
        unknown.push(`unknown field "${path}"`);
      }
    }
  };
  visit(document, '');
  if (unknown.length > 0) problems.unshift(`strict decoding error: ${unknown.join(', ')}`);
  if (problems.length > 0) throw new ConfigDecodeError(problems);
  return layer;
}

/** undefined: nothing to record (a null in the --config file, which means "unset"). */
function decodeField(field: ConfigField, value: unknown, options: DecodeOptions): unknown {
  if (value === null) return options.allowNull ? null : undefined;
  if (field.pathRef && typeof value === 'string' && value !== '' && !isAbsolute(value)) {
    value = resolve(options.baseDir, value);
  }
  if (isMapField(field) && typeof value === 'object' && !Array.isArray(value)) {
    // Keys set to null delete that key in a merge patch; the rest is validated like a whole map.
    const entries = Object.entries(value as Record<string, unknown>);
    const kept = Object.fromEntries(entries.filter(([, v]) => v !== null));
    const canonical = canonicalConfigValue(field, kept) as Record<string, unknown>;
    if (!options.allowNull) return canonical;
    return { ...canonical, ...Object.fromEntries(entries.filter(([, v]) => v === null)) };
  }
  return canonicalConfigValue(field, value);
}
