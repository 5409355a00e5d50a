/** Discovery documents, /version, OpenAPI stubs, and CustomResourceDefinitions served generically. */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { call, startTestApi, WatchReader, type TestApi } from '../helpers/memory-store.js';
import { decodeOpenApiV2 } from '../../src/daemons/apiserver/rest/openapi/protobuf.js';

let api: TestApi;
beforeEach(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  await api.close();
});

const AGGREGATED_ACCEPT = 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json';

describe('discovery', () => {
  it('/api answers APIVersions without apiVersion, in plain JSON even to the aggregated Accept', async () => {
    const reply = await call(api, 'GET', '/api', { accept: AGGREGATED_ACCEPT });
    expect(reply.headers.get('content-type')).toBe('application/json');
    expect(reply.body).toEqual({ kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '127.0.0.1:6443' }] });
  });

  it('/api/v1 lists core resources and subresources as upstream shapes them', async () => {
    const reply = await call(api, 'GET', '/api/v1');
    expect(reply.body.kind).toBe('APIResourceList');
    expect(reply.body.apiVersion).toBeUndefined();
    expect(reply.body.groupVersion).toBe('v1');
    const byName = new Map(reply.body.resources.map((r: { name: string }) => [r.name, r]));
    expect(byName.get('pods')).toEqual({
      name: 'pods', singularName: 'pod', namespaced: true, kind: 'Pod',
      verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
      shortNames: ['po'], categories: ['all'], storageVersionHash: expect.stringMatching(/^[A-Za-z0-9+/]{11}=$/),
    });
    expect(byName.get('pods/status')).toEqual({ name: 'pods/status', singularName: '', namespaced: true, kind: 'Pod', verbs: ['get', 'patch', 'update'] });
    expect(byName.get('pods/binding')).toMatchObject({ kind: 'Binding', verbs: ['create'] });
    expect(byName.get('namespaces/finalize')).toMatchObject({ verbs: ['update'] });
    expect(byName.get('replicationcontrollers/scale')).toMatchObject({ group: 'autoscaling', version: 'v1', kind: 'Scale' });
  });

  it('/apis lists the groups with orch names; group and version documents follow', async () => {
    const groups = await call(api, 'GET', '/apis', { accept: AGGREGATED_ACCEPT });
    expect(groups.body.kind).toBe('APIGroupList');
    expect(groups.body.apiVersion).toBe('v1');
    expect(groups.body.groups.map((g: { name: string }) => g.name)).toEqual([
      'apps', 'batch', 'coordination.orch.io', 'rbac.orch.io', 'scheduling.orch.io', 'discovery.orch.io', 'apiextensions.orch.io',
      // The catalog's groups (src/api/resource-catalog), by name.
      'admissionregistration.orch.io', 'apiregistration.orch.io', 'authentication.orch.io', 'authorization.orch.io', 'autoscaling', 'certificates.orch.io',
      'events.orch.io', 'flowcontrol.apiserver.orch.io', 'networking.orch.io', 'node.orch.io', 'policy', 'resource.orch.io', 'storage.orch.io',
    ]);
    const apps = await call(api, 'GET', '/apis/apps');
    expect(apps.body).toEqual({
      kind: 'APIGroup', apiVersion: 'v1', name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' },
    });
    const appsV1 = await call(api, 'GET', '/apis/apps/v1');
    expect(appsV1.body).toMatchObject({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'apps/v1' });
    expect(appsV1.body.resources.find((r: { name: string }) => r.name === 'deployments/scale')).toEqual({
      name: 'deployments/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'],
    });
  });

  it('/version answers the injected version', async () => {
    const reply = await call(api, 'GET', '/version');
    expect(reply.body).toMatchObject({ major: '1', minor: '32', gitVersion: 'v1.32.0-orch', platform: 'linux/amd64' });
  });

  it('serves OpenAPI v3 documents that tell kubectl fieldValidation is supported, and the v2 document in JSON and protobuf', async () => {
    const root = await call(api, 'GET', '/openapi/v3');
    const url = root.body.paths['apis/apps/v1'].serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=/);
    const doc = await call(api, 'GET', url);
    const patch = doc.body.paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}'].patch;
    expect(patch['x-kubernetes-group-version-kind']).toEqual({ group: 'apps', version: 'v1', kind: 'Deployment' });
    expect(patch.parameters).toContainEqual(expect.objectContaining({ name: 'fieldValidation', in: 'query' }));
    const v2 = await call(api, 'GET', '/openapi/v2');
    expect(v2.status).toBe(200);
    expect(v2.body.swagger).toBe('2.0');
    expect(v2.body.definitions['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind']).toEqual([{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
    // What kubectl asks for: protobuf, gnostic's Document.
    const pb = await fetch(`${api.url}/openapi/v2`, { headers: { accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
    expect(pb.headers.get('content-type')).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    const decoded = decodeOpenApiV2(new Uint8Array(await pb.arrayBuffer())) as any;
    expect(decoded.swagger).toBe('2.0');
    const deployment = decoded.definitions.additionalProperties.find((d: any) => d.name === 'io.k8s.api.apps.v1.Deployment');
    expect(deployment.value.vendorExtension).toEqual([{ name: 'x-kubernetes-group-version-kind', value: { yaml: '[{"group":"apps","kind":"Deployment","version":"v1"}]\n' } }]);
  });

  it('leaves other paths to the caller', async () => {
    const reply = await call(api, 'GET', '/healthz');
    expect(reply.status).toBe(404);
  });
});

/** A schema that keeps every field (upstream requires a schema per version). */
const ANY = { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } };
const crd = (scope = 'Namespaced') => ({
  apiVersion: 'apiextensions.orch.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.com' },
  spec: {
    group: 'example.com',
    scope,
    names: { plural: 'widgets', kind: 'Widget', shortNames: ['wd'] },
    versions: [
      { name: 'v1', served: true, storage: true, subresources: { status: {} }, schema: ANY },
      { name: 'v1beta1', served: true, storage: false, schema: ANY },
    ],
  },
});
const widget = (name: string, size = 1) => ({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name }, spec: { size } });
const WIDGETS = '/apis/example.com/v1/namespaces/default/widgets';

describe('custom resources', () => {
  it('a CRD is established at once and its resource served, discovered and stored under its group', async () => {
    const created = await call(api, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', { body: crd() });
    expect(created.status).toBe(201);
    expect(created.body.spec.names).toMatchObject({ singular: 'widget', listKind: 'WidgetList' });
    expect(created.body.status.conditions.map((c: { type: string; status: string }) => [c.type, c.status])).toEqual([['NamesAccepted', 'True'], ['Established', 'True']]);
    expect(created.body.status.storedVersions).toEqual(['v1']);

    const groups = await call(api, 'GET', '/apis');
    expect(groups.body.groups.at(-1)).toEqual({
      name: 'example.com',
      versions: [{ groupVersion: 'example.com/v1', version: 'v1' }, { groupVersion: 'example.com/v1beta1', version: 'v1beta1' }],
      preferredVersion: { groupVersion: 'example.com/v1', version: 'v1' },
    });
    const resources = await call(api, 'GET', '/apis/example.com/v1');
    expect(resources.body.resources.map((r: { name: string }) => r.name)).toEqual(['widgets', 'widgets/status']);

    const w = await call(api, 'POST', WIDGETS, { body: widget('w1') });
    expect(w.status).toBe(201);
    expect(w.body.metadata.generation).toBe(1);
    expect((await api.store.get('/registry/example.com/widgets/default/w1'))?.value).toContain('"size":1');
    const viaBeta = await call(api, 'GET', '/apis/example.com/v1beta1/namespaces/default/widgets/w1');
    expect(viaBeta.body.apiVersion).toBe('example.com/v1beta1');
  });

  it('custom resources refuse strategic merge patches and unconditional updates', async () => {
    await call(api, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', { body: crd() });
    await call(api, 'POST', WIDGETS, { body: widget('w') });
    const strategic = await call(api, 'PATCH', `${WIDGETS}/w`, { body: { spec: { size: 2 } }, contentType: 'application/strategic-merge-patch+json' });
    expect(strategic.status).toBe(415);
    expect(strategic.body.message).toBe(
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
    );
    const merge = await call(api, 'PATCH', `${WIDGETS}/w`, { body: { spec: { size: 2 } }, contentType: 'application/merge-patch+json' });
    expect(merge.body.spec.size).toBe(2);
    expect(merge.body.metadata.generation).toBe(2);
    const put = await call(api, 'PUT', `${WIDGETS}/w`, { body: widget('w', 3) });
    expect(put.status).toBe(422);
    expect(put.body.message).toBe('widgets.example.com "w" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update');
    const status = await call(api, 'PATCH', `${WIDGETS}/w/status`, { body: { status: { ok: true } }, contentType: 'application/merge-patch+json' });
    expect(status.body.status).toEqual({ ok: true });
    expect(status.body.metadata.generation).toBe(2);
  });

  it('cluster-scoped CRDs serve cluster paths; watches see custom objects', async () => {
    await call(api, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', { body: crd('Cluster') });
    const { reader, controller } = await WatchReader.open(api, '/apis/example.com/v1/widgets?watch=1');
    await call(api, 'POST', '/apis/example.com/v1/widgets', { body: widget('cw') });
    expect((await reader.take(1)).map((e) => [e.type, e.object.kind, e.object.metadata.name, e.object.metadata.namespace])).toEqual([['ADDED', 'Widget', 'cw', undefined]]);
    controller.abort();
    expect((await call(api, 'POST', WIDGETS, { body: widget('nsd') })).status).toBe(404);
  });

  it('deleting the CRD removes its objects and stops serving it', async () => {
    await call(api, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', { body: crd() });
    await call(api, 'POST', WIDGETS, { body: widget('gone') });
    const deleted = await call(api, 'DELETE', '/apis/apiextensions.orch.io/v1/customresourcedefinitions/widgets.example.com');
    expect(deleted.status).toBe(200);
    expect(await api.store.get('/registry/example.com/widgets/default/gone')).toBeUndefined();
    const after = await call(api, 'GET', WIDGETS);
    expect(after.status).toBe(404);
    expect(after.text).toBe('404 page not found\n');
  });

  it('a new handler on the same store serves the stored CRDs once synced', async () => {
    await call(api, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', { body: crd() });
    const second = await startTestApi({ store: api.store, bootstrap: false });
    try {
      expect(second.handler.crdInformerSynced()).toBe(true);
      expect((await call(second, 'GET', WIDGETS)).status).toBe(200);
    } finally {
      await second.close();
    }
  });

  it.each([
    ['name not plural.group', { metadata: { name: 'wrong.example.com' } }, 'metadata.name: Invalid value: "wrong.example.com": must be spec.names.plural+"."+spec.group'],
    ['group without a dot', { metadata: { name: 'widgets.example' }, spec: { ...crd().spec, group: 'example' } }, 'spec.group: Invalid value: "example": should be a domain with at least one dot'],
    ['two storage versions', { spec: { ...crd().spec, versions: [{ name: 'v1', served: true, storage: true, schema: ANY }, { name: 'v2', served: true, storage: true, schema: ANY }] } },
      'must have exactly one version marked as storage version'],
  ])('invalid CRD: %s', async (_name, override, message) => {
    const reply = await call(api, 'POST', '/apis/apiextensions.orch.io/v1/customresourcedefinitions', { body: { ...crd(), ...override } });
    expect(reply.status).toBe(422);
    expect(reply.body.message).toContain(message);
  });
});
