/**
 * The validatingadmissionpolicy-status-controller: the status it wants for a policy (observed
 * generation, type-checking warnings), and the controller on the real REST API writing it for each
 * new generation.
 */
import {describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {desiredStatus, validatingAdmissionPolicyStatusController} from '../../src/daemons/controller-manager/controllers/validating-admission-policy-status.js';
import {eventually, useControllerHarness} from '../helpers/controller-harness.js';

const policy = (expression: string, generation = 1, observedGeneration?: number) => ({
  apiVersion: `${names().groups.admissionregistration}/v1`, kind: 'ValidatingAdmissionPolicy',
  metadata: {name: 'replicas', generation},
  spec: {
    matchConstraints: {resourceRules: [{apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments']}]},
    validations: [{expression}],
  },
  ...(observedGeneration !== undefined ? {status: {observedGeneration}} : {}),
});

describe('desiredStatus', () => {
  it('is nothing once the generation is observed', () => expect(desiredStatus(policy('object.spec.replicas < 3', 2, 2))).toBeUndefined());
  it('observes the generation with no warnings for declared fields', () => {
    expect(desiredStatus(policy('object.spec.replicas < 3', 2, 1))).toEqual({observedGeneration: 2, typeChecking: {}});
  });
  it('warns of an undeclared field, naming the expression and the kind', () => {
    expect(desiredStatus(policy('object.spec.replicaz < 3'))).toEqual({
      observedGeneration: 1,
      typeChecking: {expressionWarnings: [{
        fieldRef: 'spec.validations[0].expression',
        warning: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicaz'\n | object.spec.replicaz < 3\n | ...........^",
      }]},
    });
  });
});

const h = useControllerHarness();

describe('validatingadmissionpolicy-status-controller', () => {
  it('writes the status of each new generation', async () => {
    const path = `/apis/${names().groups.admissionregistration}/v1/validatingadmissionpolicies`;
    await h.client.request({method: 'POST', path, body: policy('object.spec.replicaz < 3')});
    await h.start(validatingAdmissionPolicyStatusController, {'concurrent-validating-admission-policy-status-syncs': 2});
    type Read = {metadata: {generation: number}; status?: {observedGeneration?: number; typeChecking?: {expressionWarnings?: Array<{fieldRef: string}>}}};
    const read = () => h.client.get<Read>(`${path}/replicas`);
    const first = await eventually(async () => ((await read()).status?.observedGeneration === 1 ? read() : undefined), 5000, 'generation 1 observed');
    expect(first.status?.typeChecking?.expressionWarnings?.map((w) => w.fieldRef)).toEqual(['spec.validations[0].expression']);

    await h.client.patch(`${path}/replicas`, 'application/merge-patch+json', {spec: {validations: [{expression: 'object.spec.replicas < 3'}]}});
    const second = await eventually(async () => {
      const p = await read();
      return p.metadata.generation === 2 && p.status?.observedGeneration === 2 ? p : undefined;
    }, 5000, 'generation 2 observed');
    expect(second.status?.typeChecking?.expressionWarnings).toBeUndefined();
  });
});
