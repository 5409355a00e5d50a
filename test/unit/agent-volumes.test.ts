/**
 * The agent's volumes: when a pod's token must be refreshed (the kubelet's 80% rule, on a fake
 * clock), which files each volume type gives, and the manager that writes them under the pod's
 * directory, links the containers' mounts below the pod root, and rewrites a token volume before
 * its token expires.
 */
import {describe, expect, it} from '@jest/globals';
import {lstatSync, mkdtempSync, readFileSync, readlinkSync, statSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {names} from '../../src/api/names.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {ServiceAccountTokens, tokenRequiresRefresh, type TokenRequestSpec} from '../../src/daemons/agent/volumes/service-account-tokens.js';
import {VolumeError, volumeFiles, type VolumeSources} from '../../src/daemons/agent/volumes/projection.js';
import {VolumeManager} from '../../src/daemons/agent/volumes/manager.js';
import type {Pod, Volume} from '../../src/daemons/agent/runtime/types.js';

const HOUR = 3600_000;

describe('tokenRequiresRefresh', () => {
  const token = (expiresAt: number, expirationSeconds: number) => ({token: 't', expiresAt, expirationSeconds});
  it.each([
    ['fresh: 50% of an hour left', token(HOUR, 3600), 0.5 * HOUR, 0, false],
    ['just before the last 20%', token(HOUR, 3600), 0.79 * HOUR, 0, false],
    ['inside the last 20%', token(HOUR, 3600), 0.81 * HOUR, 0, true],
    ['the jitter moves the deadline earlier', token(HOUR, 3600), 0.79 * HOUR, 0.02 * HOUR, true],
    ['a two-day token is refreshed after 24 h', token(48 * HOUR, 48 * 3600), 24 * HOUR + 1, 0, true],
    ['a two-day token is kept for its first day', token(48 * HOUR, 48 * 3600), 23 * HOUR, 0, false],
  ])('%s', (_what, t, now, jitter, expected) => {
    expect(tokenRequiresRefresh(t, now as number, jitter as number)).toBe(expected);
  });
});

const pod = (volumes: Volume[], extra: Partial<Pod['spec']> = {}): Pod => ({
  metadata: {name: 'web', namespace: 'team', uid: 'uid-1', labels: {app: 'web'}},
  spec: {serviceAccountName: 'builder', containers: [{name: 'c', command: ['true']}], volumes, ...extra},
});

function sources(overrides: Partial<VolumeSources> = {}): VolumeSources & {tokens: string[]} {
  const tokens: string[] = [];
  return {
    tokens,
    nodeIP: '10.0.0.1',
    configMap: async (_ns, name) => (name === 'settings' ? {'a.conf': Buffer.from('A'), 'b.conf': Buffer.from('B')} : undefined),
    secret: async (_ns, name) => (name === 'creds' ? {password: Buffer.from('s3cret')} : undefined),
    token: async (p, audience, seconds) => {
      const t = `token-for-${p.metadata.name}-${audience ?? 'api'}-${seconds}`;
      tokens.push(t);
      return t;
    },
    ...overrides,
  };
}

const text = (files: {path: string; content: Buffer; mode: number}[]) => files.map((f) => [f.path, f.content.toString(), f.mode.toString(8)]);

describe('volumeFiles', () => {
  it('projects a token, a config map key and the namespace, as the kube-api-access volume', async () => {
    const volume: Volume = {
      name: 'api-access',
      projected: {
        defaultMode: 0o644,
        sources: [
          {serviceAccountToken: {expirationSeconds: 3607, path: 'token'}},
          {configMap: {name: 'settings', items: [{key: 'a.conf', path: 'ca.crt'}]}},
          {downwardAPI: {items: [{path: 'namespace', fieldRef: {fieldPath: 'metadata.namespace'}}]}},
        ],
      },
    };
    expect(text(await volumeFiles(pod([volume]), volume, sources()))).toEqual([
      ['token', 'token-for-web-api-3607', '644'],
      ['ca.crt', 'A', '644'],
      ['namespace', 'team', '644'],
    ]);
  });

  it('gives every key of a config map or secret, with items and modes', async () => {
    expect(text(await volumeFiles(pod([]), {name: 'v', configMap: {name: 'settings'}}, sources()))).toEqual([['a.conf', 'A', '644'], ['b.conf', 'B', '644']]);
    expect(text(await volumeFiles(pod([]), {name: 'v', secret: {secretName: 'creds', items: [{key: 'password', path: 'p/pw', mode: 0o400}]}}, sources()))).toEqual([['p/pw', 's3cret', '400']]);
    expect(text(await volumeFiles(pod([]), {name: 'v', emptyDir: {}}, sources()))).toEqual([]);
  });

  it('refuses what cannot be set up, naming the volume or object', async () => {
    await expect(volumeFiles(pod([]), {name: 'v', configMap: {name: 'absent'}}, sources())).rejects.toThrow('configmap "absent" not found');
    expect(await volumeFiles(pod([]), {name: 'v', configMap: {name: 'absent', optional: true}}, sources())).toEqual([]);
    await expect(volumeFiles(pod([]), {name: 'v', configMap: {name: 'settings', items: [{key: 'nope', path: 'x'}]}}, sources())).rejects.toThrow('key "nope" not found in configmap "settings"');
    await expect(volumeFiles(pod([]), {name: 'v', configMap: {name: 'settings', items: [{key: 'a.conf', path: '../escape'}]}}, sources())).rejects.toThrow(VolumeError);
    await expect(volumeFiles(pod([]), {name: 'disk', hostPath: {path: '/'}}, sources())).rejects.toThrow('volume "disk": volume type hostPath is not supported');
  });
});

describe('VolumeManager', () => {
  const tokenVolume: Volume = {name: 'api-access', projected: {sources: [{serviceAccountToken: {expirationSeconds: 3600, path: 'token'}}]}};
  const mountPath = () => names().serviceAccountMountPath;
  const withMount = (p: Pod) => ({...p, spec: {...p.spec, containers: [{name: 'c', command: ['true'], volumeMounts: [{name: 'api-access', mountPath: mountPath(), readOnly: true}]}]}});

  function manager(clock: FakeClock) {
    const requests: TokenRequestSpec[] = [];
    const tokens = new ServiceAccountTokens(async (spec) => {
      requests.push(spec);
      return {token: `t${requests.length}`, expiresAt: clock.now() + spec.expirationSeconds * 1000};
    }, clock, () => 0);
    const {tokens: _unused, token: _token, ...rest} = sources();
    const volumes = new VolumeManager({sources: rest, tokens, clock, resyncMs: 60_000});
    return {volumes, requests};
  }

  it('writes the volume, links the mount below the pod root and names the root in the environment', async () => {
    const clock = new FakeClock(0);
    const {volumes, requests} = manager(clock);
    const podDir = mkdtempSync(join(tmpdir(), 'orch-volumes-'));
    const env = await volumes.setUp(withMount(pod([tokenVolume])), podDir);
    const root = join(podDir, 'root');
    expect(env).toEqual({[names().podRootEnv]: root});
    expect(readFileSync(join(root, mountPath(), 'token'), 'utf8')).toBe('t1');
    expect(lstatSync(join(root, mountPath())).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(root, mountPath()))).toBe(join(podDir, 'volumes', 'api-access'));
    expect(statSync(join(podDir, 'volumes', 'api-access', 'token')).mode & 0o777).toBe(0o644);
    expect(requests).toEqual([{namespace: 'team', serviceAccount: 'builder', audiences: [], expirationSeconds: 3600, pod: {name: 'web', uid: 'uid-1'}}]);
    volumes.stop();
  });

  it('rewrites the token once 80% of its life has passed, not before', async () => {
    const clock = new FakeClock(0);
    const {volumes, requests} = manager(clock);
    const podDir = mkdtempSync(join(tmpdir(), 'orch-volumes-'));
    await volumes.setUp(withMount(pod([tokenVolume])), podDir);
    const tokenFile = join(podDir, 'volumes', 'api-access', 'token');
    await clock.advance(0.75 * HOUR);
    expect(readFileSync(tokenFile, 'utf8')).toBe('t1');
    await clock.advance(0.1 * HOUR);
    expect(readFileSync(tokenFile, 'utf8')).toBe('t2');
    expect(requests).toHaveLength(2);
    volumes.tearDown('uid-1');
    await clock.advance(2 * HOUR);
    expect(requests).toHaveLength(2);
    volumes.stop();
  });

  it('refuses a mount that names no volume', async () => {
    const clock = new FakeClock(0);
    const {volumes} = manager(clock);
    const p = withMount(pod([]));
    await expect(volumes.setUp(p, mkdtempSync(join(tmpdir(), 'orch-volumes-')))).rejects.toThrow('volume mount "api-access" names no volume of the pod');
    volumes.stop();
  });
});
