/**
 * --storage-media-type: what the store holds under each encoding, and that reading accepts every
 * encoding whatever the setting (a store written under one setting stays readable under another).
 */
import {describe, expect, it} from '@jest/globals';
import {decodeStored, encodeStored, storageEncoding} from '../../src/daemons/apiserver/storage/codec-store.js';
import {checkStorageBackend} from '../../src/daemons/apiserver/storage/config.js';
import {resolveOptions} from '../../src/options/resolve.js';
import {apiserverOptions} from '../../src/options/apiserver.js';

const secret = {
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: {
    name: 's1',
    namespace: 'default',
    uid: '6f1b1c9e-0000-4000-8000-000000000001',
    resourceVersion: '12',
    creationTimestamp: '2026-11-26T05:00:00Z',
    labels: {app: 'web', tier: 'db'},
    managedFields: [{manager: 'kubectl-create', operation: 'Update', apiVersion: 'v1', time: '2026-11-26T05:00:00Z', fieldsType: 'FieldsV1', fieldsV1: {'f:data': {'.': {}, 'f:password': {}}, 'f:type': {}}}],
  },
  data: {password: Buffer.from('hunter2').toString('base64')},
  type: 'Opaque',
};
const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {name: 'web', namespace: 'default', generation: 3, creationTimestamp: '2026-11-26T05:00:00Z'},
  spec: {
    replicas: 2,
    selector: {matchLabels: {app: 'web'}},
    template: {metadata: {creationTimestamp: null, labels: {app: 'web'}}, spec: {containers: [{name: 'web', image: 'nginx:1.27', ports: [{containerPort: 80, protocol: 'TCP'}], resources: {limits: {cpu: '500m', memory: '128Mi'}}}]}},
    strategy: {type: 'RollingUpdate', rollingUpdate: {maxSurge: '25%', maxUnavailable: 1}},
  },
};
const custom = {apiVersion: 'stable.example.com/v1', kind: 'CronTab', metadata: {name: 'c'}, spec: {cronSpec: '* * * * */5'}};

describe('storage encodings', () => {
  it.each([
    ['application/json', 'json'],
    ['application/yaml', 'yaml'],
    ['application/vnd.orch.protobuf', 'protobuf'],
    ['application/vnd.kubernetes.protobuf', 'protobuf'],
  ])('%s stores %s', (mediaType, encoding) => {
    expect(storageEncoding(mediaType)).toBe(encoding);
  });

  it('refuses other media types naming the option', () => {
    expect(() => storageEncoding('application/cbor')).toThrow('--storage-media-type: unsupported media type "application/cbor": supported values: application/json, application/yaml, application/vnd.orch.protobuf, application/vnd.kubernetes.protobuf');
  });

  it('writes the protobuf envelope for kinds with a schema, and reads every encoding back to the same object', () => {
    for (const object of [secret, deployment]) {
      const json = JSON.stringify(object);
      const pb = encodeStored(json, 'protobuf');
      expect(pb.startsWith('k8s\u0000')).toBe(true);
      expect(pb).not.toContain('"metadata"');
      const yaml = encodeStored(json, 'yaml');
      expect(yaml.startsWith('apiVersion:')).toBe(true);
      for (const stored of [json, pb, yaml]) expect(JSON.parse(decodeStored(stored))).toEqual(object);
    }
  });

  it('keeps JSON for objects protobuf cannot carry exactly: custom kinds, unknown fields', () => {
    expect(encodeStored(JSON.stringify(custom), 'protobuf')).toBe(JSON.stringify(custom));
    const extra = {...secret, metadata: {...secret.metadata, notAField: 'kept'}};
    expect(encodeStored(JSON.stringify(extra), 'protobuf')).toBe(JSON.stringify(extra));
  });

  it('hands on values that are not objects', () => {
    expect(decodeStored('plain text')).toBe('plain text');
    expect(decodeStored('42')).toBe('42');
  });
});

describe('--storage-backend', () => {
  it('accepts kvstore3 or nothing, and refuses anything else with upstream\'s message', () => {
    expect(() => checkStorageBackend(undefined)).not.toThrow();
    expect(() => checkStorageBackend('kvstore3')).not.toThrow();
    expect(() => checkStorageBackend('etcd2')).toThrow(`--storage-backend invalid, allowed values: kvstore3. If not specified, it will default to 'kvstore3' (got "etcd2")`);
  });

  it('is refused on the command line naming the option and the allowed value', () => {
    expect(() => resolveOptions('apiserver', apiserverOptions, {'storage-backend': 'etcd2'})).toThrow('invalid value "etcd2" for --storage-backend: not one of the accepted values; expected one of kvstore3');
    expect(resolveOptions('apiserver', apiserverOptions, {'storage-backend': 'kvstore3'}).values['storage-backend']).toBe('kvstore3');
  });
});
