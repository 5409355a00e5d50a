import {describe, expect, it} from '@jest/globals';
import {LimitRanger, limitRequestRatioConstraint, maxConstraint, minConstraint, mutatePod, podTotal, validateClaim, validatePod} from '../../src/daemons/apiserver/admission/plugins/limit-ranger.js';
import {names} from '../../src/api/names.js';
import {attributes, pod, podAttributes} from '../helpers/admission-attributes.js';
import type {JsonObject} from '../../src/patch/types.js';

const range = (...limits: JsonObject[]): JsonObject => ({metadata: {name: 'limits', namespace: 'default'}, spec: {limits}});
const container = (name: string, resources: JsonObject = {}) => ({name, image: 'x', resources});

describe('LimitRanger: constraints with upstream messages', () => {
  it.each([
    ['min: no request', minConstraint('Container', 'cpu', '100m', {}, {}), 'minimum cpu usage per Container is 100m.  No request is specified'],
    ['min: request below', minConstraint('Container', 'cpu', '0.1', {cpu: '50m'}, {}), 'minimum cpu usage per Container is 100m, but request is 50m'],
    ['min: limit below', minConstraint('Container', 'memory', '1Mi', {memory: '2Mi'}, {memory: '512Ki'}), 'minimum memory usage per Container is 1Mi, but limit is 512Ki'],
    ['min: fine', minConstraint('Container', 'cpu', '100m', {cpu: '1'}, {}), undefined],
    ['max: no limit', maxConstraint('Pod', 'memory', '1Gi', {}, {}), 'maximum memory usage per Pod is 1Gi.  No limit is specified'],
    ['max: limit above', maxConstraint('Container', 'cpu', '1', {}, {cpu: '1500m'}), 'maximum cpu usage per Container is 1, but limit is 1500m'],
    ['max: request above', maxConstraint('Container', 'cpu', '1', {cpu: '2'}, {cpu: '1'}), 'maximum cpu usage per Container is 1, but request is 2'],
    ['ratio: no request', limitRequestRatioConstraint('Container', 'cpu', '2', {}, {cpu: '1'}), 'cpu max limit to request ratio per Container is 2, but no request is specified or request is 0'],
    ['ratio: above', limitRequestRatioConstraint('Container', 'cpu', '2', {cpu: '100m'}, {cpu: '300m'}), 'cpu max limit to request ratio per Container is 2, but provided ratio is 3.000000'],
    ['ratio: within', limitRequestRatioConstraint('Container', 'cpu', '2', {cpu: '100m'}, {cpu: '200m'}), undefined],
  ])('%s', (_t, got, expected) => {
    expect(got).toBe(expected);
  });
});

describe('LimitRanger: defaults', () => {
  it('sets missing container defaults and records them in the annotation', () => {
    const p = pod({containers: [container('app', {limits: {cpu: '1'}}), container('side')], initContainers: [container('init')]});
    mutatePod(range({type: 'Container', default: {cpu: '500m', memory: '256Mi'}, defaultRequest: {cpu: '100m', memory: '128Mi'}}), p);
    const [app, side] = (p.spec as JsonObject).containers as JsonObject[];
    expect(app!.resources).toEqual({limits: {cpu: '1', memory: '256Mi'}, requests: {cpu: '100m', memory: '128Mi'}});
    expect(side!.resources).toEqual({limits: {cpu: '500m', memory: '256Mi'}, requests: {cpu: '100m', memory: '128Mi'}});
    expect((p.metadata as JsonObject).annotations).toEqual({
      [names().podAdmission.limitRangerAnnotation]:
        'LimitRanger plugin set: cpu, memory request for container app; memory limit for container app; cpu, memory request for container side; cpu, memory limit for container side; cpu, memory request for init container init; cpu, memory limit for init container init',
    });
  });

  it('sums containers and takes the largest init container for Pod limits (sidecars add up)', () => {
    const p = pod({
      containers: [container('a', {requests: {cpu: '200m'}}), container('b', {requests: {cpu: '300m'}})],
      initContainers: [container('big', {requests: {cpu: '1'}}), {...container('sidecar', {requests: {cpu: '100m'}}), restartPolicy: 'Always'}],
    });
    expect(podTotal(p, 'requests')).toEqual({cpu: '1'});
    const q = pod({containers: [container('a', {requests: {cpu: '2'}})], initContainers: [{...container('s', {requests: {cpu: '100m'}}), restartPolicy: 'Always'}, container('after', {requests: {cpu: '1'}})]});
    expect(podTotal(q, 'requests')).toEqual({cpu: '2100m'});
  });

  it('validates pods and claims against every item', () => {
    const p = pod({containers: [container('a', {requests: {cpu: '2'}, limits: {cpu: '2'}}), container('b', {requests: {cpu: '2'}, limits: {cpu: '2'}})]});
    expect(validatePod(range({type: 'Container', max: {cpu: '2'}}, {type: 'Pod', max: {cpu: '3'}}), p)).toEqual(['maximum cpu usage per Pod is 3, but limit is 4']);
    const claim = {metadata: {name: 'data'}, spec: {resources: {requests: {storage: '20Gi'}}}};
    expect(validateClaim(range({type: 'PersistentVolumeClaim', min: {storage: '1Gi'}, max: {storage: '10Gi'}}), claim)).toEqual(['maximum storage usage per PersistentVolumeClaim is 10Gi, but request is 20Gi']);
  });
});

describe('LimitRanger: the plugin', () => {
  const ranges = [range({type: 'Container', default: {cpu: '500m'}, defaultRequest: {cpu: '100m'}, max: {cpu: '1'}})];
  const plugin = new LimitRanger(async () => ranges);

  it('defaults a new pod, taking a limit as the request as upstream defaulting does first', async () => {
    const p = pod({containers: [container('a'), container('b', {limits: {cpu: '800m'}})]});
    const a = podAttributes('CREATE', p);
    await plugin.admit(a);
    await plugin.validate(a);
    const [first, second] = (p.spec as JsonObject).containers as JsonObject[];
    expect(first!.resources).toEqual({limits: {cpu: '500m'}, requests: {cpu: '100m'}});
    expect(second!.resources).toEqual({limits: {cpu: '800m'}, requests: {cpu: '800m'}});
  });

  it('refuses with every problem aggregated', async () => {
    const p = pod({containers: [container('a', {limits: {cpu: '2'}}), container('b', {limits: {cpu: '3'}})]});
    const a = podAttributes('CREATE', p);
    await plugin.admit(a);
    await expect(plugin.validate(a)).rejects.toThrow(
      'pods "web" is forbidden: [maximum cpu usage per Container is 1, but limit is 2, maximum cpu usage per Container is 1, but limit is 3]',
    );
  });

  it('leaves pod updates, subresources and objects being deleted alone', async () => {
    const p = pod({containers: [container('a', {limits: {cpu: '5'}})]});
    await plugin.validate(podAttributes('UPDATE', p, {oldObject: p}));
    await plugin.validate(podAttributes('CREATE', p, {subresource: 'binding'}));
    const claim = {metadata: {name: 'c', namespace: 'default'}, spec: {resources: {requests: {storage: '1Gi'}}}};
    const claims = new LimitRanger(async () => [range({type: 'PersistentVolumeClaim', max: {storage: '1Mi'}})]);
    await claims.validate(attributes('', 'persistentvolumeclaims', 'UPDATE', claim, {oldObject: {...claim, metadata: {name: 'c', deletionTimestamp: '2026-01-01T00:00:00Z'}}}));
    await expect(claims.validate(attributes('', 'persistentvolumeclaims', 'CREATE', claim))).rejects.toThrow('maximum storage usage per PersistentVolumeClaim is 1Mi, but request is 1Gi');
  });
});
