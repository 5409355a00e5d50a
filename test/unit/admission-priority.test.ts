import {describe, expect, it} from '@jest/globals';
import {Priority, decidePodPriority, defaultPriorityClass, type PriorityClassView} from '../../src/daemons/apiserver/admission/plugins/priority.js';
import {names} from '../../src/api/names.js';
import {attributes, pod, podAttributes} from '../helpers/admission-attributes.js';
import type {JsonObject} from '../../src/patch/types.js';

const high: PriorityClassView = {name: 'high', value: 1000, globalDefault: false};
const never: PriorityClassView = {name: 'batch', value: 10, globalDefault: false, preemptionPolicy: 'Never'};
const def: PriorityClassView = {name: 'def', value: 50, globalDefault: true, preemptionPolicy: 'PreemptLowerPriority'};
const lowDef: PriorityClassView = {name: 'low-def', value: 5, globalDefault: true};

describe('Priority: the pod decision', () => {
  it.each<[string, JsonObject, PriorityClassView[], unknown]>([
    ['no class, no default: priority 0 and PreemptLowerPriority', {}, [high], {allowed: true, priorityClassName: '', priority: 0, preemptionPolicy: 'PreemptLowerPriority'}],
    ['no class: the global default', {}, [high, def], {allowed: true, priorityClassName: 'def', priority: 50, preemptionPolicy: 'PreemptLowerPriority'}],
    ['the class named', {priorityClassName: 'high'}, [high, def], {allowed: true, priorityClassName: 'high', priority: 1000}],
    ['the class preemption policy', {priorityClassName: 'batch'}, [never], {allowed: true, priorityClassName: 'batch', priority: 10, preemptionPolicy: 'Never'}],
    ['an unknown class', {priorityClassName: 'nope'}, [high], {allowed: false, reason: 'no PriorityClass with name nope was found'}],
    ['a different priority in the spec', {priorityClassName: 'high', priority: 7}, [high], {allowed: false, reason: 'the integer value of priority (7) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name'}],
    ['the same priority in the spec is fine', {priorityClassName: 'high', priority: 1000}, [high], {allowed: true, priorityClassName: 'high', priority: 1000}],
    ['a different policy in the spec', {priorityClassName: 'batch', preemptionPolicy: 'PreemptLowerPriority'}, [never], {allowed: false, reason: 'the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name'}],
  ])('%s', (_t, spec, classes, expected) => {
    expect(decidePodPriority(spec, classes)).toEqual(expected);
  });

  it('of several global defaults, the lowest value wins', () => {
    expect(defaultPriorityClass([def, lowDef])?.name).toBe('low-def');
  });
});

describe('Priority: the plugin', () => {
  const classes: JsonObject[] = [
    {metadata: {name: 'system-node-critical'}, value: 2000001000},
    {metadata: {name: 'def'}, value: 50, globalDefault: true},
  ];
  const plugin = new Priority(async () => classes);

  it('sets priority from the system class and refuses an unknown one', async () => {
    const p = pod({priorityClassName: 'system-node-critical'});
    await plugin.admit(podAttributes('CREATE', p));
    expect((p.spec as JsonObject).priority).toBe(2000001000);
    await expect(plugin.admit(podAttributes('CREATE', pod({priorityClassName: 'gold'})))).rejects.toThrow('pods "web" is forbidden: no PriorityClass with name gold was found');
  });

  it('keeps the priority on update', async () => {
    const p = pod();
    await plugin.admit(podAttributes('UPDATE', p, {oldObject: pod({priority: 50, preemptionPolicy: 'Never'})}));
    expect(p.spec).toMatchObject({priority: 50, preemptionPolicy: 'Never'});
  });

  it('allows only one global default class', async () => {
    const scheduling = names().groups.scheduling;
    const second = {metadata: {name: 'other'}, value: 1, globalDefault: true};
    await expect(plugin.validate(attributes(scheduling, 'priorityclasses', 'CREATE', second))).rejects.toThrow(
      'priorityclasses.' + scheduling + ' "other" is forbidden: PriorityClass def is already marked as default. Only one default can exist',
    );
    await plugin.validate(attributes(scheduling, 'priorityclasses', 'UPDATE', {metadata: {name: 'def'}, value: 60, globalDefault: true}));
    await plugin.validate(attributes(scheduling, 'priorityclasses', 'CREATE', {metadata: {name: 'plain'}, value: 3}));
  });
});
