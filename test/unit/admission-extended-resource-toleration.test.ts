import {describe, expect, it} from '@jest/globals';
import {ExtendedResourceToleration, isExtendedResourceName} from '../../src/daemons/apiserver/admission/plugins/extended-resource-toleration.js';
import {names} from '../../src/api/names.js';
import {pod, podAttributes} from '../helpers/admission-attributes.js';
import type {JsonObject} from '../../src/patch/types.js';

describe('ExtendedResourceToleration', () => {
  it.each([
    ['cpu', false],
    ['example.com/gpu', true],
    ['requests.example.com/gpu', false],
    ['NATIVE/foo', false],
    ['bad_domain/x', false],
  ])('%s is extended: %s', (name, expected) => {
    expect(isExtendedResourceName(name.replace('NATIVE', names().labelDomain))).toBe(expected);
  });

  it('adds one sorted toleration per extended resource, replacing a matching one and keeping equal ones', () => {
    const p = pod({
      containers: [{name: 'a', image: 'x', resources: {requests: {'example.com/gpu': '1', cpu: '1'}}}],
      initContainers: [{name: 'i', image: 'x', resources: {requests: {'acme.io/fpga': '2'}}}],
      tolerations: [{key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule'}, {key: 'other', operator: 'Exists'}],
    });
    new ExtendedResourceToleration().admit(podAttributes('CREATE', p));
    expect((p.spec as JsonObject).tolerations).toEqual([
      {key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule'},
      {key: 'other', operator: 'Exists'},
      {key: 'acme.io/fpga', operator: 'Exists', effect: 'NoSchedule'},
    ]);
  });
});
