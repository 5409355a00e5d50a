/** ConfigMap and Secret validation (upstream's ValidateConfigMap / ValidateSecret and their updates), as a table. */
import {describe, expect, it} from '@jest/globals';
import {configKeyProblems, validateConfigMap, validateDataUpdate, validateSecret} from '../../src/daemons/apiserver/rest/validation/config-data.js';
import {names} from '../../src/api/names.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const fields = (errors: {field: string; type: string}[]) => errors.map((e) => `${e.type}:${e.field}`);

describe('config keys', () => {
  it.each([
    ['key.name', []],
    ['KEY_NAME', []],
    ['a/b', ['regex']],
    ['.', ["must not be '.'"]],
    ['..', ["must not be '..'"]],
    ['..data', ["must not start with '..'"]],
    ['a'.repeat(254), ['must be no more than 253 characters']],
  ])('%s', (key, expected) => {
    const problems = configKeyProblems(key).map((p) => (p.includes('regex used') ? 'regex' : p));
    expect(problems).toEqual(expected);
  });
});

describe('ConfigMap', () => {
  it('counts data and decoded binaryData together against 1 MiB', () => {
    const half = 'a'.repeat(512 * 1024);
    expect(validateConfigMap({data: {a: half}, binaryData: {b: b64(half)}})).toEqual([]);
    expect(fields(validateConfigMap({data: {a: half}, binaryData: {b: b64(`${half}x`)}}))).toEqual(['FieldValueTooLong:[]']);
  });
  it('refuses a key in both data and binaryData', () => {
    expect(fields(validateConfigMap({data: {a: 'x'}, binaryData: {a: b64('y')}}))).toEqual(['FieldValueInvalid:binaryData[a]']);
  });
});

describe('Secret types', () => {
  const t = () => names().secretTypes;
  it.each([
    ['Opaque', {}, []],
    ['tls with both keys', {type: 'tls', data: {'tls.crt': b64('c'), 'tls.key': b64('k')}}, []],
    ['tls without keys', {type: 'tls', data: {}}, ['FieldValueRequired:data[tls.crt]', 'FieldValueRequired:data[tls.key]']],
    ['dockerconfigjson not JSON', {type: 'dockerConfigJson', data: {'.dockerconfigjson': b64('{nope')}}, ['FieldValueInvalid:data[.dockerconfigjson]']],
    ['dockerconfigjson', {type: 'dockerConfigJson', data: {'.dockerconfigjson': b64('{"auths":{}}')}}, []],
    ['dockercfg missing', {type: 'dockercfg', data: {}}, ['FieldValueRequired:data[.dockercfg]']],
    ['basic-auth with a password only', {type: 'basicAuth', data: {password: ''}}, []],
    ['basic-auth empty', {type: 'basicAuth', data: {}}, ['FieldValueRequired:data[%s][username]', 'FieldValueRequired:data[%s][password]']],
    ['ssh-auth empty key', {type: 'sshAuth', data: {'ssh-privatekey': ''}}, ['FieldValueRequired:data[%s][ssh-privatekey]']],
    ['service-account-token without its annotation', {type: 'serviceAccountToken', data: {}}, [`FieldValueRequired:metadata.annotations[${names().annotations.serviceAccountName}]`]],
  ] as const)('%s', (_name, spec, expected) => {
    const type = 'type' in spec ? t()[spec.type as keyof ReturnType<typeof t>] : 'Opaque';
    const data = 'data' in spec ? spec.data : {};
    expect(fields(validateSecret({type, data, metadata: {name: 's'}}))).toEqual(expected);
  });
  it('limits the decoded data to 1 MiB', () => {
    expect(fields(validateSecret({type: 'Opaque', data: {a: b64('a'.repeat(1024 * 1024 + 1))}}))).toEqual(['FieldValueTooLong:data']);
  });
});

describe('updates', () => {
  it.each([
    ['a mutable ConfigMap may change', {data: {a: '2'}}, {data: {a: '1'}}, []],
    ['an immutable one keeps its data', {immutable: true, data: {a: '2'}}, {immutable: true, data: {a: '1'}}, ['FieldValueForbidden:data']],
    ['and its binaryData', {immutable: true, binaryData: {a: 'eA=='}}, {immutable: true}, ['FieldValueForbidden:binaryData']],
    ['and stays immutable', {data: {a: '1'}}, {immutable: true, data: {a: '1'}}, ['FieldValueForbidden:immutable']],
    ['a mutable one may become immutable', {immutable: true, data: {a: '1'}}, {data: {a: '1'}}, []],
  ] as const)('%s', (_name, next, previous, expected) => {
    expect(fields(validateDataUpdate('ConfigMap', {...next}, {...previous}))).toEqual(expected);
  });
  it("keeps a Secret's type", () => {
    expect(fields(validateDataUpdate('Secret', {type: 'Opaque'}, {type: names().secretTypes.tls}))).toEqual(['FieldValueInvalid:type']);
  });
});
