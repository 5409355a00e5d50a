/**
 * `orch apiserver` with --runtime-config, --feature-gates and --emulated-version as a user runs it:
 * groups and versions switched on and off in `kubectl api-resources`, /apis and routing (404),
 * beta APIs needing both their version and their gate, /version's emulation fields, and start
 * errors with upstream's messages.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {names} from '../../src/api/names.js';
import {freePort, kubectl, startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';
import {runOrch} from '../helpers/run-orch.js';

const g = names().groups;

describe('runtime-config and feature gates', () => {
  let server: ServerProcess;
  const k = (...args: string[]) => kubectl(server.orchconfigPath, args);

  beforeAll(async () => {
    server = await startApiServerProcess({
      engine: 'sqlite',
      args: [
        // A whole group off, a beta version on (with its gate), a single resource off.
        `--runtime-config=${g.storage}/v1=false,${g.coordination}/v1beta1,apps/v1/daemonsets=false`,
        '--feature-gates=CoordinatedLeaderElection=true',
      ],
    });
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('lists what is switched on and leaves out what is off (kubectl api-resources)', async () => {
    const r = await k('api-resources', '--no-headers');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^leasecandidates\\s+${g.coordination.replace(/\./g, '\\.')}/v1beta1\\s+true\\s+LeaseCandidate`, 'm'));
    expect(r.stdout).not.toMatch(/^storageclasses\s/m);
    expect(r.stdout).not.toMatch(/^daemonsets\s/m);
    expect(r.stdout).toMatch(/^deployments\s/m);
    // Beta APIs whose version was not named stay off (upstream's default), as do gated ones without their gate.
    expect(r.stdout).not.toMatch(/^clustertrustbundles\s/m);
    expect(r.stdout).not.toMatch(/^mutatingadmissionpolicies\s/m);
  });

  it('answers 404 for what is off, and serves what is on', async () => {
    const groups = JSON.parse((await k('get', '--raw', '/apis')).stdout) as {groups: {name: string}[]};
    expect(groups.groups.map((x) => x.name)).not.toContain(g.storage);
    const off = await k('get', '--raw', `/apis/${g.storage}/v1/storageclasses`);
    expect(off.code).not.toBe(0);
    expect(off.stderr).toMatch(/NotFound|not found/i);
    const ds = await k('get', 'daemonsets');
    expect(ds.code).not.toBe(0);
    expect(ds.stderr).toContain("the server doesn't have a resource type \"daemonsets\"");
    const lc = await kubectl(server.orchconfigPath, ['get', 'leasecandidates', '-A']);
    expect(lc.code).toBe(0);
  });

  it('registers only the served group versions as local APIServices', async () => {
    const r = await k('get', 'apiservices', '-o', 'name');
    expect(r.stdout).toContain(`apiservice.${g.apiregistration}/v1beta1.${g.coordination}`);
    expect(r.stdout).not.toContain(`v1.${g.storage}`);
  });
});

describe('emulated version', () => {
  let server: ServerProcess;

  beforeAll(async () => {
    server = await startApiServerProcess({engine: 'sqlite', args: ['--emulated-version=1.33']});
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  it('reports the emulation in /version and drops APIs introduced after it', async () => {
    const version = JSON.parse((await kubectl(server.orchconfigPath, ['get', '--raw', '/version'])).stdout) as Record<string, string>;
    expect(version).toMatchObject({major: '1', minor: '36', emulationMajor: '1', emulationMinor: '33', minCompatibilityMinor: '33'});
    const r = await kubectl(server.orchconfigPath, ['api-resources', '--no-headers']);
    expect(r.stdout).toMatch(/^servicecidrs\s/m); // GA in 1.33
    expect(r.stdout).not.toMatch(/^resourceclaims\s/m); // resource/v1 is 1.34
    expect(r.stdout).not.toMatch(/^volumeattributesclasses\s/m);
  });
});

describe('start errors', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'orch-runtime-config-'));
  });
  afterAll(() => rmSync(dir, {recursive: true, force: true}));

  const start = async (name: string, ...flags: string[]) =>
    runOrch(['apiserver', '--data-dir', join(dir, name), '--secure-port', String(await freePort()), '--bind-address', '127.0.0.1', ...flags]);

  // Each refused start names the input, with upstream's words.
  const cases: [string, string[], string][] = [
    ['unknown gate', ['--feature-gates=NoSuchGate=true'], 'unrecognized feature gate: NoSuchGate'],
    ['locked gate', ['--feature-gates=StructuredAuthorizationConfiguration=false'], 'cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true'],
    ['old emulation', ['--emulated-version=1.30'], 'emulation version 1.30 is not between [1.33.0, 1.36.0]'],
    ['unknown group', ['--runtime-config=wardle.example.com/v1alpha1=true'], 'unknown api groups wardle.example.com'],
    ['unknown version', ['--runtime-config=apps/v1beta2=true'], 'group version apps/v1beta2 that has not been registered'],
    ['version after emulation', ['--emulated-version=1.33', `--runtime-config=${g.admissionregistration}/v1beta1=true`, '--feature-gates=MutatingAdmissionPolicy=true'],
      'because all the resources have been introduced after the current version 1.33'],
  ];
  it.each(cases)('refuses to start: %s', async (name, flags, expected) => {
    const run = await start(name.replace(/ /g, '-'), ...flags);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain(expected);
  }, 30_000);
});
