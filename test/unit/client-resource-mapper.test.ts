/** TYPE arguments to resources, as kubectl's discovery RESTMapper and shortcut expander map them. */
import {describe, expect, it} from '@jest/globals';
import {ResourceMapper, resourcePath, type ApiResourceList} from '../../src/client/resource-mapper.js';

const r = (name: string, kind: string, namespaced: boolean, shortNames?: string[], singularName = kind.toLowerCase()) => ({name, kind, namespaced, shortNames, singularName});
const lists: ApiResourceList[] = [
  {groupVersion: 'v1', resources: [r('pods', 'Pod', true, ['po']), {...r('pods/status', 'Pod', true), singularName: ''}, r('namespaces', 'Namespace', false, ['ns']), r('events', 'Event', true, ['ev'])]},
  {groupVersion: 'apps/v1', resources: [r('deployments', 'Deployment', true, ['deploy']), {name: 'deployments/scale', kind: 'Scale', group: 'autoscaling', version: 'v1', namespaced: true}]},
  {groupVersion: 'events.orch.io/v1', resources: [r('events', 'Event', true, ['ev'])]},
  {groupVersion: 'example.com/v2', resources: [r('widgets', 'Widget', true, ['wd'])]},
  {groupVersion: 'example.com/v1', resources: [r('widgets', 'Widget', true, ['wd'])]},
];
const mapper = new ResourceMapper(lists);

describe('resourceFor', () => {
  it.each([
    ['pods', 'v1', 'pods'],
    ['pod', 'v1', 'pods'],
    ['po', 'v1', 'pods'],
    ['Pod', 'v1', 'pods'],
    ['PODS', 'v1', 'pods'],
    ['ns', 'v1', 'namespaces'],
    ['deployment', 'apps/v1', 'deployments'],
    ['deploy', 'apps/v1', 'deployments'],
    ['deployment.apps', 'apps/v1', 'deployments'],
    ['Deployment.apps', 'apps/v1', 'deployments'],
    ['deploy.apps', 'apps/v1', 'deployments'],
    ['deployments.v1.apps', 'apps/v1', 'deployments'],
    ['deploy.app', 'apps/v1', 'deployments'],
    // The core group comes first in discovery, so it wins a name two groups serve.
    ['events', 'v1', 'events'],
    ['events.events.orch.io', 'events.orch.io/v1', 'events'],
    // The preferred (first listed) version of a group wins; a version can be asked for.
    ['widgets', 'example.com/v2', 'widgets'],
    ['wd', 'example.com/v2', 'widgets'],
    ['widget.example.com', 'example.com/v2', 'widgets'],
    ['widgets.v1.example.com', 'example.com/v1', 'widgets'],
  ])('%s -> %s %s', (arg, groupVersion, resource) => {
    const m = mapper.resourceFor(arg);
    expect([m.group ? `${m.group}/${m.version}` : m.version, m.resource]).toEqual([groupVersion, resource]);
  });

  it.each(['foos', 'pods/status', 'deployments.extensions', 'scale'])('%s is no resource type', (arg) => {
    expect(() => mapper.resourceFor(arg)).toThrow(`the server doesn't have a resource type "${arg.split('.')[0].toLowerCase()}"`);
  });
});

describe('resourceForKind', () => {
  it.each([
    ['v1', 'Pod', 'pods', true],
    ['v1', 'Namespace', 'namespaces', false],
    ['apps/v1', 'Deployment', 'deployments', true],
    ['example.com/v1', 'Widget', 'widgets', true],
  ])('%s %s', (apiVersion, kind, resource, namespaced) => {
    expect(mapper.resourceForKind(apiVersion, kind)).toMatchObject({resource, namespaced});
  });

  it.each([['apps/v2', 'Deployment'], ['v1', 'Gadget'], ['apps/v1', 'Scale']])('%s %s has no mapping', (apiVersion, kind) => {
    expect(mapper.resourceForKind(apiVersion, kind)).toBeUndefined();
  });
});

describe('resourcePath', () => {
  it.each([
    ['pods', {namespace: 'default', name: 'web'}, '/api/v1/namespaces/default/pods/web'],
    ['pods', {namespace: 'default', name: 'web', subresource: 'status'}, '/api/v1/namespaces/default/pods/web/status'],
    ['pods', {namespace: 'default'}, '/api/v1/namespaces/default/pods'],
    ['ns', {namespace: 'ignored', name: 'kube'}, '/api/v1/namespaces/kube'],
    ['deploy', {namespace: 'prod', name: 'web', subresource: 'scale'}, '/apis/apps/v1/namespaces/prod/deployments/web/scale'],
    ['pods', {namespace: 'a b', name: 'x/y'}, '/api/v1/namespaces/a%20b/pods/x%2Fy'],
  ])('%s %j', (type, target, path) => expect(resourcePath(mapper.resourceFor(type), target)).toBe(path));
});
