/**
 * Protobuf message schemas as data. Each message is a table from field number to a one-line field
 * spec written like the Go struct field it comes from, so a row can be checked against
 * k8s.io/api's `generated.proto` and `types.go` side by side:
 *
 *   'name string'                     omitempty scalar: a zero value on the wire is dropped
 *   'replicas *int32'                 pointer: present on the wire means set, zero included
 *   'containerPort int32 required'    no omitempty in the json tag: a zero value is kept
 *   'command []string'                repeated; `required` makes an absent list `null`, as Go prints it
 *   'labels map[string]string'        map (wire: repeated {1: key, 2: value} entries)
 *   'selector *LabelSelector'         another message of the registry
 *   'ref LocalObjectReference inline' embedded struct: its fields are merged into this object
 *
 * The zero-value rules follow from how Go's gogo-protobuf marshaller writes fields (non-pointer
 * scalars always, pointers only when set) and how encoding/json reads the json tags back.
 */

export type Scalar = 'string' | 'bool' | 'int32' | 'int64' | 'float64' | 'bytes';

export type ValueType = { scalar: Scalar } | { message: string };

export interface FieldSpec {
  /** The JSON key. */
  json: string;
  value: ValueType;
  shape: 'single' | 'repeated' | 'map';
  /** A pointer field: a zero value on the wire is a set value and is kept. */
  pointer: boolean;
  /** No omitempty: zero scalars are kept, absent lists and maps print as null. */
  required: boolean;
  /** An embedded struct whose fields appear directly in the parent object. */
  inline: boolean;
}

/** Field number -> field spec text, for one message. */
export type MessageTable = Readonly<Record<number, string>>;

/** Message name -> its table. */
export type SchemaTables = Readonly<Record<string, MessageTable>>;

export type CompiledMessage = ReadonlyMap<number, FieldSpec>;

const SCALARS: Record<string, Scalar> = {
  string: 'string', bool: 'bool', int32: 'int32', int64: 'int64', float64: 'float64', '[]byte': 'bytes',
};

const FLAGS = new Set(['required', 'inline']);

/** Parses one field spec (`json goType [flags]`); throws on a malformed spec. */
export function parseFieldSpec(text: string): FieldSpec {
  const [json, rawType, ...flags] = text.trim().split(/\s+/);
  if (!json || !rawType) throw new Error(`protobuf schema: malformed field spec "${text}"`);
  for (const flag of flags) if (!FLAGS.has(flag)) throw new Error(`protobuf schema: unknown flag "${flag}" in "${text}"`);
  let type = rawType;
  const pointer = type.startsWith('*');
  if (pointer) type = type.slice(1);
  let shape: FieldSpec['shape'] = 'single';
  if (type.startsWith('map[string]')) {
    shape = 'map';
    type = type.slice('map[string]'.length);
  } else if (type.startsWith('[]') && type !== '[]byte') {
    shape = 'repeated';
    type = type.slice(2);
  }
  const scalar = SCALARS[type];
  const value: ValueType = scalar ? { scalar } : { message: type };
  if (!scalar && !/^[A-Z][A-Za-z0-9]*$/.test(type)) throw new Error(`protobuf schema: bad type "${rawType}" in "${text}"`);
  return { json, value, shape, pointer, required: flags.includes('required'), inline: flags.includes('inline') };
}

/** Compiles tables into a registry, checking that every referenced message exists. */
export function compileSchemas(tables: SchemaTables): ReadonlyMap<string, CompiledMessage> {
  const registry = new Map<string, CompiledMessage>();
  for (const [name, table] of Object.entries(tables)) {
    registry.set(name, new Map(Object.entries(table).map(([number, spec]) => [Number(number), parseFieldSpec(spec)])));
  }
  for (const [name, message] of registry) {
    for (const [number, field] of message) {
      if ('message' in field.value && !registry.has(field.value.message)) {
        throw new Error(`protobuf schema: ${name} field ${number} refers to unknown message ${field.value.message}`);
      }
    }
  }
  return registry;
}
