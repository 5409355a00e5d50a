/**
 * Custom resources through real kubectl against a real API server (SQLite): a CRD with a
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
import {generateCa, generateServingCertificate} from '../../src/daemons/apiserver/pki/certificates.js';
import {names} from '../../src/api/names.js';
import {type InProcessServer, kubectl, startApiServer} from '../helpers/apiserver.js';

/** The CRD group of the active name set (apiextensions.orch.io by default). */
const GROUP = names().groups.apiextensions;

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

const widgetsCrd = {
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
};

const widget = (name: string, spec: object) => ({apiVersion: 'example.com/v1', kind: 'Widget', metadata: {name}, spec});

/** Gadgets: v1 stores spec.size, v2 calls it spec.count; a webhook converts between them. */
const gadgetsCrd = (url: string, caBundle: string) => ({
  apiVersion: `${GROUP}/v1`,
  kind: 'CustomResourceDefinition',
  metadata: {name: 'gadgets.example.com'},
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: {plural: 'gadgets', kind: 'Gadget'},
    conversion: {strategy: 'Webhook', webhook: {conversionReviewVersions: ['v1'], clientConfig: {url, caBundle}}},
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

describe('custom resources with kubectl', () => {
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
    server = await startApiServer({engine: 'sqlite'});
    const ca = await generateCa({commonName: 'webhook-ca'});
    const serving = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
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
  });

  it('creates a CRD that becomes Established with its names accepted', async () => {
    expect(await k(['create', '-f', manifest('crd.yaml', widgetsCrd)])).toMatchObject({code: 0, stdout: `customresourcedefinition.${GROUP}/widgets.example.com created\n`});
    const waited = await k(['wait', '--for=condition=Established', '--timeout=10s', 'crd/widgets.example.com']);
    expect(waited).toMatchObject({code: 0});
    const crd = await getJson(['crd', 'widgets.example.com']);
    expect(crd.status.acceptedNames).toMatchObject({plural: 'widgets', kind: 'Widget', shortNames: ['wd'], categories: ['all']});
    expect(crd.status.conditions.map((c: {type: string; status: string}) => `${c.type}=${c.status}`)).toEqual(['NamesAccepted=True', 'Established=True']);
  });

  it('prunes unknown fields and fills defaults', async () => {
    const file = manifest('w1.yaml', widget('w1', {size: 3, bogus: 'dropped', tags: ['a']}));
    // kubectl's default --validate=strict refuses the unknown field, as upstream; warn mode prunes it with a warning.
    const strict = await eventually(['create', '-f', file]);
    expect(strict.stderr).toContain('Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.bogus"');
    const created = await eventually(['create', '-f', file, '--validate=warn']);
    expect(created).toMatchObject({code: 0, stdout: 'widget.example.com/w1 created\n', stderr: 'Warning: unknown field "spec.bogus"\n'});
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

  it('serves the deprecated version with a warning and the apiVersion rewritten (conversion None)', async () => {
    const r = await k(['get', 'widgets.v1beta1.example.com', 'w1', '-o', 'json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Warning: example.com/v1beta1 Widget is deprecated; use example.com/v1 Widget');
    expect(JSON.parse(r.stdout)).toMatchObject({apiVersion: 'example.com/v1beta1', spec: {size: 3}});
  });

  it('converts through a conversion webhook over HTTPS, and answers a clear error while it is down', async () => {
    const url = `https://127.0.0.1:${(webhook.address() as AddressInfo).port}/convert`;
    expect(await k(['create', '-f', manifest('gadgets.yaml', gadgetsCrd(url, caBundle))])).toMatchObject({code: 0});
    const g = {apiVersion: 'example.com/v2', kind: 'Gadget', metadata: {name: 'g1'}, spec: {count: 5}};
    const created = await eventually(['create', '-f', manifest('g1.yaml', g)]);
    expect(created).toMatchObject({code: 0, stdout: 'gadget.example.com/g1 created\n'});
    expect(webhookCalls).toBeGreaterThan(0);
    expect((await getJson(['gadgets.v1.example.com', 'g1'])).spec).toEqual({size: 5});
    expect((await getJson(['gadgets.v2.example.com', 'g1'])).spec).toEqual({count: 5});

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
