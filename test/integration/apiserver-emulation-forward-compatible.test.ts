/**
 * `orch apiserver --emulated-version=1.33` with a beta switched on, as a user runs it (KEP-4330):
 * with --emulation-forward-compatible the GA version introduced after the emulated release is served
 * beside the beta, one stored object read and written through either version (storage v1beta1 and
 * v1 VolumeAttributesClasses; resource v1beta1, whose requests are shaped differently, and v1
 * ResourceClaims; networking v1beta1 IPAddresses beside v1); without the flag, the GA version stays out of discovery and answers 404.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {kubectl, startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';

const g = names().groups;
const EMULATE_133 = ['--emulated-version=1.33', `--runtime-config=${g.storage}/v1beta1=true,${g.resource}/v1beta1=true,${g.networking}/v1beta1=true`];

interface ResourceList {
  resources: {name: string}[];
}

describe('--emulation-forward-compatible', () => {
  let server: ServerProcess;
  const k = (args: string[], input?: string) => kubectl(server.orchconfigPath, args, {input});
  const raw = async (path: string) => {
    const r = await k(['get', '--raw', path]);
    expect([path, r.code, r.stderr]).toEqual([path, 0, '']);
    return JSON.parse(r.stdout) as Record<string, any>;
  };

  beforeAll(async () => {
    server = await startApiServerProcess({engine: 'sqlite', args: [...EMULATE_133, '--emulation-forward-compatible']});
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('serves the GA version beside the beta in discovery (kubectl api-versions, api-resources)', async () => {
    const versions = (await k(['api-versions'])).stdout.split('\n');
    expect(versions).toEqual(expect.arrayContaining([`${g.storage}/v1`, `${g.storage}/v1beta1`, `${g.resource}/v1`, `${g.resource}/v1beta2`, `${g.resource}/v1beta1`]));
    // api-resources lists each resource once, in the group's preferred version: the GA one.
    const resources = await k(['api-resources', '--no-headers']);
    expect(resources.stdout).toMatch(new RegExp(`^volumeattributesclasses\\s+vac\\s+${g.storage.replace(/\./g, '\\.')}/v1\\s`, 'm'));
    expect(resources.stdout).toMatch(new RegExp(`^resourceclaims\\s+${g.resource.replace(/\./g, '\\.')}/v1\\s`, 'm'));
    for (const version of ['v1', 'v1beta1']) {
      const list = await raw(`/apis/${g.storage}/${version}`);
      expect(list.resources.map((r: {name: string}) => r.name)).toContain('volumeattributesclasses');
    }
    expect((await raw(`/apis/${g.storage}`)).preferredVersion.version).toBe('v1');
  });

  it('stores one object: created through v1beta1, read and changed through v1, read back through v1beta1', async () => {
    const created = await k(['create', '-f', '-'], JSON.stringify({
      apiVersion: `${g.storage}/v1beta1`, kind: 'VolumeAttributesClass', metadata: {name: 'gold'}, driverName: 'csi.example.com', parameters: {iops: '3000'},
    }));
    expect(created.stdout).toContain('volumeattributesclass');
    const v1 = await raw(`/apis/${g.storage}/v1/volumeattributesclasses/gold`);
    expect(v1).toMatchObject({apiVersion: `${g.storage}/v1`, kind: 'VolumeAttributesClass', driverName: 'csi.example.com', parameters: {iops: '3000'}});
    const labelled = await k(['label', `volumeattributesclasses.v1.${g.storage}`, 'gold', 'tier=fast']);
    expect(labelled.code).toBe(0);
    const beta = await raw(`/apis/${g.storage}/v1beta1/volumeattributesclasses/gold`);
    expect(beta).toMatchObject({apiVersion: `${g.storage}/v1beta1`, driverName: 'csi.example.com', metadata: {uid: v1.metadata.uid, labels: {tier: 'fast'}}});
    expect(Number(beta.metadata.resourceVersion)).toBeGreaterThan(Number(v1.metadata.resourceVersion));

    const get = await k(['get', 'vac']);
    expect(get.stdout).toMatch(/^gold\s+csi\.example\.com\s/m);
    const betaGet = await k(['get', `volumeattributesclasses.v1beta1.${g.storage}`, 'gold', '-o', 'jsonpath={.apiVersion}']);
    expect(betaGet.stdout).toBe(`${g.storage}/v1beta1`);
  });

  it('converts resource/v1beta1 claims to v1 and back (a request\'s exact fields under `exactly`)', async () => {
    const created = await k(['create', '-f', '-'], JSON.stringify({
      apiVersion: `${g.resource}/v1beta1`, kind: 'ResourceClaim', metadata: {name: 'gpu', namespace: 'default'},
      spec: {devices: {requests: [{name: 'gpu', deviceClassName: 'gpu.example.com', allocationMode: 'ExactCount', count: 2}]}},
    }));
    expect([created.code, created.stderr]).toEqual([0, '']);
    const v1 = await raw(`/apis/${g.resource}/v1/namespaces/default/resourceclaims/gpu`);
    expect(v1.spec.devices.requests).toEqual([{name: 'gpu', exactly: {deviceClassName: 'gpu.example.com', allocationMode: 'ExactCount', count: 2}}]);
    const v1beta2 = await raw(`/apis/${g.resource}/v1beta2/namespaces/default/resourceclaims/gpu`);
    expect(v1beta2.spec).toEqual(v1.spec);
    const beta = await raw(`/apis/${g.resource}/v1beta1/namespaces/default/resourceclaims/gpu`);
    expect(beta.spec.devices.requests).toEqual([{name: 'gpu', deviceClassName: 'gpu.example.com', allocationMode: 'ExactCount', count: 2}]);
    expect((await k(['get', 'resourceclaims'])).stdout).toMatch(/^gpu\s/m);
  });

  it('shows the IPAddress the server allocated for a service (stored as v1) through networking/v1beta1', async () => {
    expect((await k(['create', 'service', 'clusterip', 'web', '--tcp=80'])).code).toBe(0);
    const ip = (await k(['get', 'service', 'web', '-o', 'jsonpath={.spec.clusterIP}'])).stdout;
    expect(ip).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    const beta = await raw(`/apis/${g.networking}/v1beta1/ipaddresses/${ip}`);
    expect(beta).toMatchObject({apiVersion: `${g.networking}/v1beta1`, kind: 'IPAddress', spec: {parentRef: {resource: 'services', namespace: 'default', name: 'web'}}});
  });
});

describe('without --emulation-forward-compatible', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startApiServerProcess({engine: 'sqlite', args: EMULATE_133});
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('serves the beta only: v1 VolumeAttributesClasses are out of discovery and answer 404', async () => {
    const list = async (version: string) =>
      JSON.parse((await kubectl(server.orchconfigPath, ['get', '--raw', `/apis/${g.storage}/${version}`])).stdout) as ResourceList;
    expect((await list('v1beta1')).resources.map((r) => r.name)).toContain('volumeattributesclasses');
    expect((await list('v1')).resources.map((r) => r.name)).not.toContain('volumeattributesclasses');
    const v1 = await kubectl(server.orchconfigPath, ['get', '--raw', `/apis/${g.storage}/v1/volumeattributesclasses`]);
    expect(v1.code).not.toBe(0);
    expect(v1.stderr).toMatch(/NotFound|not found/i);
    const versions = (await kubectl(server.orchconfigPath, ['api-versions'])).stdout.split('\n');
    expect(versions).not.toContain(`${g.resource}/v1`); // every resource/v1 kind is 1.34
    expect(versions).toContain(`${g.resource}/v1beta1`);
    const get = await kubectl(server.orchconfigPath, ['get', 'vac']);
    expect(get.code).toBe(0); // through the beta
  });
});
