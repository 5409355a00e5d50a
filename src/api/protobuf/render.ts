/**
 * JSON forms of the apimachinery value types, from their decoded protobuf fields. Pure.
 * (Go's metav1.Time keeps whole seconds only; MicroTime keeps microseconds.)
 */
import type { JsonObject, JsonValue } from '../../patch/types.js';

export type Renderer = (fields: JsonObject, byteLength: number) => JsonValue;

function num(value: JsonValue | undefined): number {
  return typeof value === 'number' ? value : 0;
}

function utcDate(fields: JsonObject, fraction: 'none' | 'micro'): string {
  const seconds = num(fields.seconds);
  const iso = new Date(seconds * 1000).toISOString().slice(0, 19);
  if (fraction === 'none') return `${iso}Z`;
  const micros = Math.floor(num(fields.nanos) / 1000);
  return `${iso}.${String(micros).padStart(6, '0')}Z`;
}

export const RENDERERS: Readonly<Record<string, Renderer>> = {
  /** A zero Time marshals as an empty message, and prints as null. */
  Time: (fields, byteLength) => (byteLength === 0 ? null : utcDate(fields, 'none')),
  MicroTime: (fields, byteLength) => (byteLength === 0 ? null : utcDate(fields, 'micro')),
  Quantity: (fields) => (typeof fields.string === 'string' ? fields.string : '0'),
  /** type 0 is an int, 1 a string. */
  IntOrString: (fields) => (num(fields.type) === 1 ? (typeof fields.strVal === 'string' ? fields.strVal : '') : num(fields.intVal)),
  /** FieldsV1 holds the managed fields set as JSON text. */
  FieldsV1: (fields) => (typeof fields.raw === 'string' && fields.raw !== '' ? JSON.parse(Buffer.from(fields.raw, 'base64').toString('utf8')) : {}),
};
