import {describe, expect, it} from '@jest/globals';
import {chooseContainer, POD_LOG_PATH} from '../../src/daemons/apiserver/pod-logs.js';

describe('kubectl logs: which container', () => {
  const one = {spec: {containers: [{name: 'web'}]}};
  const two = {spec: {containers: [{name: 'web'}, {name: 'sidecar'}]}};
  it.each([
    [one, null, {container: 'web'}],
    [two, 'sidecar', {container: 'sidecar'}],
    [two, null, {error: 'a container name must be specified for pod p, choose one of: [web sidecar]'}],
    [one, 'nope', {error: 'container nope is not valid for pod p'}],
    [{spec: {containers: [{name: 'web'}], initContainers: [{name: 'setup'}], ephemeralContainers: [{name: 'debug'}]}}, 'setup', {container: 'setup'}],
    [{spec: {containers: [{name: 'web'}], ephemeralContainers: [{name: 'debug'}]}}, 'debug', {container: 'debug'}],
  ])('%j with %j', (pod, asked, expected) => expect(chooseContainer('p', pod, asked)).toEqual(expected));

  it('matches only the log subresource path', () => {
    expect(POD_LOG_PATH.exec('/api/v1/namespaces/default/pods/web/log')?.slice(1)).toEqual(['default', 'web']);
    expect(POD_LOG_PATH.exec('/api/v1/namespaces/default/pods/web/status')).toBeNull();
  });
});
