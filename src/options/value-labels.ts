/**
 * Label key and value validation (apimachinery's IsQualifiedName / IsValidLabelValue) and the taint
 * flag syntax of upstream's pkg/util/taints, used by --register-with-taints.
 */
import { ValueFormatError, splitList } from './value-error.js';

export const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'] as const;
export type TaintEffect = (typeof TAINT_EFFECTS)[number];

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
}

const NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Problems with a label key (`[prefix/]name`); empty when valid. */
export function qualifiedNameErrors(key: string): string[] {
  const parts = key.split('/');
  if (parts.length > 2) return [`${JSON.stringify(key)}: a qualified name must have at most one "/"`];
  const [prefix, name] = parts.length === 2 ? parts : [undefined, parts[0]];
  const errors: string[] = [];
  if (prefix !== undefined) {
    if (prefix === '') errors.push(`${JSON.stringify(key)}: prefix part must be non-empty`);
    else if (prefix.length > 253 || !DNS1123_SUBDOMAIN.test(prefix)) {
      errors.push(`${JSON.stringify(key)}: prefix part must be a lowercase DNS subdomain of at most 253 characters`);
    }
  }
  if (name === '') errors.push(`${JSON.stringify(key)}: name part must be non-empty`);
  else if (name.length > 63) errors.push(`${JSON.stringify(key)}: name part must be no more than 63 characters`);
  else if (!NAME.test(name)) {
    errors.push(
      `${JSON.stringify(key)}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    );
  }
  return errors;
}

/** Problems with a label value (empty is valid); empty when valid. */
export function labelValueErrors(value: string): string[] {
  if (value === '') return [];
  if (value.length > 63) return [`${JSON.stringify(value)}: a label value must be no more than 63 characters`];
  if (!NAME.test(value)) {
    return [
      `${JSON.stringify(value)}: a label value must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character`,
    ];
  }
  return [];
}

/** `<key>=<value>:<effect>` or `<key>:<effect>`, comma-separated. Error texts follow upstream's. */
export function parseTaints(raw: string, previous?: Taint[]): Taint[] {
  return [...(previous ?? []), ...splitList(raw).map(parseTaint)];
}

function parseTaint(spec: string): Taint {
  const parts = spec.split(':');
  if (parts.length !== 2) throw new ValueFormatError(`invalid taint spec: ${spec}, the effect is missing`);
  const effect = parts[1];
  if (!(TAINT_EFFECTS as readonly string[]).includes(effect)) {
    throw new ValueFormatError(`invalid taint effect: ${effect}, unsupported taint effect`);
  }
  const keyValue = parts[0].split('=');
  if (keyValue.length > 2) throw new ValueFormatError(`invalid taint spec: ${spec}`);
  const [key, value] = keyValue;
  const errors = [...qualifiedNameErrors(key), ...(value === undefined ? [] : labelValueErrors(value))];
  if (errors.length > 0) throw new ValueFormatError(`invalid taint spec: ${spec}, ${errors.join('; ')}`);
  return value === undefined ? { key, effect: effect as TaintEffect } : { key, value, effect: effect as TaintEffect };
}

export function formatTaint(taint: Taint): string {
  return `${taint.key}${taint.value === undefined ? '' : `=${taint.value}`}:${taint.effect}`;
}
