/**
 * The root CA publisher: the pure decision per namespace, and the controller against the real REST
 * API (every namespace gets `<product>-root-ca.crt` with the CA of --root-ca-file; a changed or
 * deleted one is put back).
 */
import {describe, expect, it} from '@jest/globals';
import {mkdtempSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {names} from '../../src/api/names.js';
import {publishAction, rootCaPublisherController} from '../../src/daemons/controller-manager/controllers/root-ca-publisher.js';
import {eventually, useControllerHarness} from '../helpers/controller-harness.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const ns = (name: string, phase = 'Active') => ({metadata: {name}, status: {phase}});

describe('publishAction', () => {
  const name = () => names().rootCaConfigMap;
  it('creates the config map in a namespace without one, with the CA and the description annotation', () => {
    const action = publishAction(ns('a'), undefined, CA);
    expect(action.kind).toBe('create');
    if (action.kind !== 'create') return;
    expect(action.body.metadata).toMatchObject({name: name(), namespace: 'a'});
    expect(action.body.data).toEqual({'ca.crt': CA});
    expect(Object.keys(action.body.metadata!.annotations!)).toEqual([`${names().labelDomain}/description`]);
  });

  it('leaves an up-to-date config map and a terminating namespace alone', () => {
    const created = publishAction(ns('a'), undefined, CA);
    if (created.kind !== 'create') throw new Error('expected create');
    expect(publishAction(ns('a'), created.body, CA)).toEqual({kind: 'none'});
    expect(publishAction(ns('a', 'Terminating'), undefined, CA)).toEqual({kind: 'none'});
  });

  it('puts back changed data, keeping the other annotations', () => {
    const action = publishAction(ns('a'), {metadata: {name: name(), namespace: 'a', annotations: {keep: 'me'}}, data: {'ca.crt': 'old', extra: 'x'}}, CA);
    expect(action.kind).toBe('update');
    if (action.kind !== 'update') return;
    expect(action.body.data).toEqual({'ca.crt': CA});
    expect(action.body.metadata!.annotations!.keep).toBe('me');
  });
});

const h = useControllerHarness();

describe('root-ca-cert-publisher controller', () => {
  it('publishes the CA in every namespace and restores it when deleted or changed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'root-ca-'));
    const caFile = join(dir, 'ca.crt');
    writeFileSync(caFile, CA);
    await h.client.request({method: 'POST', path: '/api/v1/namespaces', body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'team-a'}}});
    await h.start(rootCaPublisherController, {'root-ca-file': caFile});
    const path = `/api/v1/namespaces/team-a/configmaps/${names().rootCaConfigMap}`;
    const read = async () => {
      try {
        return await h.client.get<{data?: Record<string, string>}>(path);
      } catch {
        return undefined;
      }
    };
    expect((await eventually(read, 5000, 'the config map published')).data).toEqual({'ca.crt': CA});

    await h.client.request({method: 'DELETE', path});
    await eventually(async () => (await read())?.data?.['ca.crt'] === CA || undefined, 5000, 'the deleted config map restored');

    await h.client.patch(path, 'application/merge-patch+json', {data: {'ca.crt': 'tampered'}});
    await eventually(async () => (await read())?.data?.['ca.crt'] === CA || undefined, 5000, 'the changed config map restored');
  });
});
