/**
 * Bad input: every malformed, oversized, over-nested, mistyped or misrouted request gets a 4xx Status
 * object (never a 500, a hang or a crash), and the server is unharmed afterwards.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {connect} from 'node:http2';
import {type InProcessServer, configMap, startApiServer} from '../helpers/apiserver.js';
import {names} from '../../src/api/names.js';

const CM = '/api/v1/namespaces/default/configmaps';
const MiB = 1024 * 1024;

const nestedArrays = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const nestedObjects = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
const withField = (field: string) => `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"x":${field}}`;

interface BadCase {
  name: string;
  method: string;
  path: string;
  body?: string | Buffer;
  contentType?: string;
  code: number;
  reason: string;
  message: string | RegExp;
}

const cases: BadCase[] = [
  {name: 'malformed JSON', method: 'POST', path: CM, body: '{"metadata": {"name": "x"', code: 400, reason: 'BadRequest', message: /^json: /},
  {name: 'a JSON array for an object', method: 'POST', path: CM, body: '[1,2]', code: 400, reason: 'BadRequest', message: "Object 'Kind' is missing in '[1,2]'"},
  {name: 'empty body', method: 'POST', path: CM, body: '', code: 400, reason: 'BadRequest', message: /.+/},
  {
    name: 'a Pod posted to configmaps',
    method: 'POST',
    path: CM,
    body: JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'p'}}),
    code: 400,
    reason: 'BadRequest',
    message: 'the kind in the data (Pod) does not match the expected kind (ConfigMap)',
  },
  {
    name: 'a wrong apiVersion',
    method: 'POST',
    path: CM,
    body: JSON.stringify({apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: {name: 'c'}}),
    code: 400,
    reason: 'BadRequest',
    message: 'the API version in the data (apps/v1) does not match the expected API version (v1)',
  },
  {
    name: 'a 4 MiB body',
    method: 'POST',
    path: CM,
    body: JSON.stringify(configMap('big', {x: 'a'.repeat(4 * MiB)})),
    code: 413,
    reason: 'RequestEntityTooLarge',
    message: 'Request entity too large: limit is 3145728',
  },
  {
    name: 'a ConfigMap holding more than 1 MiB',
    method: 'POST',
    path: CM,
    body: JSON.stringify(configMap('big', {x: 'a'.repeat(MiB), y: 'b'})),
    code: 422,
    reason: 'Invalid',
    message: 'ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes',
  },
  {
    name: 'a data key that is not a file name',
    method: 'POST',
    path: CM,
    body: JSON.stringify(configMap('badkey', {'a/b': 'x'})),
    code: 422,
    reason: 'Invalid',
    message: /^ConfigMap "badkey" is invalid: data\[a\/b\]: Invalid value: "a\/b": a valid config key must consist of alphanumeric characters/,
  },
  {
    name: 'a TLS Secret without its key',
    method: 'POST',
    path: '/api/v1/namespaces/default/secrets',
    body: JSON.stringify({apiVersion: 'v1', kind: 'Secret', metadata: {name: 'tls'}, type: names().secretTypes.tls, data: {'tls.crt': 'eA=='}}),
    code: 422,
    reason: 'Invalid',
    message: 'Secret "tls" is invalid: data[tls.key]: Required value',
  },
  {name: '2,000-deep arrays', method: 'POST', path: CM, body: withField(nestedArrays(2000)), code: 400, reason: 'BadRequest', message: 'json: exceeded max depth of 1000'},
  {name: '2,000-deep objects', method: 'POST', path: CM, body: withField(nestedObjects(2000)), code: 400, reason: 'BadRequest', message: 'json: exceeded max depth of 1000'},
  ...(['application/merge-patch+json', 'application/strategic-merge-patch+json', 'application/json-patch+json'] as const).map(
    (contentType): BadCase => ({
      name: `a 2,000-deep ${contentType} patch`,
      method: 'PATCH',
      path: `${CM}/existing`,
      body: contentType === 'application/json-patch+json' ? `[{"op":"add","path":"/data/x","value":${nestedObjects(2000)}}]` : withField(nestedObjects(2000)),
      contentType,
      code: 400,
      reason: 'BadRequest',
      message: 'json: exceeded max depth of 1000',
    }),
  ),
  {name: 'a malformed merge patch', method: 'PATCH', path: `${CM}/existing`, body: '{bad', contentType: 'application/merge-patch+json', code: 400, reason: 'BadRequest', message: /^error decoding patch: /},
  {
    name: 'an unknown JSON patch operation',
    method: 'PATCH',
    path: `${CM}/existing`,
    body: '[{"op":"explode","path":"/data/x"}]',
    contentType: 'application/json-patch+json',
    code: 422,
    reason: 'Invalid',
    message: 'the server rejected our request due to an error in our request',
  },
  {
    name: 'an unknown body media type',
    method: 'POST',
    path: CM,
    body: 'hello',
    contentType: 'text/plain',
    code: 415,
    reason: 'UnsupportedMediaType',
    message: 'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml',
  },
  ...['Bad_Name', 'UPPER', '-leading-dash', 'a'.repeat(254), 'dots..twice'].map(
    (name): BadCase => ({
      name: `the invalid name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 8)}...(${name.length})` : name)}`,
      method: 'POST',
      path: CM,
      body: JSON.stringify(configMap(name)),
      code: 422,
      reason: 'Invalid',
      message: new RegExp(`^ConfigMap "${name}" is invalid: metadata\\.name: Invalid value: "${name}": `),
    }),
  ),
  {name: 'a missing name', method: 'POST', path: CM, body: JSON.stringify({apiVersion: 'v1', kind: 'ConfigMap', metadata: {}}), code: 422, reason: 'Invalid', message: 'ConfigMap "" is invalid: metadata.name: Required value: name or generateName is required'},
  {name: 'an invalid name in the URL', method: 'GET', path: `${CM}/Bad_Name`, code: 404, reason: 'NotFound', message: 'configmaps "Bad_Name" not found'},
  {name: 'POST to a named object', method: 'POST', path: `${CM}/existing`, body: '{}', code: 405, reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource'},
  {name: 'PUT to a collection', method: 'PUT', path: CM, body: '{}', code: 405, reason: 'MethodNotAllowed', message: 'the server does not allow this method on the requested resource'},
  {name: 'an unknown resource', method: 'GET', path: '/api/v1/namespaces/default/frobnicators', code: 404, reason: 'NotFound', message: 'the server could not find the requested resource'},
  {name: 'an unknown subresource', method: 'GET', path: `${CM}/existing/frob`, code: 404, reason: 'NotFound', message: 'the server could not find the requested resource'},
  {name: 'a malformed label selector', method: 'GET', path: `${CM}?labelSelector=a%3D%3D%3Db!`, code: 400, reason: 'BadRequest', message: /.+/},
  {name: 'an invalid limit', method: 'GET', path: `${CM}?limit=-x`, code: 400, reason: 'BadRequest', message: /.+/},
];

describe('bad input to the API server', () => {
  let api: InProcessServer;

  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite'});
    expect((await api.client.post(CM, configMap('existing', {x: 'kept'}))).status).toBe(201);
  });
  afterAll(async () => {
    await api?.stop();
  });

  it.each(cases)('answers $name with $code $reason', async ({method, path, body, contentType, code, reason, message}) => {
    const r = await api.client.request(method, path, {body, contentType: contentType ?? (body !== undefined ? 'application/json' : undefined)});
    expect(r.status).toBe(code);
    expect(r.headers['content-type']).toBe('application/json');
    expect(r.body).toMatchObject({kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason});
    if (typeof message === 'string') expect(r.body.message).toBe(message);
    else expect(r.body.message).toMatch(message);
  });

  it('answers an unknown path outside the API with the plain 404 of upstream', async () => {
    const r = await api.client.get('/no/such/path');
    expect(r.status).toBe(404);
    expect(r.text).toBe('404 page not found\n');
  });

  it('answers an unknown HTTP method with 405 (HTTP/2) or a connection-level 400 (HTTP/1.1)', async () => {
    const {caPem, certPem, keyPem, server} = api.client.credentials;
    const session = connect(server, {ca: caPem, cert: certPem, key: keyPem});
    try {
      const {status, text} = await new Promise<{status: number; text: string}>((resolve, reject) => {
        const stream = session.request({':method': 'FROB', ':path': CM});
        let text = '';
        let status = 0;
        stream.setTimeout(5000, () => stream.close());
        stream.on('response', (headers) => (status = Number(headers[':status'])));
        stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
        stream.on('end', () => resolve({status, text}));
        stream.on('error', reject);
        stream.end();
      });
      expect(status).toBe(405);
      expect(JSON.parse(text)).toMatchObject({kind: 'Status', reason: 'MethodNotAllowed', code: 405});
    } finally {
      session.close();
    }
    // Node's HTTP/1.1 parser refuses unknown methods before any handler runs.
    const r = await api.client.request('FROB', CM).catch((error: Error) => ({status: 400, error}));
    expect(r.status).toBe(400);
  });

  it('keeps the data of an immutable ConfigMap and Secret', async () => {
    const SECRETS = '/api/v1/namespaces/default/secrets';
    expect((await api.client.post(CM, {...configMap('frozen', {a: '1'}), immutable: true})).status).toBe(201);
    expect((await api.client.post(SECRETS, {apiVersion: 'v1', kind: 'Secret', metadata: {name: 'frozen'}, immutable: true, data: {a: 'MQ=='}})).status).toBe(201);
    try {
      const cm = (await api.client.get(`${CM}/frozen`)).body;
      const changed = await api.client.put(`${CM}/frozen`, {...cm, data: {a: '2'}});
      expect(changed.status).toBe(422);
      expect(changed.body.message).toBe('ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set');
      const thawed = await api.client.put(`${CM}/frozen`, {...cm, immutable: false});
      expect(thawed.body.message).toBe('ConfigMap "frozen" is invalid: immutable: Forbidden: field is immutable when `immutable` is set');
      const secret = (await api.client.get(`${SECRETS}/frozen`)).body;
      const retyped = await api.client.put(`${SECRETS}/frozen`, {...secret, type: names().secretTypes.basicAuth, data: {username: 'eA=='}});
      expect(retyped.status).toBe(422);
      expect(retyped.body.message).toMatch(/^Secret "frozen" is invalid: \[type: Invalid value: "orch.io\/basic-auth": field is immutable, data: Forbidden: field is immutable when `immutable` is set/);
      expect((await api.client.get(`${CM}/frozen`)).body.data).toEqual({a: '1'});
      // The labels of an immutable object may still change, as upstream allows.
      expect((await api.client.put(`${CM}/frozen`, {...cm, metadata: {...cm.metadata, labels: {x: 'y'}}})).status).toBe(200);
    } finally {
      await api.client.delete(`${CM}/frozen`);
      await api.client.delete(`${SECRETS}/frozen`);
    }
  });

  it('is unharmed afterwards: ready, the object intact, new writes accepted', async () => {
    const ready = await api.client.get('/readyz');
    expect({status: ready.status, text: ready.text}).toEqual({status: 200, text: 'ok'});
    expect((await api.client.get(`${CM}/existing`)).body.data).toEqual({x: 'kept'});
    expect((await api.client.post(CM, configMap('after-bad-input'))).status).toBe(201);
    const list = await api.client.get(CM);
    expect(list.body.items.map((i: {metadata: {name: string}}) => i.metadata.name).sort()).toEqual(['after-bad-input', 'existing']);
  });
});
