/**
 * Custom resources through real kubectl against a real API server (SQLite), run by
 * crd-kubectl.test.ts (orch's names) and crd-kubectl-upstream-names.test.ts (upstream's): a CRD with a
 * structural schema, a CEL rule, defaults, printer columns, status and scale subresources,
 * short names, a category, a selectable field and a deprecated second version (conversion
 * None); a CRD converting through a real HTTPS conversion webhook on loopback, which then goes
 * down; and CRDs refused for an invalid CEL rule, a too expensive rule and a non-structural schema.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {createServer, type Server} from 'node:https';
import type {AddressInfo} from 'node:net';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {stringify} from 'yaml';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';
import {names, selectNames, type NameSetId} from '../../src/api/names.js';
import {type InProcessServer, kubectl, kubectlStream, startApiServer} from '../helpers/apiserver.js';

/** The CRD group of the active name set (`apiextensions.orch.io`, or `apiextensions.k8s.io` with upstream's names). */
let GROUP = '';

const widgetSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      required: ['size'],
      'x-kubernetes-validations': [
        {rule: "self.size <= 5 || self.color == 'blue'", message: 'big widgets must be blue'},
        {rule: 'self.size >= oldSelf.size', message: 'a widget may not shrink'},
      ],
      properties: {
        size: {type: 'integer', minimum: 1, maximum: 10},
        color: {type: 'string', enum: ['red', 'blue'], default: 'red'},
        replicas: {type: 'integer', default: 1},
        tags: {type: 'array', items: {type: 'string'}, 'x-kubernetes-list-type': 'set'},
      },
    },
    status: {type: 'object', properties: {replicas: {type: 'integer'}, selector: {type: 'string'}}},
  },
};

const columns = [
  {name: 'Size', type: 'integer', jsonPath: '.spec.size'},
  {name: 'Color', type: 'string', jsonPath: '.spec.color'},
  {name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas', priority: 1},
  {name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp'},
];

const widgetsCrd = () => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'CustomResourceDefinition',
  metadata: {name: 'widgets.example.com'},
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: {plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'], categories: ['all']},
    versions: [
      {
        name: 'v1', served: true, storage: true, schema: {openAPIV3Schema: widgetSchema},
        subresources: {status: {}, scale: {specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector'}},
        additionalPrinterColumns: columns,
        selectableFields: [{jsonPath: '.spec.color'}],
      },
      {name: 'v1beta1', served: true, storage: false, deprecated: true, schema: {openAPIV3Schema: widgetSchema}, additionalPrinterColumns: columns},
    ],
  },
});

const widget = (name: string, spec: object) => ({apiVersion: 'example.com/v1', kind: 'Widget', metadata: {name}, spec});

/** Gadgets: v1 stores spec.size, v2 calls it spec.count; a webhook converts between them. */
const gadgetsCrd = (clientConfig: object, plural = 'gadgets', kind = 'Gadget') => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'CustomResourceDefinition',
  metadata: {name: `${plural}.example.com`},
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: {plural, kind},
    conversion: {strategy: 'Webhook', webhook: {conversionReviewVersions: ['v1'], clientConfig}},
    versions: [
      {name: 'v1', served: true, storage: true, schema: {openAPIV3Schema: {type: 'object', properties: {spec: {type: 'object', properties: {size: {type: 'integer'}}}}}}},
      {name: 'v2', served: true, storage: false, schema: {openAPIV3Schema: {type: 'object', properties: {spec: {type: 'object', properties: {count: {type: 'integer'}}}}}}},
    ],
  },
});

/** The conversion webhook: renames spec.size <-> spec.count. */
function convert(object: {apiVersion: string; spec?: Record<string, unknown>}, desired: string): object {
  const spec = {...(object.spec ?? {})};
  if (desired.endsWith('/v2') && 'size' in spec) {
    spec.count = spec.size;
    delete spec.size;
  } else if (desired.endsWith('/v1') && 'count' in spec) {
    spec.size = spec.count;
    delete spec.count;
  }
  return {...object, apiVersion: desired, spec};
}

/** The suite against one server with one name set (each name set has its own test file, so its own server and worker). */
export function customResourceSuite(nameSet: NameSetId): void {
  describe(`custom resources with kubectl (${nameSet} names)`, () => {
    let server: InProcessServer;
    let dir: string;
    let webhook: Server;
    let webhookCalls = 0;
    let caBundle: string;
    const k = (args: string[]) => kubectl(server.orchconfigPath, args);
    const manifest = (name: string, ...objects: object[]) => {
      const path = join(dir, name);
      writeFileSync(path, objects.map((o) => stringify(o)).join('---\n'));
      return path;
    };
    const getJson = async (args: string[]) => {
      const r = await k(['get', ...args, '-o', 'json']);
      expect(r.stderr).toBe('');
      return JSON.parse(r.stdout);
    };
    /** kubectl re-reads discovery on a miss; a brand-new resource can take a moment to appear. */
    const eventually = async (args: string[]) => {
      let r = await k(args);
      for (let i = 0; r.code !== 0 && /doesn't have a resource type|the server could not find/.test(r.stderr) && i < 20; i++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        r = await k(args);
      }
      return r;
    };

    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'orch-crd-'));
      selectNames(nameSet);
      GROUP = names().groups.apiextensions;
      server = await startApiServer({engine: 'sqlite'});
      const ca = await generateCa({commonName: 'webhook-ca'});
      const serving = await generateServingCertificate(ca, {hosts: ['localhost', 'sprocket-webhook.default.svc'], ips: ['127.0.0.1']});
      caBundle = Buffer.from(ca.certPem).toString('base64');
      webhook = createServer({cert: serving.certPem, key: serving.keyPem}, (req, res) => {
        let body = '';
        req.on('data', (c: Buffer) => (body += c.toString()));
        req.on('end', () => {
          webhookCalls++;
          const review = JSON.parse(body);
          const {uid, desiredAPIVersion, objects} = review.request;
          res.writeHead(200, {'Content-Type': 'application/json'});
          res.end(JSON.stringify({
            apiVersion: review.apiVersion, kind: 'ConversionReview',
            response: {uid, result: {status: 'Success'}, convertedObjects: objects.map((o: never) => convert(o, desiredAPIVersion))},
          }));
        });
      });
      await new Promise<void>((resolve) => webhook.listen(0, '127.0.0.1', resolve));
    });

    afterAll(async () => {
      webhook?.close();
      await server?.stop();
      rmSync(dir, {recursive: true, force: true});
      selectNames('orch');
    });

    it('creates a CRD that becomes Established with its names accepted', async () => {
      expect(await k(['create', '-f', manifest('crd.yaml', widgetsCrd())])).toMatchObject({code: 0, stdout: `customresourcedefinition.${GROUP}/widgets.example.com created\n`});
      const waited = await k(['wait', '--for=condition=Established', '--timeout=10s', 'crd/widgets.example.com']);
      expect(waited).toMatchObject({code: 0});
      const crd = await getJson(['crd', 'widgets.example.com']);
      expect(crd.status.acceptedNames).toMatchObject({plural: 'widgets', kind: 'Widget', shortNames: ['wd'], categories: ['all']});
      expect(crd.status.conditions.map((c: {type: string; status: string}) => `${c.type}=${c.status}`)).toEqual(['NamesAccepted=True', 'Established=True']);
    });

    it('refuses unknown fields under strict validation, and prunes them otherwise, filling defaults', async () => {
      const file = manifest('w1.yaml', widget('w1', {size: 3, bogus: 'dropped', tags: ['a']}));
      const strict = await eventually(['create', '-f', file]);
      expect(strict.code).toBe(1);
      expect(strict.stderr).toContain('Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"');
      const created = await k(['create', '-f', file, '--validate=false']);
      expect(created).toMatchObject({code: 0, stdout: 'widget.example.com/w1 created\n'});
      expect((await getJson(['widget', 'w1'])).spec).toEqual({size: 3, color: 'red', replicas: 1, tags: ['a']});
    });

    it('refuses a CEL rule violation with the rule message, and a schema violation naming the field', async () => {
      const big = await k(['create', '-f', manifest('big.yaml', widget('big', {size: 7}))]);
      expect(big.code).toBe(1);
      expect(big.stderr).toContain('The Widget "big" is invalid: spec: Invalid value: "object": big widgets must be blue');
      const huge = await k(['create', '-f', manifest('huge.yaml', widget('huge', {size: 11, color: 'blue'}))]);
      expect(huge.code).toBe(1);
      expect(huge.stderr).toContain('spec.size: Invalid value: 11: spec.size in body should be less than or equal to 10');
      const typed = await k(['create', '-f', manifest('typed.yaml', widget('typed', {size: 'three'}))]);
      expect(typed.stderr).toContain('spec.size: Invalid value: "string": spec.size in body must be of type integer: "string"');
      // The transition rule compares with the stored object.
      const shrink = await k(['patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"size":2}}']);
      expect(shrink.code).toBe(1);
      expect(shrink.stderr).toContain('a widget may not shrink');
      expect((await k(['get', 'widgets', '-o', 'name'])).stdout).toBe('widget.example.com/w1\n');
      expect((await getJson(['widget', 'w1'])).spec.size).toBe(3);
    });

    it('prints the printer columns, wide ones with -o wide, by short name and in category all', async () => {
      expect(await k(['create', '-f', manifest('w2.yaml', widget('w2', {size: 8, color: 'blue'}))])).toMatchObject({code: 0});
      const table = await k(['get', 'wd']);
      expect(table.code).toBe(0);
      const lines = table.stdout.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^NAME\s+SIZE\s+COLOR\s+AGE$/);
      expect(lines[1]).toMatch(/^w1\s+3\s+red\s+\d+s$/);
      expect(lines[2]).toMatch(/^w2\s+8\s+blue\s+\d+s$/);
      const wide = await k(['get', 'widgets', '-o', 'wide']);
      expect(wide.stdout.split('\n')[0]).toMatch(/^NAME\s+SIZE\s+COLOR\s+REPLICAS\s+AGE$/);
      const all = await k(['get', 'all', '-o', 'name', `--cache-dir=${join(dir, 'cache')}`]);
      expect(all.stdout).toContain('widget.example.com/w1');
    });

    it('selects by a selectable field and refuses other fields', async () => {
      expect((await k(['get', 'widgets', '--field-selector', 'spec.color=blue', '-o', 'name'])).stdout).toBe('widget.example.com/w2\n');
      const bad = await k(['get', 'widgets', '--field-selector', 'spec.size=3']);
      expect(bad.stderr).toContain('field label not supported: spec.size');
    });

    it('scales a custom resource through its scale subresource', async () => {
      const scaled = await k(['scale', 'widget', 'w1', '--replicas=4']);
      expect(scaled).toMatchObject({code: 0, stdout: 'widget.example.com/w1 scaled\n'});
      expect((await getJson(['widget', 'w1'])).spec.replicas).toBe(4);
      const scale = JSON.parse((await k(['get', '--raw', '/apis/example.com/v1/namespaces/default/widgets/w1/scale'])).stdout);
      expect(scale).toMatchObject({kind: 'Scale', apiVersion: 'autoscaling/v1', spec: {replicas: 4}, status: {replicas: 0}});
    });

    it('validates and prunes status writes through the status subresource, which scale reads', async () => {
      const bad = await k(['patch', 'widget', 'w1', '--subresource=status', '--type=merge', '-p', '{"status":{"replicas":"two"}}']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('status.replicas: Invalid value: "string": status.replicas in body must be of type integer: "string"');
      const good = await k(['patch', 'widget', 'w1', '--subresource=status', '--type=merge', '-p', '{"status":{"replicas":2,"selector":"app=w","junk":1}}']);
      expect(good.code).toBe(0);
      const w1 = await getJson(['widget', 'w1']);
      expect(w1.status).toEqual({replicas: 2, selector: 'app=w'});
      const scale = JSON.parse((await k(['get', '--raw', '/apis/example.com/v1/namespaces/default/widgets/w1/scale'])).stdout);
      expect(scale.status).toEqual({replicas: 2, selector: 'app=w'});
      // A main-resource write cannot change the status.
      expect(await k(['patch', 'widget', 'w1', '--type=merge', '-p', '{"status":{"replicas":9}}'])).toMatchObject({code: 0});
      expect((await getJson(['widget', 'w1'])).status.replicas).toBe(2);
    });

    it('applies a custom resource server-side, pruned and defaulted like any write', async () => {
      const r = await k(['apply', '--server-side', '-f', manifest('w3.yaml', widget('w3', {size: 2}))]);
      expect(r).toMatchObject({code: 0, stdout: 'widget.example.com/w3 serverside-applied\n'});
      const w3 = await getJson(['widget', 'w3', '--show-managed-fields']);
      expect(w3.spec).toEqual({size: 2, color: 'red', replicas: 1});
      expect(w3.metadata.managedFields.map((m: {manager: string; operation: string}) => `${m.manager}/${m.operation}`)).toEqual(['kubectl/Apply']);
    });

    it('applies a custom resource client-side, twice', async () => {
      expect(await k(['apply', '-f', manifest('w4.yaml', widget('w4', {size: 2}))])).toMatchObject({code: 0, stdout: 'widget.example.com/w4 created\n'});
      const again = await k(['apply', '-f', manifest('w4.yaml', widget('w4', {size: 4, tags: ['x']}))]);
      expect(again.stderr).toBe('');
      expect(again).toMatchObject({code: 0, stdout: 'widget.example.com/w4 configured\n'});
      expect((await getJson(['widget', 'w4'])).spec).toEqual({size: 4, color: 'red', replicas: 1, tags: ['x']});
      // kubectl diff (a server-side dry run) shows the change.
      const diff = await k(['diff', '-f', manifest('w4b.yaml', widget('w4', {size: 5, tags: ['x']}))]);
      expect(diff.code).toBe(1);
      expect(diff.stdout).toMatch(/^-\s+size: 4$/m);
      expect(diff.stdout).toMatch(/^\+\s+size: 5$/m);
    });

    it('defaults stored objects on read when the CRD gains a default', async () => {
      const patch = [{op: 'add', path: '/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/shape', value: {type: 'string', default: 'round'}}];
      expect(await k(['patch', 'crd', 'widgets.example.com', '--type=json', '-p', JSON.stringify(patch)])).toMatchObject({code: 0});
      let shape = '';
      for (let i = 0; i < 40 && shape !== 'round'; i++) {
        shape = (await k(['get', 'widget', 'w2', '-o', 'jsonpath={.spec.shape}'])).stdout;
        if (shape !== 'round') await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(shape).toBe('round');
    });

    it('ratchets validation: an update may keep a value a tightened schema refuses, not change it', async () => {
      const patch = [{op: 'replace', path: '/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/size/maximum', value: 5}];
      expect(await k(['patch', 'crd', 'widgets.example.com', '--type=json', '-p', JSON.stringify(patch)])).toMatchObject({code: 0});
      let labeled = await k(['label', 'widget', 'w2', 'tier=gold']);
      for (let i = 0; labeled.code !== 0 && i < 20; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        labeled = await k(['label', 'widget', 'w2', 'tier=gold', '--overwrite']);
      }
      expect(labeled.code).toBe(0);
      const grown = await k(['patch', 'widget', 'w2', '--type=merge', '-p', '{"spec":{"size":9}}']);
      expect(grown.code).toBe(1);
      expect(grown.stderr).toContain('spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5');
    });

    it('refuses CRD updates that change the group or scope', async () => {
      const r = await k(['patch', 'crd', 'widgets.example.com', '--type=merge', '-p', '{"spec":{"scope":"Cluster"}}']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('spec.scope: Invalid value: "Cluster": field is immutable');
    });

    it('refuses names already taken in the group: NamesAccepted False, not served', async () => {
      const gizmos = {
        apiVersion: `${GROUP}/v1`, kind: 'CustomResourceDefinition', metadata: {name: 'gizmos.example.com'},
        spec: {
          group: 'example.com', scope: 'Namespaced', names: {plural: 'gizmos', kind: 'Gizmo', shortNames: ['wd']},
          versions: [{name: 'v1', served: true, storage: true, schema: {openAPIV3Schema: {type: 'object'}}}],
        },
      };
      expect(await k(['create', '-f', manifest('gizmos.yaml', gizmos)])).toMatchObject({code: 0});
      const crd = await getJson(['crd', 'gizmos.example.com']);
      expect(crd.status.conditions).toEqual([
        expect.objectContaining({type: 'NamesAccepted', status: 'False', reason: 'NameConflict', message: '"wd" is already in use'}),
        expect.objectContaining({type: 'Established', status: 'False', reason: 'NotAccepted'}),
      ]);
      const get = await k(['get', 'gizmos']);
      expect(get.code).toBe(1);
      expect(get.stderr).toContain('the server doesn\'t have a resource type "gizmos"');
      // Once the holder of "wd" goes, the names are accepted and gizmos are served.
      const holder = {...widgetsCrd(), metadata: {name: 'holders.example.com'}, spec: {...widgetsCrd().spec, names: {plural: 'holders', kind: 'Holder', shortNames: ['hd']}}};
      expect(await k(['create', '-f', manifest('holders.yaml', holder)])).toMatchObject({code: 0});
      const taken = {...gizmos, metadata: {name: 'gadgetries.example.com'}, spec: {...gizmos.spec, names: {plural: 'gadgetries', kind: 'Gadgetry', shortNames: ['hd']}}};
      expect(await k(['create', '-f', manifest('gadgetries.yaml', taken)])).toMatchObject({code: 0});
      expect((await getJson(['crd', 'gadgetries.example.com'])).status.conditions[0]).toMatchObject({status: 'False', message: '"hd" is already in use'});
      expect(await k(['delete', 'crd', 'holders.example.com'])).toMatchObject({code: 0});
      const freed = (await getJson(['crd', 'gadgetries.example.com'])).status;
      expect(freed.conditions.map((c: {type: string; status: string}) => `${c.type}=${c.status}`)).toEqual(['NamesAccepted=True', 'Established=True']);
      expect(freed.acceptedNames).toMatchObject({plural: 'gadgetries', shortNames: ['hd']});
      expect((await eventually(['get', 'gadgetries'])).code).toBe(0);
    });

    it('explains a custom resource from its schema', async () => {
      const r = await k(['explain', 'widgets.spec']);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/KIND:\s+Widget/);
      expect(r.stdout).toMatch(/VERSION:\s+v1/);
      expect(r.stdout).toMatch(/size\s+<integer> -required-/);
      expect(r.stdout).toMatch(/color\s+<string>/);
      expect(r.stdout).toContain('enum: red, blue');
      // /openapi/v2 carries it in Swagger 2.0 form (no CEL rules, nullable, anyOf...).
      const v2 = JSON.parse((await k(['get', '--raw', '/openapi/v2'])).stdout);
      const definition = v2.definitions['com.example.v1.Widget'];
      expect(definition['x-kubernetes-group-version-kind']).toEqual([{group: 'example.com', kind: 'Widget', version: 'v1'}]);
      expect(definition.properties.spec.properties.size).toEqual({type: 'integer', minimum: 1, maximum: 5});
      expect(definition.properties.spec['x-kubernetes-validations']).toBeUndefined();
    });

    it('serves the deprecated version with a warning and the apiVersion rewritten (conversion None)', async () => {
      const r = await k(['get', 'widgets.v1beta1.example.com', 'w1', '-o', 'json']);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain('Warning: example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget');
      expect(JSON.parse(r.stdout)).toMatchObject({apiVersion: 'example.com/v1beta1', spec: {size: 3}});
    });

    it('converts through a conversion webhook named by a Service, at one of its endpoints', async () => {
      const port = (webhook.address() as AddressInfo).port;
      const service = {apiVersion: 'v1', kind: 'Service', metadata: {name: 'sprocket-webhook'}, spec: {ports: [{name: 'https', port: 443, targetPort: port}]}};
      const endpoints = {apiVersion: 'v1', kind: 'Endpoints', metadata: {name: 'sprocket-webhook'}, subsets: [{addresses: [{ip: '127.0.0.1'}], ports: [{name: 'https', port}]}]};
      const crd = gadgetsCrd({service: {namespace: 'default', name: 'sprocket-webhook', path: '/convert'}, caBundle}, 'sprockets', 'Sprocket');
      expect(await k(['create', '-f', manifest('sprockets.yaml', service, endpoints, crd)])).toMatchObject({code: 0});
      const s1 = {apiVersion: 'example.com/v2', kind: 'Sprocket', metadata: {name: 's1'}, spec: {count: 2}};
      const made = await eventually(['create', '-f', manifest('s1.yaml', s1)]);
      expect(made.stderr).toBe('');
      expect(made).toMatchObject({code: 0, stdout: 'sprocket.example.com/s1 created\n'});
      expect((await getJson(['sprockets.v1.example.com', 's1'])).spec).toEqual({size: 2});
      // Without endpoints, the error names the service.
      expect(await k(['delete', 'endpoints', 'sprocket-webhook'])).toMatchObject({code: 0});
      const none = await k(['get', 'sprockets.v2.example.com', 's1']);
      expect(none.stderr).toContain('conversion webhook for example.com/v1, Kind=Sprocket failed: Post "https://sprocket-webhook.default.svc:443/convert?timeout=30s": no endpoints available for service "sprocket-webhook"');
    });

    it('converts through a conversion webhook over HTTPS, and answers a clear error while it is down', async () => {
      const url = `https://127.0.0.1:${(webhook.address() as AddressInfo).port}/convert`;
      expect(await k(['create', '-f', manifest('gadgets.yaml', gadgetsCrd({url, caBundle}))])).toMatchObject({code: 0});
      const g = {apiVersion: 'example.com/v2', kind: 'Gadget', metadata: {name: 'g1'}, spec: {count: 5}};
      const created = await eventually(['create', '-f', manifest('g1.yaml', g)]);
      expect(created).toMatchObject({code: 0, stdout: 'gadget.example.com/g1 created\n'});
      expect(webhookCalls).toBeGreaterThan(0);
      expect((await getJson(['gadgets.v1.example.com', 'g1'])).spec).toEqual({size: 5});
      expect((await getJson(['gadgets.v2.example.com', 'g1'])).spec).toEqual({count: 5});
      // A watch in v2 sees each change converted.
      const watch = kubectlStream(server.orchconfigPath, ['get', 'gadgets.v2.example.com', '-w', '-o', 'jsonpath={.spec.count}{"\\n"}']);
      try {
        await watch.waitFor(/^5$/m);
        expect(await k(['patch', 'gadgets.v1.example.com', 'g1', '--type=merge', '-p', '{"spec":{"size":6}}'])).toMatchObject({code: 0});
        await watch.waitFor(/^6$/m);
      } finally {
        await watch.stop();
      }

      await new Promise((resolve) => webhook.close(resolve));
      const down = await k(['get', 'gadgets.v2.example.com', 'g1']);
      expect(down.code).toBe(1);
      expect(down.stderr).toContain(`conversion webhook for example.com/v1, Kind=Gadget failed: Post "${url}?timeout=30s": dial tcp 127.0.0.1:`);
      expect(down.stderr).toContain('connection refused');
      const write = await k(['create', '-f', manifest('g2.yaml', {...g, metadata: {name: 'g2'}})]);
      expect(write.code).toBe(1);
      expect(write.stderr).toContain('conversion webhook for example.com/v2, Kind=Gadget failed');
      // The store is unharmed: the stored version still reads, and nothing was written.
      expect((await k(['get', 'gadgets.v1.example.com', '-o', 'name'])).stdout).toBe('gadget.example.com/g1\n');
    });

    it.each([
      ['an invalid CEL rule', {type: 'object', properties: {spec: {type: 'object', properties: {a: {type: 'string'}}, 'x-kubernetes-validations': [{rule: 'self.nosuch == 1'}]}}},
        /spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: "self\.nosuch == 1": compilation failed: ERROR: <input>:1:\d+: .*nosuch/],
      ['a rule over the cost budget', {type: 'object', properties: {spec: {type: 'object', properties: {l: {type: 'array', items: {type: 'string'}}},
        'x-kubernetes-validations': [{rule: 'self.l.all(a, self.l.all(b, a == b || !a.contains(b)))'}]}}},
        /x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x \(try simplifying the rule/],
      ['a non-structural schema', {type: 'object', properties: {spec: {properties: {a: {type: 'string'}}}}},
        /spec\.versions\[0\]\.schema\.openAPIV3Schema\.properties\[spec\]\.type: Required value: must not be empty for specified object fields/],
    ])('refuses a CRD with %s', async (_name, schema, message) => {
      const crd = {
        apiVersion: `${GROUP}/v1`, kind: 'CustomResourceDefinition', metadata: {name: 'bads.example.com'},
        spec: {group: 'example.com', scope: 'Namespaced', names: {plural: 'bads', kind: 'Bad'}, versions: [{name: 'v1', served: true, storage: true, schema: {openAPIV3Schema: schema}}]},
      };
      const r = await k(['create', '-f', manifest('bad.yaml', crd)]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('The CustomResourceDefinition "bads.example.com" is invalid');
      expect(r.stderr).toMatch(message);
      expect((await k(['get', 'crd', 'bads.example.com'])).code).toBe(1);
    });
  });
}
