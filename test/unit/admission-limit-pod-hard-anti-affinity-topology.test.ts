import {describe, expect, it} from '@jest/globals';
import {LimitPodHardAntiAffinityTopology, forbiddenTopologyKey} from '../../src/daemons/apiserver/admission/plugins/limit-pod-hard-anti-affinity-topology.js';
import {names} from '../../src/api/names.js';
import {pod, podAttributes} from '../helpers/admission-attributes.js';

const term = (topologyKey: string) => ({labelSelector: {matchLabels: {app: 'x'}}, topologyKey});

describe('LimitPodHardAntiAffinityTopology', () => {
  it.each([
    ['no affinity', {}, undefined],
    ['hostname key', {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [term('HOST')]}}}, undefined],
    ['zone key', {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [term('HOST'), term('zone')]}}}, 'zone'],
    ['preferred terms are free', {affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, podAffinityTerm: term('zone')}]}}}, undefined],
  ])('%s', (_t, spec, expected) => {
    const text = JSON.stringify(spec).replaceAll('HOST', names().labels.hostname);
    expect(forbiddenTopologyKey(pod(JSON.parse(text)))).toBe(expected);
  });

  it("refuses with upstream's message", () => {
    const p = pod({affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [term('zone')]}}});
    expect(() => new LimitPodHardAntiAffinityTopology().validate(podAttributes('CREATE', p))).toThrow(
      `pods "web" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey zone but only key ${names().labels.hostname} is allowed`,
    );
  });
});
