import {describe, expect, it} from '@jest/globals';
import {TaintNodesByCondition} from '../../src/daemons/apiserver/admission/plugins/taint-nodes-by-condition.js';
import {names} from '../../src/api/names.js';
import {attributes} from '../helpers/admission-attributes.js';
import type {JsonObject} from '../../src/patch/types.js';

describe('TaintNodesByCondition', () => {
  const key = () => names().taints.notReady;
  it.each([
    ['a node without taints gets the not-ready NoSchedule one', [], () => [{key: key(), effect: 'NoSchedule'}]],
    ['other taints are kept', [{key: 'gpu', effect: 'NoSchedule'}], () => [{key: 'gpu', effect: 'NoSchedule'}, {key: key(), effect: 'NoSchedule'}]],
    ['an existing not-ready NoSchedule taint is not doubled', 'self', () => [{key: key(), effect: 'NoSchedule', value: 'x'}]],
    ['a not-ready NoExecute taint does not count', 'noexec', () => [{key: key(), effect: 'NoExecute'}, {key: key(), effect: 'NoSchedule'}]],
  ])('%s', (_title, given, expected) => {
    const taints = given === 'self' ? [{key: key(), effect: 'NoSchedule', value: 'x'}] : given === 'noexec' ? [{key: key(), effect: 'NoExecute'}] : given;
    const node: JsonObject = {metadata: {name: 'n1'}, spec: {taints}};
    new TaintNodesByCondition().admit(attributes('', 'nodes', 'CREATE', node));
    expect((node.spec as JsonObject).taints).toEqual(expected());
  });

  it('only on create, and not for node status', () => {
    const plugin = new TaintNodesByCondition();
    expect(plugin.handles('UPDATE')).toBe(false);
    const node: JsonObject = {metadata: {name: 'n1'}};
    plugin.admit(attributes('', 'nodes', 'CREATE', node, {subresource: 'status'}));
    expect(node.spec).toBeUndefined();
  });
});
