import {describe, expect, it} from '@jest/globals';
import {agentRequestAttributes} from '../../src/daemons/agent/server/request-attributes.js';

const user = {name: 'u', groups: []};

describe('agentRequestAttributes (upstream kubelet auth.go)', () => {
  it.each([
    ['GET', '/stats/summary', 'get', 'stats'],
    ['GET', '/stats', 'get', 'stats'],
    ['GET', '/metrics/resource', 'get', 'metrics'],
    ['GET', '/logs/syslog', 'get', 'log'],
    ['GET', '/pods', 'get', 'pods'],
    ['GET', '/healthz', 'get', 'healthz'],
    ['GET', '/configz', 'get', 'configz'],
    ['GET', '/statsz', 'get', 'proxy'],
    ['POST', '/exec/ns/pod/c', 'create', 'proxy'],
    ['GET', '/containerLogs/ns/pod/c', 'get', 'proxy'],
    ['PUT', '/spec/', 'update', 'spec'],
  ])('%s %s is %s nodes/%s', (method, path, verb, subresource) => {
    expect(agentRequestAttributes(user, method, path, 'n1')).toEqual({user, verb, resourceRequest: true, apiGroup: '', apiVersion: 'v1', resource: 'nodes', subresource, name: 'n1', path});
  });
});
