import {describe, expect, it} from '@jest/globals';
import {podEventObject} from '../../src/daemons/agent/event-objects.js';

describe('podEventObject', () => {
  const pod = {metadata: {name: 'web', namespace: 'shop', uid: 'u-1'}, spec: {initContainers: [{name: 'setup'}]}};

  it.each([
    [undefined, undefined],
    ['app', 'spec.containers{app}'],
    ['setup', 'spec.initContainers{setup}'],
  ])('container %j -> fieldPath %j', (container, fieldPath) => {
    expect(podEventObject(pod, container)).toEqual({apiVersion: 'v1', kind: 'Pod', name: 'web', namespace: 'shop', uid: 'u-1', ...(fieldPath ? {fieldPath} : {})});
  });

  it('puts a pod without a namespace in default', () => {
    expect(podEventObject({metadata: {name: 'static'}})).toEqual({apiVersion: 'v1', kind: 'Pod', name: 'static', namespace: 'default'});
  });
});
