/**
 * Object validation with upstream's field-error texts (apimachinery/pkg/util/validation,
 * api/validation/objectmeta.go, and the few per-kind rules that clients notice).
 */
import { field, type FieldError } from './status.js';
import { labelKeyProblem, labelValueProblem } from './selectors.js';
import type { JsonObject } from '../patch/types.js';
import { isJsonObject } from '../patch/types.js';
import { isIP } from 'node:net';

export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'pathSegment' | 'ipAddress' | 'configMapKey';

const SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1035_RE = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

const SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const DNS1035_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const KEY_MESSAGE =
  "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/** validation.IsConfigMapKey: the problems with `key` as a file name in a volume. */
export function configKeyProblems(key: string): string[] {
  const problems: string[] = [];
  if (key.length > 253) problems.push('must be no more than 253 characters');
  if (!CONFIG_KEY.test(key)) problems.push(KEY_MESSAGE);
  if (key === '.') problems.push("must not be '.'");
  else if (key === '..') problems.push("must not be '..'");
  else if (key.startsWith('..')) problems.push("must not start with '..'");
  return problems;
}

/** The problems of a name under a rule (empty: valid). `prefix` checks a generateName (a trailing '-' is allowed). */
export function nameProblems(name: string, rule: NameRule, prefix = false): string[] {
  const candidate = prefix ? name.replace(/-$/, 'a') : name;
  const problems: string[] = [];
  switch (rule) {
    case 'pathSegment':
      if (name === '.' || name === '..') problems.push(`may not be '${name}'`);
      for (const bad of ['/', '%']) if (name.includes(bad)) problems.push(`may not contain '${bad}'`);
      return problems;
    case 'configMapKey':
      // LeaseCandidate names are component identities (`<host>_<uuid>`): upstream validates them as config keys.
      return configKeyProblems(candidate);
    case 'subdomain':
      if (candidate.length > 253) problems.push('must be no more than 253 characters');
      if (!SUBDOMAIN_RE.test(candidate)) problems.push(SUBDOMAIN_MSG);
      return problems;
    case 'label':
      if (candidate.length > 63) problems.push('must be no more than 63 characters');
      if (!LABEL_RE.test(candidate)) problems.push(LABEL_MSG);
      return problems;
    case 'dns1035':
      if (candidate.length > 63) problems.push('must be no more than 63 characters');
      if (!DNS1035_RE.test(candidate)) problems.push(DNS1035_MSG);
      return problems;
    case 'ipAddress': {
      // IPAddress objects are named by their address, in canonical form (upstream's ValidateIPAddressName).
      const family = isIP(name);
      if (family === 0) return ['must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)'];
      const canonical = family === 6 ? new URL(`http://[${name}]/`).hostname.slice(1, -1) : name;
      if (canonical !== name) problems.push(`must be in canonical form ("${canonical}")`);
      return problems;
    }
  }
}

function stringMap(value: unknown): Record<string, unknown> | undefined {
  return isJsonObject(value) ? value : undefined;
}

/** ObjectMeta rules shared by every kind: name, labels, annotations, finalizers. */
export function validateObjectMeta(object: JsonObject, rule: NameRule): FieldError[] {
  const errors: FieldError[] = [];
  const meta = stringMap(object.metadata) ?? {};
  const name = typeof meta.name === 'string' ? meta.name : '';
  const generateName = typeof meta.generateName === 'string' ? meta.generateName : '';
  if (!name) {
    if (!generateName) errors.push(field.required('metadata.name', 'name or generateName is required'));
    else for (const p of nameProblems(generateName, rule, true)) errors.push(field.invalid('metadata.generateName', generateName, p));
  } else {
    for (const p of nameProblems(name, rule)) errors.push(field.invalid('metadata.name', name, p));
  }
  const labels = stringMap(meta.labels);
  if (meta.labels !== undefined && meta.labels !== null && !labels) errors.push(field.invalid('metadata.labels', meta.labels, 'must be a map'));
  for (const [key, value] of Object.entries(labels ?? {})) {
    const keyProblem = labelKeyProblem(key);
    if (keyProblem) errors.push(field.invalid('metadata.labels', key, keyProblem));
    if (typeof value !== 'string') errors.push(field.invalid(`metadata.labels`, value, 'label values must be strings'));
    else {
      const valueProblem = labelValueProblem(value);
      if (valueProblem) errors.push(field.invalid(`metadata.labels`, value, valueProblem));
    }
  }
  const annotations = stringMap(meta.annotations);
  let annotationBytes = 0;
  for (const [key, value] of Object.entries(annotations ?? {})) {
    const keyProblem = labelKeyProblem(key.toLowerCase());
    if (keyProblem) errors.push(field.invalid('metadata.annotations', key, keyProblem));
    if (typeof value !== 'string') errors.push(field.invalid('metadata.annotations', value, 'annotation values must be strings'));
    annotationBytes += key.length + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
  }
  if (annotationBytes > 256 * 1024) errors.push(field.tooLong('metadata.annotations', 'may not be more than 262144 bytes'));
  if (meta.finalizers !== undefined && !Array.isArray(meta.finalizers)) errors.push(field.invalid('metadata.finalizers', meta.finalizers, 'must be a list'));
  return errors;
}

/** Immutable metadata on update (name and namespace come from the URL; uid and creation time from storage). */
export function validateObjectMetaUpdate(next: JsonObject, previous: JsonObject): FieldError[] {
  const errors: FieldError[] = [];
  const nm = stringMap(next.metadata) ?? {};
  const pm = stringMap(previous.metadata) ?? {};
  if (nm.name !== pm.name) errors.push(field.invalid('metadata.name', nm.name ?? '', 'field is immutable'));
  if ((nm.namespace ?? '') !== (pm.namespace ?? '')) errors.push(field.invalid('metadata.namespace', nm.namespace ?? '', 'field is immutable'));
  return errors;
}
