/**
 * Protobuf bodies through the REST API over HTTP: each body kubectl sent for a generator command,
 * POSTed to the path kubectl used, creates the object; answers stay JSON. The RBAC bodies are left
 * out: kubectl posts them to rbac.authorization.k8s.io, which orch serves as rbac.orch.io.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { call, startTestApi, type TestApi } from '../helpers/memory-store.js';

const fixtureDir = join(process.cwd(), 'test/fixtures/protobuf');
interface Fixture { name: string; kubectl: string; path: string; contentType: string }
const fixtures = JSON.parse(readFileSync(join(fixtureDir, 'fixtures.json'), 'utf8')) as Fixture[];
// (Upstream's group names are served with --names kubernetes; this server has orch's.)
const served = fixtures.filter((f) => f.name !== 'token' && !/\.k8s\.io\//.test(f.path));
const body = (name: string) => readFileSync(join(fixtureDir, `${name}.bin`));
const expected = (name: string) => JSON.parse(readFileSync(join(fixtureDir, `${name}.json`), 'utf8'));
/** A protobuf body of a kind without a schema: kubectl's TokenRequest body relabelled as a StatefulSet. */
function unsupportedBody(): Buffer {
  const original = body('token');
  const from = Buffer.from('authentication.k8s.io/v1');
  const at = original.indexOf(from);
  const typeMeta = (apiVersion: string, kind: string) => {
    const a = Buffer.from(apiVersion);
    const k = Buffer.from(kind);
    return Buffer.concat([Buffer.from([0x0a, a.length]), a, Buffer.from([0x12, k.length]), k]);
  };
  // The envelope's first field is the TypeMeta message: {1: apiVersion, 2: kind}; rebuild it.
  const oldMeta = typeMeta('authentication.k8s.io/v1', 'TokenRequest');
  const start = at - 2;
  expect(original.subarray(start, start + oldMeta.length)).toEqual(oldMeta);
  const newMeta = typeMeta('apps/v1', 'StatefulSet');
  const rest = original.subarray(start + oldMeta.length);
  return Buffer.concat([original.subarray(0, start - 2), Buffer.from([0x0a, newMeta.length]), newMeta, rest]);
}

/** As kubectl sends it: protobuf body, protobuf preferred in Accept. */
async function send(api: TestApi, method: string, path: string, payload: Buffer) {
  const response = await fetch(api.url + path, {
    method,
    headers: { 'content-type': 'application/vnd.kubernetes.protobuf', accept: 'application/vnd.kubernetes.protobuf,application/json' },
    body: payload,
  });
  return { status: response.status, contentType: response.headers.get('content-type'), body: await response.json() as any };
}

let api: TestApi;
beforeEach(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  await api.close();
});

describe('kubectl generator bodies', () => {
  it.each(served.map((f) => [f.name, f.path]))('%s creates the object at %s', async (name, path) => {
    const want = expected(name);
    const created = await send(api, 'POST', `${path}?fieldManager=kubectl-create&fieldValidation=Strict`, body(name));
    expect(created.status).toBe(201);
    expect(created.contentType).toBe('application/json');
    const { metadata: wantMeta, status: _status, ...wantRest } = want;
    expect(created.body).toMatchObject({ ...wantRest, metadata: { name: wantMeta.name, ...(wantMeta.labels ? { labels: wantMeta.labels } : {}) } });
    expect(created.body.metadata.creationTimestamp).toBe('2024-01-02T03:04:05Z');

    const objectPath = `${path}/${wantMeta.name}`;
    const got = await call(api, 'GET', objectPath);
    expect(got.body).toEqual(created.body);
  });

  it('replaces an object with a protobuf PUT', async () => {
    await send(api, 'POST', '/api/v1/namespaces/default/configmaps', body('configmap'));
    const replaced = await send(api, 'PUT', '/api/v1/namespaces/default/configmaps/c', body('configmap'));
    expect(replaced.status).toBe(200);
    expect(replaced.body.binaryData).toEqual({ blob: 'AAEC/w==' });
  });

  it('answers 415 naming a kind it cannot decode', async () => {
    const reply = await send(api, 'POST', '/api/v1/namespaces/default/configmaps', unsupportedBody());
    expect(reply.status).toBe(415);
    expect(reply.body).toMatchObject({
      kind: 'Status', reason: 'UnsupportedMediaType',
      message: 'StatefulSet (apps/v1) cannot be sent as protobuf to this server; send it as JSON instead (kubectl create -f FILE, or -o json)',
    });
  });

  it('checks the decoded kind against the path like a JSON body', async () => {
    const reply = await send(api, 'POST', '/api/v1/namespaces/default/secrets', body('configmap'));
    expect(reply.status).toBe(400);
    expect(reply.body.message).toBe('the kind in the data (ConfigMap) does not match the expected kind (Secret)');
  });

  it('answers 400 for a corrupt body behind the protobuf prefix', async () => {
    const corrupt = body('namespace').subarray(0, 20);
    const reply = await send(api, 'POST', '/api/v1/namespaces', corrupt);
    expect(reply.status).toBe(400);
    expect(reply.body.message).toMatch(/^protobuf: /);
  });
});
