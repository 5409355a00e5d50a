/**
 * The built-in schemas through real kubectl against `orch apiserver` (the CLI, SQLite): `kubectl
 * explain`, server-side field validation (`--validate=strict|warn|false`), 422 causes, duplicate
 * fields, kubectl's client-side validation from the /openapi/v2 protobuf, the /openapi/v3 index and
 * its hash caching, and the upstream name set (`--names kubernetes`).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {stringify} from 'yaml';
import {kubectl, startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';

const deployment = (name: string, extra: {spec?: object; container?: object} = {}) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {name},
  spec: {
    selector: {matchLabels: {app: name}},
    template: {metadata: {labels: {app: name}}, spec: {containers: [{name: 'app', image: 'nginx:1.27', ...extra.container}]}},
    ...extra.spec,
  },
});

describe('schemas against orch apiserver', () => {
  let server: ServerProcess;
  let dir: string;
  const k = (args: string[]) => kubectl(server.orchconfigPath, args);
  const manifest = (name: string, ...objects: object[]) => {
    const path = join(dir, name);
    writeFileSync(path, objects.map((o) => stringify(o)).join('---\n'));
    return path;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-schema-'));
    server = await startApiServerProcess({engine: 'sqlite'});
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, {recursive: true, force: true});
  });

  it('kubectl explain prints descriptions and fields', async () => {
    const containers = await k(['explain', 'pods.spec.containers']);
    expect(containers).toMatchObject({code: 0, stderr: ''});
    expect(containers.stdout).toContain('FIELD: containers <[]Container>');
    expect(containers.stdout).toContain('List of containers belonging to the pod.');
    expect(containers.stdout).toMatch(/^ {2}image\t<string>$/m);
    expect(containers.stdout).toMatch(/^ {2}resizePolicy\t<\[\]ContainerResizePolicy>$/m);

    const spec = await k(['explain', 'deployment.spec']);
    expect(spec).toMatchObject({code: 0, stderr: ''});
    expect(spec.stdout).toContain('GROUP:      apps');
    expect(spec.stdout).toMatch(/^ {2}template\t<PodTemplateSpec> -required-$/m);
    expect(spec.stdout).toMatch(/^ {2}replicas\t<integer>$/m);
  });

  it('--validate=strict rejects an unknown field with upstream text; the store keeps nothing', async () => {
    const file = manifest('strict.yaml', deployment('strict', {spec: {foo: 1}, container: {bar: 2}}));
    const r = await k(['create', '-f', file, '--validate=strict']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`Error from server (BadRequest): error when creating "${file}": Deployment in version "v1" cannot be handled as a Deployment: `
      + 'strict decoding error: unknown field "spec.foo", unknown field "spec.template.spec.containers[0].bar"');
    expect((await k(['get', 'deployment', 'strict'])).code).not.toBe(0);
  });

  it('--validate=warn creates with one warning per unknown field and drops them', async () => {
    const file = manifest('warn.yaml', deployment('warn', {spec: {foo: 1}}));
    const r = await k(['create', '-f', file, '--validate=warn']);
    expect(r).toMatchObject({code: 0, stdout: 'deployment.apps/warn created\n'});
    expect(r.stderr).toBe('Warning: unknown field "spec.foo"\n');
    const got = await k(['get', 'deployment', 'warn', '-o', 'jsonpath={.spec}']);
    expect(JSON.parse(got.stdout).foo).toBeUndefined();
    // --validate=false: no warning at all.
    const quiet = await k(['create', '-f', manifest('quiet.yaml', deployment('quiet', {spec: {foo: 1}})), '--validate=false']);
    expect(quiet).toMatchObject({code: 0, stderr: ''});
  });

  it('a schema violation is a 422 naming the field', async () => {
    const broken = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'nameless'}, spec: {containers: [{image: 'nginx'}]}};
    const r = await k(['create', '-f', manifest('nameless.yaml', broken)]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('The Pod "nameless" is invalid: spec.containers[0].name: Required value');
    const raw = await server.client.post('/api/v1/namespaces/default/pods', broken);
    expect(raw.status).toBe(422);
    expect(raw.body).toMatchObject({reason: 'Invalid', details: {causes: [{reason: 'FieldValueRequired', field: 'spec.containers[0].name'}]}});
    // A value of the wrong type, in Go's decoder words.
    const typed = await k(['create', '-f', manifest('typed.yaml', deployment('typed', {spec: {replicas: 'three'}}))]);
    expect(typed.stderr).toContain('Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32');
  });

  it('reports duplicate fields: an error under Strict, warnings otherwise', async () => {
    const body = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"dup","name":"dup"},"data":{"a":"1","a":"2"}}';
    const strict = await server.client.post('/api/v1/namespaces/default/configmaps?fieldValidation=Strict', body, {contentType: 'application/json'});
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: duplicate field "metadata.name", duplicate field "data.a"');
    const warn = await server.client.post('/api/v1/namespaces/default/configmaps', body, {contentType: 'application/json'});
    expect(warn.status).toBe(201);
    expect(warn.headers.warning).toBe('299 - "duplicate field \\"metadata.name\\"", 299 - "duplicate field \\"data.a\\""');
    expect(warn.body.data).toEqual({a: '2'});
  });

  it('validates patches: an unknown field under Strict fails, kubectl patch warns by default', async () => {
    expect((await k(['create', 'configmap', 'patched', '--from-literal=a=b'])).code).toBe(0);
    const strict = await server.client.patch('/api/v1/namespaces/default/configmaps/patched?fieldValidation=Strict', {spec: {x: 1}}, 'application/merge-patch+json');
    expect(strict.status).toBe(400);
    expect(strict.body.message).toBe('strict decoding error: unknown field "spec"');
    const r = await k(['patch', 'configmap', 'patched', '--type=strategic', '-p', '{"data":{"c":"d"},"bogus":{"x":1}}']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('Warning: unknown field "bogus"\n');
  });

  it('kubectl validates a List on the client from the /openapi/v2 protobuf', async () => {
    const list = {apiVersion: 'v1', kind: 'List', items: [{apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'listed'}, data: {a: 'b'}, bogus: 1}]};
    const file = manifest('list.yaml', list);
    const r = await k(['apply', '-f', file, '--validate=strict']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`error: error validating "${file}": error validating data: ValidationError(ConfigMap): unknown field "bogus" in io.k8s.api.core.v1.ConfigMap`);
    const proto = await server.client.get('/openapi/v2', {headers: {accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf'}});
    expect(proto.status).toBe(200);
    expect(proto.headers['content-type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    // kubectl apply of an existing object computes its patch from the published schemas.
    const applied = manifest('applied.yaml', deployment('applied'));
    expect((await k(['apply', '-f', applied])).code).toBe(0);
    expect(await k(['apply', '-f', manifest('applied.yaml', deployment('applied', {container: {image: 'nginx:1.28'}}))])).toMatchObject({code: 0, stdout: 'deployment.apps/applied configured\n'});
  });

  it('publishes a CRD schema: kubectl explain and strict validation of its custom resources', async () => {
    const crd = {
      apiVersion: 'apiextensions.orch.io/v1', kind: 'CustomResourceDefinition', metadata: {name: 'gadgets.example.com'},
      spec: {
        group: 'example.com', scope: 'Namespaced', names: {plural: 'gadgets', singular: 'gadget', kind: 'Gadget'},
        versions: [{name: 'v1', served: true, storage: true, schema: {openAPIV3Schema: {type: 'object', properties: {
          spec: {type: 'object', description: 'What the gadget does.', properties: {size: {type: 'integer', description: 'How big it is.'}}},
        }}}}],
      },
    };
    expect((await k(['create', '-f', manifest('gadgets.yaml', crd)])).code).toBe(0);
    expect((await k(['wait', '--for=condition=Established', '--timeout=10s', 'crd/gadgets.example.com'])).code).toBe(0);
    let explained = await k(['explain', 'gadgets.spec']);
    for (let i = 0; explained.code !== 0 && i < 20; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      explained = await k(['explain', 'gadgets.spec']);
    }
    expect(explained).toMatchObject({code: 0, stderr: ''});
    expect(explained.stdout).toContain('What the gadget does.');
    expect(explained.stdout).toMatch(/^ {2}size\t<integer>$/m);
    const gadget = {apiVersion: 'example.com/v1', kind: 'Gadget', metadata: {name: 'g1'}, spec: {size: 1, colour: 'red'}};
    const r = await k(['create', '-f', manifest('g1.yaml', gadget)]);
    expect(r.stderr).toContain('Gadget in version "v1" cannot be handled as a Gadget: strict decoding error: unknown field "spec.colour"');
  });

  it('serves /openapi/v3 per group version with hashes clients cache by', async () => {
    const index = await server.client.get('/openapi/v3');
    expect(index.status).toBe(200);
    const url: string = index.body.paths['apis/apps/v1'].serverRelativeURL;
    expect(url).toMatch(/^\/openapi\/v3\/apis\/apps\/v1\?hash=[0-9A-F]{128}$/);
    const hash = url.split('hash=')[1];
    const doc = await server.client.get(url);
    expect(doc.status).toBe(200);
    expect(doc.headers['cache-control']).toBe('public, immutable');
    expect(doc.headers.etag).toBe(`"${hash}"`);
    expect(doc.body.components.schemas['io.k8s.api.apps.v1.Deployment']['x-kubernetes-group-version-kind']).toEqual([{group: 'apps', kind: 'Deployment', version: 'v1'}]);
    expect(doc.body.components.schemas['io.k8s.api.core.v1.PodSpec'].properties.containers).toMatchObject({'x-kubernetes-patch-merge-key': 'name', 'x-kubernetes-patch-strategy': 'merge'});
    const again = await server.client.get(url, {headers: {'if-none-match': `"${hash}"`}});
    expect(again.status).toBe(304);
    const stale = await server.client.get('/openapi/v3/apis/apps/v1?hash=0123');
    expect(stale.status).toBe(301);
    expect(stale.headers.location).toBe(url);
    const plain = await server.client.get('/openapi/v3/apis/apps/v1');
    expect(plain.status).toBe(200);
    // Without a hash: the server-wide default, as upstream's cache-control filter sets it.
    expect(plain.headers['cache-control']).toBe('no-cache, private');
    expect((await server.client.get('/openapi/v3/apis/nothing/v1')).status).toBe(404);
  });
});

describe('schemas with the upstream name set', () => {
  let server: ServerProcess;
  let dir: string;
  const k = (args: string[]) => kubectl(server.orchconfigPath, args);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-schema-k8s-'));
    server = await startApiServerProcess({engine: 'sqlite', args: ['--names', 'kubernetes']});
  });
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, {recursive: true, force: true});
  });

  it('explains and validates kinds in *.k8s.io groups', async () => {
    const explained = await k(['explain', 'roles.rules']);
    expect(explained).toMatchObject({code: 0, stderr: ''});
    expect(explained.stdout).toContain('GROUP:      rbac.authorization.k8s.io');
    expect(explained.stdout).toMatch(/^ {2}verbs\t<\[\]string> -required-$/m);
    const file = join(dir, 'role.yaml');
    writeFileSync(file, stringify({apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: {name: 'r'}, rules: [{verbs: ['get'], resources: ['pods'], apiGroups: [''], colour: 'red'}]}));
    const r = await k(['create', '-f', file]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('Role in version "v1" cannot be handled as a Role: strict decoding error: unknown field "rules[0].colour"');
  });
});
