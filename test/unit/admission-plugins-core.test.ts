/**
 * The pure decisions of the simple admission plugins, table by table: upstream's NewForbidden
 * naming, default classes, external IPs, claim resize, finalizers, RuntimeClass's overhead and
 * scheduling with upstream's toleration merge, signer authorization, owner references, topology
 * labels, resize against the node, and what the always-plugins answer.
 */
import {describe, expect, it} from '@jest/globals';
import {builtinResource} from '../../src/api/resources.js';
import {names} from '../../src/api/names.js';
import {ApiError} from '../../src/api/status.js';
import type {JsonObject} from '../../src/patch/types.js';
import type {AdmissionAttributes} from '../../src/daemons/apiserver/admission/interfaces.js';
import {admissionForbidden} from '../../src/daemons/apiserver/admission/errors.js';
import {AlwaysDeny} from '../../src/daemons/apiserver/admission/plugins/always-deny.js';
import {externalIPsAllowed} from '../../src/daemons/apiserver/admission/plugins/deny-service-external-ips.js';
import {claimHasClass, defaultClassFor} from '../../src/daemons/apiserver/admission/plugins/default-storage-class.js';
import {defaultIngressClassFor} from '../../src/daemons/apiserver/admission/plugins/default-ingress-class.js';
import {StorageObjectInUseProtection} from '../../src/daemons/apiserver/admission/plugins/storage-object-in-use-protection.js';
import {resizeRefusal} from '../../src/daemons/apiserver/admission/plugins/persistent-volume-claim-resize.js';
import {applyRuntimeClass, overheadRefusal, sameResources} from '../../src/daemons/apiserver/admission/plugins/runtime-class.js';
import {isSuperset, mergeTolerations} from '../../src/daemons/apiserver/admission/tolerations.js';
import {isAuthorizedForSignerName} from '../../src/daemons/apiserver/admission/plugins/signer-authorization.js';
import {isOnlyMutatingGCFields} from '../../src/daemons/apiserver/admission/plugins/cluster-trust-bundle-attest.js';
import {isChangingOwnerReference, newBlockingOwnerDeletionRefs} from '../../src/daemons/apiserver/admission/plugins/owner-references-permission-enforcement.js';
import {copyTopologyLabels} from '../../src/daemons/apiserver/admission/plugins/pod-topology-labels.js';
import {resizeRefusalOnNode} from '../../src/daemons/apiserver/admission/plugins/pod-resize-validator.js';

const user = {name: 'jane', groups: ['system:authenticated']};
const attrs = (plural: string, object?: JsonObject, extra: Partial<AdmissionAttributes> = {}): AdmissionAttributes => ({
  operation: 'CREATE', resource: builtinResource('', plural)!, subresource: '', namespace: 'default', name: '', object, user, dryRun: false, ...extra,
});

describe('admissionForbidden (upstream NewForbidden)', () => {
  it.each([
    ['the object name', {metadata: {name: 'web'}}, 'pods "web" is forbidden: nope'],
    ['the generateName when there is no name yet', {metadata: {generateName: 'web-'}}, 'pods "web-" is forbidden: nope'],
    ['Unknown without an object (DELETE)', undefined, 'pods "Unknown" is forbidden: nope'],
  ])('names %s', (_what, object, message) => {
    const error = admissionForbidden(attrs('pods', object as JsonObject | undefined), 'nope');
    expect(error.status).toMatchObject({code: 403, reason: 'Forbidden', message});
  });

  it('answers an internal error for an object without metadata (the options of a CONNECT), as upstream', () => {
    const error = admissionForbidden(attrs('pods', {kind: 'PodExecOptions', apiVersion: 'v1'}, {operation: 'CONNECT', subresource: 'exec'}), 'nope');
    expect(error.status).toMatchObject({code: 500, message: 'Internal error occurred: [nope, object does not implement the Object interfaces]'});
  });

  it('AlwaysDeny refuses with upstream message in both phases', () => {
    const deny = new AlwaysDeny();
    expect(() => deny.admit(attrs('configmaps', {metadata: {name: 'c'}}))).toThrow('configmaps "c" is forbidden: admission control is denying all modifications');
    expect(() => deny.validate(attrs('configmaps', undefined, {operation: 'DELETE'}))).toThrow(ApiError);
  });
});

describe('default classes', () => {
  const sc = (name: string, created: string, annotations: Record<string, string> = {}) => ({metadata: {name, creationTimestamp: created, annotations}});
  const def = (beta = false) => ({[`storageclass.${beta ? 'beta.' : ''}${names().labelDomain}/is-default-class`]: 'true'});
  it.each([
    ['no default: nothing', [sc('a', '2024-01-01T00:00:00Z')], {}, undefined],
    ['the only default', [sc('a', '2024-01-01T00:00:00Z'), sc('b', '2024-01-01T00:00:00Z', def())], {}, 'b'],
    ['the beta annotation counts', [sc('b', '2024-01-01T00:00:00Z', def(true))], {}, 'b'],
    ['the newest of several defaults', [sc('old', '2024-01-01T00:00:00Z', def()), sc('new', '2024-06-01T00:00:00Z', def())], {}, 'new'],
    ['equal times: the first by name', [sc('zeta', '2024-01-01T00:00:00Z', def()), sc('alpha', '2024-01-01T00:00:00Z', def())], {}, 'alpha'],
    ['a claim with a class (even empty) keeps it', [sc('b', '2024-01-01T00:00:00Z', def())], {storageClassName: ''}, undefined],
  ])('%s', (_what, classes, spec, expected) => {
    expect(defaultClassFor({metadata: {name: 'c'}, spec} as JsonObject, classes as JsonObject[])).toBe(expected);
  });

  it('counts the beta class annotation of a claim as a class', () => {
    expect(claimHasClass({metadata: {annotations: {[`volume.beta.${names().labelDomain}/storage-class`]: 'x'}}})).toBe(true);
  });

  it('defaults an Ingress without class or class annotation only', () => {
    const classes = [{metadata: {name: 'nginx', annotations: {[`ingressclass.${names().labelDomain}/is-default-class`]: 'true'}}}];
    expect(defaultIngressClassFor({spec: {}}, classes)).toBe('nginx');
    expect(defaultIngressClassFor({spec: {ingressClassName: 'other'}}, classes)).toBeUndefined();
    expect(defaultIngressClassFor({metadata: {annotations: {[`${names().labelDomain}/ingress.class`]: 'x'}}, spec: {}}, classes)).toBeUndefined();
  });
});

describe('services, claims and finalizers', () => {
  const svc = (ips?: string[]) => ({spec: {...(ips ? {externalIPs: ips} : {})}});
  it.each([
    ['none', svc(), undefined, true],
    ['new ones on create', svc(['1.2.3.4']), undefined, false],
    ['kept on update', svc(['1.2.3.4']), svc(['1.2.3.4', '5.6.7.8']), true],
    ['added on update', svc(['1.2.3.4', '9.9.9.9']), svc(['1.2.3.4']), false],
  ])('external IPs: %s', (_what, service, old, allowed) => {
    expect(externalIPsAllowed(service as JsonObject, old as JsonObject | undefined)).toBe(allowed);
  });

  const claim = (size: string, phase: string, cls = 'fast') => ({spec: {storageClassName: cls, resources: {requests: {storage: size}}}, status: {phase}});
  it.each([
    ['shrinking or equal: no check', claim('1Gi', 'Bound'), claim('1Gi', 'Pending'), undefined, undefined],
    ['an unbound claim', claim('2Gi', 'Pending'), claim('1Gi', 'Pending'), {allowVolumeExpansion: true}, 'Only bound persistent volume claims can be expanded'],
    ['a class without expansion', claim('2Gi', 'Bound'), claim('1Gi', 'Bound'), {allowVolumeExpansion: false},
      'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize'],
    ['a missing class', claim('2Gi', 'Bound'), claim('1Gi', 'Bound'), undefined, 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize'],
    ['a class that expands', claim('2Gi', 'Bound'), claim('1Gi', 'Bound'), {allowVolumeExpansion: true}, undefined],
    ['1.5Gi is more than 1024Mi', claim('1.5Gi', 'Bound'), claim('1024Mi', 'Pending'), {allowVolumeExpansion: true}, 'Only bound persistent volume claims can be expanded'],
  ])('claim resize: %s', (_what, next, old, storageClass, refusal) => {
    expect(resizeRefusal(next as JsonObject, old as JsonObject, storageClass as JsonObject | undefined)).toBe(refusal);
  });

  it('adds the protection finalizer once, to claims and volumes only', () => {
    const plugin = new StorageObjectInUseProtection();
    const pvc: JsonObject = {metadata: {name: 'c', finalizers: ['other']}};
    plugin.admit(attrs('persistentvolumeclaims', pvc));
    plugin.admit(attrs('persistentvolumeclaims', pvc));
    expect(pvc.metadata).toMatchObject({finalizers: ['other', `${names().labelDomain}/pvc-protection`]});
    const pv: JsonObject = {metadata: {name: 'v'}};
    plugin.admit(attrs('persistentvolumes', pv, {namespace: ''}));
    expect(pv.metadata).toMatchObject({finalizers: [`${names().labelDomain}/pv-protection`]});
    const status: JsonObject = {metadata: {name: 'c'}};
    plugin.admit(attrs('persistentvolumeclaims', status, {subresource: 'status'}));
    expect(status.metadata).toEqual({name: 'c'});
  });
});

describe('RuntimeClass and tolerations', () => {
  const rc = {overhead: {podFixed: {cpu: '250m', memory: '64Mi'}}, scheduling: {nodeSelector: {a: '1'}, tolerations: [{key: 't', operator: 'Exists'}]}};
  it('sets overhead, merges the node selector and the tolerations', () => {
    const pod: JsonObject = {spec: {nodeSelector: {b: '2'}, tolerations: [{key: 't', operator: 'Equal', value: 'x'}, {key: 'u', operator: 'Exists'}]}};
    applyRuntimeClass(pod, rc as unknown as JsonObject);
    expect(pod.spec).toEqual({
      overhead: {cpu: '250m', memory: '64Mi'}, nodeSelector: {b: '2', a: '1'},
      // The class's `t Exists` covers the pod's `t Equal x`, which goes.
      tolerations: [{key: 'u', operator: 'Exists'}, {key: 't', operator: 'Exists'}],
    });
  });

  it.each([
    ['a different overhead', {spec: {overhead: {cpu: '1'}}}, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"],
    ['a conflicting selector', {spec: {nodeSelector: {a: '2'}}}, 'conflict: runtimeClass.scheduling.nodeSelector[a] = 1; pod.spec.nodeSelector[a] = 2'],
  ])('refuses %s', (_what, pod, message) => {
    expect(() => applyRuntimeClass(pod as JsonObject, rc as unknown as JsonObject)).toThrow(message);
  });

  it.each([
    ['matching overhead (0.25 is 250m)', {spec: {overhead: {cpu: '0.25', memory: '64Mi'}}}, rc, undefined],
    ['overhead without a class', {spec: {overhead: {cpu: '1'}}}, undefined, 'pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead'],
    ['missing overhead with a class that has one', {spec: {}}, rc, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"],
  ])('validates %s', (_what, pod, runtimeClass, refusal) => {
    expect(overheadRefusal(pod as JsonObject, runtimeClass as JsonObject | undefined)).toBe(refusal);
  });

  it('compares quantities semantically', () => {
    expect(sameResources({cpu: '1'}, {cpu: '1000m'})).toBe(true);
    expect(sameResources({cpu: '1'}, {cpu: '1', memory: '1Gi'})).toBe(false);
  });

  it.each([
    ['empty key Exists covers everything', {operator: 'Exists'}, {key: 'k', operator: 'Equal', value: 'v', effect: 'NoSchedule'}, true],
    ['empty effect covers any effect', {key: 'k', operator: 'Exists'}, {key: 'k', operator: 'Exists', effect: 'NoExecute'}, true],
    ['another key', {key: 'k', operator: 'Exists'}, {key: 'j', operator: 'Exists'}, false],
    ['a shorter NoExecute time does not cover a longer one', {key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 10},
      {key: 'k', operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60}, false],
    ['Equal covers Equal of the same value only', {key: 'k', operator: 'Equal', value: 'v'}, {key: 'k', operator: 'Equal', value: 'w'}, false],
  ])('isSuperset: %s', (_what, ss, t, expected) => {
    expect(isSuperset(ss, t as JsonObject)).toBe(expected);
  });

  it('keeps one of equal tolerations', () => {
    expect(mergeTolerations([{key: 'k', operator: 'Exists'}], [{key: 'k', operator: 'Exists'}])).toEqual([{key: 'k', operator: 'Exists'}]);
  });
});

describe('signers and owner references', () => {
  it('asks for the signer, then its domain wildcard', async () => {
    const asked: string[] = [];
    const authorize = async (a: {name?: string; verb: string; resource?: string; apiGroup?: string}) => {
      asked.push(`${a.verb} ${a.apiGroup}/${a.resource} ${a.name}`);
      return {allowed: a.name === 'example.com/*'};
    };
    expect(await isAuthorizedForSignerName(authorize, user, 'approve', 'example.com/issuer')).toBe(true);
    const g = names().groups.certificates;
    expect(asked).toEqual([`approve ${g}/signers example.com/issuer`, `approve ${g}/signers example.com/*`]);
    expect(await isAuthorizedForSignerName(async () => ({allowed: false}), user, 'sign', 'x/y')).toBe(false);
  });

  it('sees only garbage-collector changes as such', () => {
    const bundle = {metadata: {name: 'b', resourceVersion: '5'}, spec: {signerName: 's', trustBundle: 'pem'}};
    expect(isOnlyMutatingGCFields({...bundle, metadata: {...bundle.metadata, finalizers: ['f'], ownerReferences: [{uid: 'u'}]}}, bundle)).toBe(true);
    expect(isOnlyMutatingGCFields({...bundle, spec: {signerName: 's', trustBundle: 'other'}}, bundle)).toBe(false);
  });

  const ref = (uid: string, block?: boolean) => ({apiVersion: 'apps/v1', kind: 'ReplicaSet', name: uid, uid, ...(block === undefined ? {} : {blockOwnerDeletion: block})});
  const obj = (...refs: object[]) => ({metadata: {name: 'p', ownerReferences: refs}}) as unknown as JsonObject;
  it.each([
    ['a create with references', obj(ref('a')), undefined, true],
    ['a create without', {metadata: {name: 'p'}}, undefined, false],
    ['the same references', obj(ref('a')), obj(ref('a')), false],
    ['one more', obj(ref('a'), ref('b')), obj(ref('a')), true],
    ['a changed one', obj(ref('a', true)), obj(ref('a')), true],
  ])('isChangingOwnerReference: %s', (_what, next, old, expected) => {
    expect(isChangingOwnerReference(next as JsonObject, old)).toBe(expected);
  });

  it('finds references that newly block their owner', () => {
    expect(newBlockingOwnerDeletionRefs(obj(ref('a', true), ref('b', true), ref('c')), obj(ref('a', true), ref('b', false))).map((r) => r.uid)).toEqual(['b']);
    expect(newBlockingOwnerDeletionRefs(obj(ref('a', true)), undefined).map((r) => r.uid)).toEqual(['a']);
  });
});

describe('pods on nodes', () => {
  const zone = `topology.${names().domain}/zone`;
  const region = `topology.${names().domain}/region`;
  it('copies the node topology labels the pod lacks, and nothing else', () => {
    const pod: JsonObject = {metadata: {labels: {[zone]: 'mine'}}};
    copyTopologyLabels(pod, {metadata: {labels: {[zone]: 'z1', [region]: 'r1', other: 'x'}}});
    expect(pod.metadata).toEqual({labels: {[zone]: 'mine', [region]: 'r1'}});
  });

  const node = (cpu: string, memory: string, os = 'linux') => ({metadata: {name: 'n1', labels: {[names().labels.os]: os}}, status: {allocatable: {cpu, memory}}});
  const pod = (cpu: string, memory: string) => ({spec: {nodeName: 'n1', containers: [{name: 'c', resources: {requests: {cpu, memory}}}]}});
  it.each([
    ['fits', pod('500m', '64Mi'), node('1', '1Gi'), undefined],
    ['too much cpu', pod('2', '64Mi'), node('1', '1Gi'), {reason: "Node didn't have enough allocatable resources: cpu, requested: 2000, allocatable: 1000", cause: 'NodeCapacity'}],
    ['too much of both', pod('2', '2Gi'), node('1', '1Gi'), {
      reason: "Node didn't have enough allocatable resources: cpu, requested: 2000, allocatable: 1000; memory, requested: 2147483648, allocatable: 1073741824", cause: 'NodeCapacity',
    }],
    ['not linux', pod('1', '1Mi'), node('4', '1Gi', 'windows'), {reason: 'pod resize is only supported on linux nodes, node "n1" is "windows"', cause: 'UnsupportedPlatform'}],
  ])('resize on the node: %s', (_what, p, n, expected) => {
    expect(resizeRefusalOnNode(p as JsonObject, n as JsonObject)).toEqual(expected);
  });
});
