/**
 * Upstream's ValidateConfigMap / ValidateSecret and their Update forms
 * (pkg/apis/core/validation/validation.go): data keys are config keys, the data together stays
 * within 1 MiB (etcd's request limit is a little above it: a bigger object would fail in storage
 * with a less helpful error), each Secret type has its required keys, and an `immutable: true`
 * object keeps its data (and stays immutable). Pure.
 */
import {names} from '../../../../api/names.js';
import {field, type FieldError} from '../../../../api/status.js';
import {isJsonObject, jsonEqual, type JsonObject} from '../../../../patch/types.js';

/** core.MaxSecretSize: the limit for a Secret's data and for a ConfigMap's data and binaryData together. */
export const MAX_DATA_SIZE = 1024 * 1024;

export {configKeyProblems} from '../../../../api/validation.js';
import {configKeyProblems} from '../../../../api/validation.js';

const mapOf = (value: unknown): Record<string, unknown> => (isJsonObject(value as never) ? (value as Record<string, unknown>) : {});
const base64Length = (value: unknown): number => (typeof value === 'string' ? Buffer.from(value, 'base64').length : 0);
const tooLong = (path: string) => field.tooLong(path, `may not be more than ${MAX_DATA_SIZE} bytes`);

function keyErrors(path: string, map: Record<string, unknown>): FieldError[] {
  return Object.keys(map).flatMap((key) => configKeyProblems(key).map((problem) => field.invalid(`${path}[${key}]`, key, problem)));
}

export function validateConfigMap(o: JsonObject): FieldError[] {
  const data = mapOf(o.data);
  const binary = mapOf(o.binaryData);
  const errors = [...keyErrors('data', data), ...keyErrors('binaryData', binary)];
  for (const key of Object.keys(binary)) {
    if (key in data) errors.push(field.invalid(`binaryData[${key}]`, key, 'duplicate key in both data and binaryData'));
  }
  const size = Object.values(data).reduce<number>((n, v) => n + (typeof v === 'string' ? Buffer.byteLength(v) : 0), 0)
    + Object.values(binary).reduce<number>((n, v) => n + base64Length(v), 0);
  // Upstream passes an empty path: the error is about the whole object (kubectl prints `[]: Too long`).
  if (size > MAX_DATA_SIZE) errors.push(tooLong('[]'));
  return errors;
}

/** Secrets are validated after stringData has joined data (strategies.ts), as upstream's conversion does. */
export function validateSecret(o: JsonObject): FieldError[] {
  const data = mapOf(o.data);
  const errors = keyErrors('data', data);
  const size = Object.values(data).reduce<number>((n, v) => n + base64Length(v), 0);
  if (size > MAX_DATA_SIZE) errors.push(tooLong('data'));
  const types = names().secretTypes;
  const has = (key: string) => key in data;
  const jsonError = (key: string) => {
    try {
      JSON.parse(Buffer.from(String(data[key]), 'base64').toString('utf8'));
      return [];
    } catch (error) {
      return [field.invalid(`data[${key}]`, '<secret contents redacted>', (error as Error).message)];
    }
  };
  switch (o.type) {
    case types.serviceAccountToken: {
      const annotations = mapOf(mapOf(o.metadata).annotations);
      const key = names().annotations.serviceAccountName;
      if (!annotations[key]) errors.push(field.required(`metadata.annotations[${key}]`));
      break;
    }
    case types.dockercfg:
      errors.push(...(has('.dockercfg') ? jsonError('.dockercfg') : [field.required('data[.dockercfg]')]));
      break;
    case types.dockerConfigJson:
      errors.push(...(has('.dockerconfigjson') ? jsonError('.dockerconfigjson') : [field.required('data[.dockerconfigjson]')]));
      break;
    case types.basicAuth:
      // username or password may be empty, but one of them must be present.
      if (!has('username') && !has('password')) errors.push(field.required('data[%s][username]'), field.required('data[%s][password]'));
      break;
    case types.sshAuth:
      if (base64Length(data['ssh-privatekey']) === 0) errors.push(field.required('data[%s][ssh-privatekey]'));
      break;
    case types.tls:
      if (!has('tls.crt')) errors.push(field.required('data[tls.crt]'));
      if (!has('tls.key')) errors.push(field.required('data[tls.key]'));
      break;
    default:
  }
  return errors;
}

const IMMUTABLE_MESSAGE = 'field is immutable when `immutable` is set';

/** ValidateConfigMapUpdate / ValidateSecretUpdate beyond the create rules. */
export function validateDataUpdate(kind: 'ConfigMap' | 'Secret', o: JsonObject, previous: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  if (kind === 'Secret' && (o.type ?? '') !== (previous.type ?? '')) errors.push(field.invalid('type', o.type ?? '', 'field is immutable'));
  if (previous.immutable !== true) return errors;
  if (o.immutable !== true) errors.push(field.forbidden('immutable', IMMUTABLE_MESSAGE));
  const paths = kind === 'ConfigMap' ? ['data', 'binaryData'] : ['data'];
  for (const path of paths) {
    if (!jsonEqual(o[path] ?? null, previous[path] ?? null)) errors.push(field.forbidden(path, IMMUTABLE_MESSAGE));
  }
  return errors;
}
