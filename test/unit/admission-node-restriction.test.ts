import {describe, expect, it} from '@jest/globals';
import {NodeRestriction, forbiddenLabels, mirrorPodCreateProblem, nodeOf, nodeProblem} from '../../src/daemons/apiserver/admission/plugins/node-restriction.js';
import {names} from '../../src/api/names.js';
import {attributes, pod, podAttributes} from '../helpers/admission-attributes.js';
import type {JsonObject} from '../../src/patch/types.js';
import type {UserInfo} from '../../src/daemons/shared/authentication/user.js';

const nodeUser = (name: string): UserInfo => ({name: `system:node:${name}`, groups: ['system:nodes', 'system:authenticated']});
const node = (name: string, labels: Record<string, string> = {}, spec: JsonObject = {}): JsonObject => ({metadata: {name, uid: `uid-${name}`, labels}, spec});
const mirrorOf = (nodeName: string, extra: JsonObject = {}, owner: JsonObject = {}): JsonObject =>
  pod({nodeName, ...extra}, {
    annotations: {[names().annotations.mirrorPod]: 'hash'},
    ownerReferences: [{apiVersion: 'v1', kind: 'Node', name: nodeName, uid: `uid-${nodeName}`, controller: true, ...owner}],
  });

describe('NodeRestriction: who is a node', () => {
  it.each([
    [nodeUser('a'), {isNode: true, nodeName: 'a'}],
    [{name: 'system:node:a', groups: []}, {isNode: false, nodeName: ''}],
    [{name: 'weird', groups: ['system:nodes']}, {isNode: true, nodeName: ''}],
  ])('%j', (user, expected) => {
    expect(nodeOf(user)).toEqual(expected);
  });
});

describe('NodeRestriction: nodes', () => {
  const restricted = () => `${names().podAdmission.nodeRestrictionLabelNamespace}/pool`;
  const L = names().labelDomain;
  it.each<[string, () => string | undefined]>([
    ['another node', () => nodeProblem('a', 'UPDATE', 'b', node('b'), node('b'))],
    ['its own node', () => nodeProblem('a', 'UPDATE', 'a', node('a', {x: '1'}), node('a'))],
    ['a node-restriction label on create', () => nodeProblem('a', 'CREATE', 'a', node('a', {[restricted()]: 'x'}))],
    ['a reserved label outside the agent set on update', () => nodeProblem('a', 'UPDATE', 'a', node('a', {[`${L}/role`]: 'x'}), node('a'))],
    ['the same on create is allowed', () => nodeProblem('a', 'CREATE', 'a', node('a', {[`${L}/role`]: 'x'}))],
    ['an agent label on update', () => nodeProblem('a', 'UPDATE', 'a', node('a', {[`node.${L}/exclude`]: 'x', [names().labels.zone]: 'z'}), node('a'))],
    ['changed taints', () => nodeProblem('a', 'UPDATE', 'a', node('a', {}, {taints: []}), node('a', {}, {taints: [{key: 'k', effect: 'NoSchedule'}]}))],
  ])('%s', (title, run) => {
    const expected: Record<string, string | undefined> = {
      'another node': 'node "a" is not allowed to modify node "b"',
      'a node-restriction label on create': `node "a" is not allowed to set the following labels: ${restricted()}`,
      'a reserved label outside the agent set on update': `is not allowed to modify labels: ${L}/role`,
      'changed taints': 'node "a" is not allowed to modify taints',
    };
    expect(run()).toBe(expected[title]);
  });

  it('lists forbidden labels sorted', () => {
    expect(forbiddenLabels([`b.${names().podAdmission.nodeRestrictionLabelNamespace}/x`, 'example.com/free'], 'UPDATE')).toEqual([`b.${names().podAdmission.nodeRestrictionLabelNamespace}/x`]);
  });
});

describe('NodeRestriction: mirror pods', () => {
  it.each<[string, JsonObject, string | undefined]>([
    ['a proper mirror pod', mirrorOf('a'), undefined],
    ['not a mirror pod', pod({nodeName: 'a'}), `pod does not have "MIRROR" annotation, node "a" can only create mirror pods`],
    ['bound elsewhere', mirrorOf('b', {}, {name: 'a', uid: 'uid-a'}), 'node "a" can only create pods with spec.nodeName set to itself'],
    ['owned by another node', {...mirrorOf('a'), metadata: {...(mirrorOf('a').metadata as JsonObject), ownerReferences: [{apiVersion: 'v1', kind: 'Node', name: 'b', uid: 'x', controller: true}]}}, 'node "a" can only create pods with an owner reference set to itself'],
    ['not a controller', mirrorOf('a', {}, {controller: false}), 'node "a" can only create pods with a controller owner reference set to itself'],
    ['blocking deletion', mirrorOf('a', {}, {blockOwnerDeletion: true}), 'node "a" must not set blockOwnerDeletion on an owner reference'],
    ['a wrong uid', mirrorOf('a', {}, {uid: 'other'}), 'node a UID mismatch: expected other got uid-a'],
    ['a service account', mirrorOf('a', {serviceAccountName: 'sa'}), 'node "a" can not create pods that reference a service account'],
    ['a secret', mirrorOf('a', {volumes: [{name: 'v', secret: {secretName: 's'}}]}), 'node "a" can not create pods that reference secrets'],
    ['a config map', mirrorOf('a', {containers: [{name: 'c', envFrom: [{configMapRef: {name: 'cm'}}]}]}), 'node "a" can not create pods that reference configmaps'],
    ['a claim', mirrorOf('a', {volumes: [{name: 'v', persistentVolumeClaim: {claimName: 'c'}}]}), 'node "a" can not create pods that reference persistentvolumeclaims'],
  ])('%s', (_t, p, expected) => {
    expect(mirrorPodCreateProblem('a', p, 'uid-a')).toBe(expected?.replace('MIRROR', names().annotations.mirrorPod));
  });
});

describe('NodeRestriction: the plugin', () => {
  const pods: Record<string, JsonObject> = {mine: pod({nodeName: 'a'}, {name: 'mine', uid: 'u1'}), theirs: pod({nodeName: 'b'}, {name: 'theirs', uid: 'u2'})};
  const plugin = new NodeRestriction({getPod: async (_ns, name) => pods[name], getNode: async (name) => node(name)});
  const as = nodeUser('a');

  it('leaves users that are not nodes alone', async () => {
    await plugin.admit(attributes('', 'nodes', 'UPDATE', node('b'), {oldObject: node('b')}));
  });

  it('refuses a node that edits another node, with the message kubectl shows', async () => {
    await expect(plugin.admit(attributes('', 'nodes', 'UPDATE', node('b'), {oldObject: node('b'), user: as}))).rejects.toThrow('nodes "b" is forbidden: node "a" is not allowed to modify node "b"');
  });

  it('pods: mirror pods, deletes, status and evictions of its own pods only', async () => {
    await plugin.admit(podAttributes('CREATE', mirrorOf('a'), {user: as}));
    await expect(plugin.admit(podAttributes('DELETE', undefined as unknown as JsonObject, {name: 'theirs', user: as, oldObject: pods.theirs}))).rejects.toThrow('node "a" can only delete pods with spec.nodeName set to itself');
    await plugin.admit(podAttributes('DELETE', undefined as unknown as JsonObject, {name: 'mine', user: as, oldObject: pods.mine}));
    await expect(plugin.admit(podAttributes('UPDATE', pods.theirs!, {subresource: 'status', oldObject: pods.theirs, user: as}))).rejects.toThrow('node "a" can only update pod status for pods with spec.nodeName set to itself');
    const relabelled = pod({nodeName: 'a'}, {name: 'mine', labels: {x: 'y'}});
    await expect(plugin.admit(podAttributes('UPDATE', relabelled, {subresource: 'status', oldObject: pods.mine, user: as}))).rejects.toThrow('node "a" cannot update labels through pod status');
    await expect(plugin.admit(podAttributes('CREATE', {metadata: {name: 'theirs'}}, {subresource: 'eviction', name: 'theirs', user: as}))).rejects.toThrow('node a can only evict pods with spec.nodeName set to itself');
    await plugin.admit(podAttributes('CREATE', {metadata: {name: 'mine'}}, {subresource: 'eviction', name: 'mine', user: as}));
    await expect(plugin.admit(podAttributes('UPDATE', pods.mine!, {oldObject: pods.mine, user: as}))).rejects.toThrow('unexpected operation "UPDATE", node "a" can only create and delete mirror pods');
  });

  it('leases, CSINodes and tokens', async () => {
    const g = names().groups;
    const leaseNs = names().namespaces.nodeLease;
    await plugin.admit(attributes(g.coordination, 'leases', 'CREATE', {metadata: {name: 'a', namespace: leaseNs}}, {user: as}));
    await expect(plugin.admit(attributes(g.coordination, 'leases', 'UPDATE', {metadata: {name: 'b', namespace: leaseNs}}, {user: as}))).rejects.toThrow('can only access node lease with the same name as the requesting node');
    await expect(plugin.admit(attributes(g.coordination, 'leases', 'CREATE', {metadata: {name: 'a', namespace: 'default'}}, {user: as}))).rejects.toThrow(`can only access leases in the "${leaseNs}" system namespace`);
    await expect(plugin.admit(attributes(g.storage, 'csinodes', 'CREATE', {metadata: {name: 'b'}}, {user: as}))).rejects.toThrow('can only access CSINode with the same name as the requesting node');
    const token = (ref: JsonObject) => ({spec: {boundObjectRef: ref}});
    await plugin.admit(attributes('', 'serviceaccounts', 'CREATE', token({apiVersion: 'v1', kind: 'Pod', name: 'mine', uid: 'u1'}), {subresource: 'token', name: 'default', user: as}));
    await expect(plugin.admit(attributes('', 'serviceaccounts', 'CREATE', token({apiVersion: 'v1', kind: 'Pod', name: 'theirs', uid: 'u2'}), {subresource: 'token', name: 'default', user: as}))).rejects.toThrow('node requested token bound to a pod scheduled on a different node');
    await expect(plugin.admit(attributes('', 'serviceaccounts', 'CREATE', {spec: {}}, {subresource: 'token', name: 'default', user: as}))).rejects.toThrow('node requested token not bound to a pod');
  });
});
