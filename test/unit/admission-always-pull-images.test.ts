import {describe, expect, it} from '@jest/globals';
import {AlwaysPullImages} from '../../src/daemons/apiserver/admission/plugins/always-pull-images.js';
import {ApiError} from '../../src/api/status.js';
import {pod, podAttributes} from '../helpers/admission-attributes.js';
import type {JsonObject} from '../../src/patch/types.js';

const containers = (p: JsonObject) => [...((p.spec as JsonObject).initContainers as JsonObject[] ?? []), ...((p.spec as JsonObject).containers as JsonObject[])];

describe('AlwaysPullImages', () => {
  const plugin = new AlwaysPullImages();
  it('sets Always on every container and init container of a new pod', () => {
    const p = pod({initContainers: [{name: 'init', image: 'busybox', imagePullPolicy: 'IfNotPresent'}]});
    plugin.admit(podAttributes('CREATE', p));
    expect(containers(p).map((c) => c.imagePullPolicy)).toEqual(['Always', 'Always']);
  });

  it.each([
    ['one container', pod({containers: [{name: 'a', image: 'x', imagePullPolicy: 'Never'}]}), 403, 'pods "web" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always"'],
    ['two containers: upstream aggregate', pod({containers: [{name: 'a', image: 'x', imagePullPolicy: 'Never'}, {name: 'b', image: 'y'}]}), 500,
      '[pods "web" is forbidden: spec.containers[0].imagePullPolicy: Unsupported value: "Never": supported values: "Always", pods "web" is forbidden: spec.containers[1].imagePullPolicy: Unsupported value: "": supported values: "Always"]'],
  ])('validation refuses a pod changed back after mutation: %s', (_t, p, code, message) => {
    try {
      plugin.validate(podAttributes('CREATE', p));
      throw new Error('admitted');
    } catch (error) {
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status.code).toBe(code);
      expect((error as ApiError).status.message).toBe(message);
    }
  });

  it('leaves an update with no new image alone, but not one with a new image', () => {
    const old = pod({containers: [{name: 'app', image: 'nginx', imagePullPolicy: 'IfNotPresent'}]});
    const same = pod({containers: [{name: 'app', image: 'nginx', imagePullPolicy: 'IfNotPresent'}]});
    plugin.admit(podAttributes('UPDATE', same, {oldObject: old}));
    expect(containers(same)[0]!.imagePullPolicy).toBe('IfNotPresent');
    const changed = pod({containers: [{name: 'app', image: 'nginx:2', imagePullPolicy: 'IfNotPresent'}]});
    plugin.admit(podAttributes('UPDATE', changed, {oldObject: old}));
    expect(containers(changed)[0]!.imagePullPolicy).toBe('Always');
  });
});
