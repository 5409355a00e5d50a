import {describe, expect, it} from '@jest/globals';
import {ServiceAccount, mirrorPodProblem, mountToken, secretReferenceProblem, shouldAutomount, tokenVolume} from '../../src/daemons/apiserver/admission/plugins/service-account.js';
import {names} from '../../src/api/names.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {pod, podAttributes} from '../helpers/admission-attributes.js';
import type {JsonObject} from '../../src/patch/types.js';

const fixedName = (prefix: string) => `${prefix}abcde`;
const account = (extra: JsonObject = {}, annotations: Record<string, string> = {}): JsonObject => ({metadata: {name: 'default', namespace: 'default', annotations}, ...extra});
const volumeName = () => `${names().podAdmission.apiAccessVolumePrefix}-abcde`;

describe('ServiceAccount: the token volume', () => {
  it('mounts the projected volume in every container and init container', () => {
    const p = pod({initContainers: [{name: 'init', image: 'x'}]});
    mountToken(p, fixedName);
    const spec = p.spec as JsonObject;
    const mount = {name: volumeName(), readOnly: true, mountPath: names().serviceAccountMountPath};
    expect((spec.containers as JsonObject[])[0]!.volumeMounts).toEqual([mount]);
    expect((spec.initContainers as JsonObject[])[0]!.volumeMounts).toEqual([mount]);
    expect(spec.volumes).toEqual([tokenVolume(volumeName())]);
    expect(tokenVolume('v')).toMatchObject({projected: {defaultMode: 420, sources: [{serviceAccountToken: {path: 'token', expirationSeconds: 3607}}, {configMap: {name: names().rootCaConfigMap}}, {downwardAPI: {}}]}});
  });

  it('keeps a container that mounts something at the path, and reuses an existing token volume', () => {
    const path = names().serviceAccountMountPath;
    const p = pod({
      containers: [{name: 'own', image: 'x', volumeMounts: [{name: 'mine', mountPath: path}]}, {name: 'plain', image: 'x'}],
      volumes: [{name: `${names().podAdmission.apiAccessVolumePrefix}-zzzzz`, projected: {sources: []}}],
    });
    mountToken(p, fixedName);
    const [own, plain] = (p.spec as JsonObject).containers as JsonObject[];
    expect(own!.volumeMounts).toEqual([{name: 'mine', mountPath: path}]);
    expect(plain!.volumeMounts).toEqual([{name: `${names().podAdmission.apiAccessVolumePrefix}-zzzzz`, readOnly: true, mountPath: path}]);
    expect((p.spec as JsonObject).volumes).toHaveLength(1);
  });

  it.each([
    [undefined, undefined, true],
    [false, undefined, false],
    [undefined, false, false],
    [true, false, true],
  ])('automount: pod %s, account %s -> %s', (fromPod, fromAccount, expected) => {
    const p = pod(fromPod === undefined ? {} : {automountServiceAccountToken: fromPod});
    expect(shouldAutomount(account(fromAccount === undefined ? {} : {automountServiceAccountToken: fromAccount}), p)).toBe(expected);
  });
});

describe('ServiceAccount: references', () => {
  it.each([
    ['a secret volume not listed', {volumes: [{name: 'v', secret: {secretName: 'db'}}]}, 'volume with secret.secretName="db" is not allowed because service account default does not reference that secret'],
    ['an env secret not listed', {containers: [{name: 'app', env: [{name: 'P', valueFrom: {secretKeyRef: {name: 'db', key: 'k'}}}]}]}, 'container app with envVar P referencing secret.secretName="db" is not allowed because service account default does not reference that secret'],
    ['an init container env secret', {containers: [], initContainers: [{name: 'i', env: [{name: 'P', valueFrom: {secretKeyRef: {name: 'db', key: 'k'}}}]}]}, 'init container i with envVar P referencing secret.secretName="db" is not allowed because service account default does not reference that secret'],
    ['a pull secret not listed', {imagePullSecrets: [{name: 'reg'}]}, 'imagePullSecrets[0].name="reg" is not allowed because service account default does not reference that imagePullSecret'],
    ['listed ones are fine', {volumes: [{name: 'v', secret: {secretName: 'ok'}}]}, undefined],
  ])('%s', (_t, spec, expected) => {
    expect(secretReferenceProblem(account({secrets: [{name: 'ok'}]}), pod(spec as JsonObject))).toBe(expected);
  });

  it('mirror pods may reference neither accounts nor secrets', () => {
    expect(mirrorPodProblem(pod({serviceAccountName: 'x'}))).toBe('a mirror pod may not reference service accounts');
    expect(mirrorPodProblem(pod({volumes: [{name: 'v', secret: {secretName: 's'}}]}))).toBe('a mirror pod may not reference secrets');
    expect(mirrorPodProblem(pod({volumes: [{name: 'v', projected: {sources: [{serviceAccountToken: {path: 't'}}]}}]}))).toBe('a mirror pod may not use ServiceAccountToken volume projections');
    expect(mirrorPodProblem(pod())).toBeUndefined();
  });
});

describe('ServiceAccount: the plugin', () => {
  it('sets the default account, its pull secrets and the token volume', async () => {
    const plugin = new ServiceAccount({getServiceAccount: async () => account({imagePullSecrets: [{name: 'reg'}]}), clock: new FakeClock(), generateName: fixedName});
    const p = pod();
    await plugin.admit(podAttributes('CREATE', p));
    expect(p.spec).toMatchObject({serviceAccountName: 'default', imagePullSecrets: [{name: 'reg'}], volumes: [{name: volumeName()}]});
  });

  it('enforces mountable secrets when the account says so', async () => {
    const enforcing = account({secrets: []}, {[names().podAdmission.enforceMountableSecrets]: 'true'});
    const plugin = new ServiceAccount({getServiceAccount: async () => enforcing, clock: new FakeClock(), generateName: fixedName});
    await expect(plugin.admit(podAttributes('CREATE', pod({volumes: [{name: 'v', secret: {secretName: 'db'}}]})))).rejects.toThrow(
      'pods "web" is forbidden: volume with secret.secretName="db" is not allowed because service account default does not reference that secret',
    );
  });

  it('asks ten times for the default account before refusing, once for another', async () => {
    const clock = new FakeClock();
    let asked = 0;
    const plugin = new ServiceAccount({getServiceAccount: async () => void asked++, clock, generateName: fixedName});
    const outcome = plugin.admit(podAttributes('CREATE', pod())).catch((e: Error) => e);
    await clock.advance(3000);
    expect(((await outcome) as Error).message).toBe('pods "web" is forbidden: error looking up service account default/default: serviceaccount "default" not found');
    expect(asked).toBe(10);
    asked = 0;
    await expect(plugin.admit(podAttributes('CREATE', pod({serviceAccountName: 'robot'})))).rejects.toThrow('error looking up service account default/robot: serviceaccount "robot" not found');
    expect(asked).toBe(1);
  });

  it('leaves mirror pods unchanged but checks them', async () => {
    const plugin = new ServiceAccount({getServiceAccount: async () => account(), clock: new FakeClock(), generateName: fixedName});
    const mirror = pod({}, {annotations: {[names().annotations.mirrorPod]: 'x'}});
    await plugin.admit(podAttributes('CREATE', mirror));
    expect((mirror.spec as JsonObject).serviceAccountName).toBeUndefined();
    await expect(plugin.admit(podAttributes('CREATE', pod({serviceAccountName: 'a'}, {annotations: {[names().annotations.mirrorPod]: 'x'}})))).rejects.toThrow('a mirror pod may not reference service accounts');
  });
});
