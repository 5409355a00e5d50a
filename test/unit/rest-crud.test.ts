/** The REST verbs over real HTTP: create, get, update, patch, delete, their errors and server-set metadata. */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { call, startTestApi, type TestApi } from '../helpers/memory-store.js';

let api: TestApi;
beforeEach(async () => {
  api = await startTestApi();
});
afterEach(async () => {
  await api.close();
});

const CM = '/api/v1/namespaces/default/configmaps';
const configMap = (name: string, data: Record<string, string> = { a: '1' }) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data });
const deployment = (name: string, replicas = 1) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx:1.25' }] } },
  },
});
const pod = (name: string, nodeName?: string) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { ...(nodeName ? { nodeName } : {}), containers: [{ name: 'c', image: 'busybox' }] },
});

describe('create', () => {
  it('sets server metadata and answers 201 with the stored object', async () => {
    const reply = await call(api, 'POST', CM, { body: configMap('c1'), headers: { 'user-agent': 'kubectl/v1.32.0 (linux/amd64)' } });
    expect(reply.status).toBe(201);
    const meta = reply.body.metadata;
    expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(meta.creationTimestamp).toBe('2024-01-02T03:04:05Z');
    expect(meta.resourceVersion).toMatch(/^\d+$/);
    expect(meta.namespace).toBe('default');
    expect(meta.generation).toBeUndefined();
    expect(meta.managedFields).toEqual([
      { manager: 'kubectl', operation: 'Update', apiVersion: 'v1', time: '2024-01-02T03:04:05Z', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { '.': {}, 'f:a': {} } } },
    ]);
    const got = await call(api, 'GET', `${CM}/c1`);
    expect(got.body).toEqual(reply.body);
  });

  it('starts generation at 1 for workloads and generates names', async () => {
    const reply = await call(api, 'POST', '/apis/apps/v1/namespaces/default/deployments?fieldManager=me', {
      body: { ...deployment('x'), metadata: { generateName: 'web-' } },
    });
    expect(reply.status).toBe(201);
    expect(reply.body.metadata.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(reply.body.metadata.generation).toBe(1);
    expect(reply.body.metadata.managedFields[0].manager).toBe('me');
    expect(reply.body.status).toBeUndefined();
  });

  it.each([
    ['duplicate name', async () => { await call(api, 'POST', CM, { body: configMap('dup') }); return call(api, 'POST', CM, { body: configMap('dup') }); },
      409, 'AlreadyExists', 'configmaps "dup" already exists'],
    ['bad name', () => call(api, 'POST', CM, { body: configMap('Bad_Name') }), 422, 'Invalid',
      'ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, \'-\' or \'.\', and must start and end with an alphanumeric character (e.g. \'example.com\', regex used for validation is \'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\')'],
    ['missing namespace', () => call(api, 'POST', '/api/v1/namespaces/nope/configmaps', { body: configMap('c') }), 404, 'NotFound', 'namespaces "nope" not found'],
    ['malformed JSON', () => call(api, 'POST', CM, { body: '{"kind":' }), 400, 'BadRequest', expect.stringContaining('json: ')],
    ['wrong kind', () => call(api, 'POST', CM, { body: { ...configMap('c'), kind: 'Secret' } }), 400, 'BadRequest',
      'the kind in the data (Secret) does not match the expected kind (ConfigMap)'],
    ['namespace mismatch', () => call(api, 'POST', CM, { body: { ...configMap('c'), metadata: { name: 'c', namespace: 'other' } } }), 400, 'BadRequest',
      'the namespace of the provided object does not match the namespace sent on the request'],
    ['protobuf body', () => call(api, 'POST', CM, { body: 'x', contentType: 'application/vnd.kubernetes.protobuf' }), 415, 'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json, application/yaml'],
    ['unacceptable Accept', () => call(api, 'GET', CM, { accept: 'application/vnd.kubernetes.protobuf' }), 406, 'NotAcceptable',
      'only the following media types are accepted: application/json, application/yaml'],
    ['POST to an object', () => call(api, 'POST', `${CM}/c`, { body: configMap('c') }), 405, 'MethodNotAllowed',
      'the server does not allow this method on the requested resource'],
    ['bad dryRun', () => call(api, 'POST', `${CM}?dryRun=Maybe`, { body: configMap('c') }), 422, 'Invalid',
      'CreateOptions.meta.orch.io "" is invalid: dryRun: Unsupported value: ["Maybe"]: supported values: "All"'],
  ])('%s', async (_name, send, code, reason, message) => {
    const reply = await (send as () => Promise<{ status: number; body: any }>)();
    expect(reply.status).toBe(code);
    expect(reply.body).toMatchObject({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', reason, code, message });
  });

  it('reports every validation problem as a cause', async () => {
    const reply = await call(api, 'POST', '/api/v1/namespaces/default/pods', {
      body: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c' }, { image: 'x' }] } },
    });
    expect(reply.status).toBe(422);
    expect(reply.body.message).toBe('Pod "p" is invalid: [spec.containers[0].image: Required value, spec.containers[1].name: Required value]');
    expect(reply.body.details).toEqual({
      name: 'p',
      kind: 'Pod',
      causes: [
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[0].image' },
        { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.containers[1].name' },
      ],
    });
  });

  it('stores a Secret\'s stringData in data (base64, its keys winning) on create and on patch, never as stringData', async () => {
    const SECRETS = '/api/v1/namespaces/default/secrets';
    const b64 = (t: string) => Buffer.from(t).toString('base64');
    const created = await call(api, 'POST', SECRETS, {
      body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'creds' }, data: { user: b64('old'), host: b64('db') }, stringData: { user: 'admin', password: 's3cret' } },
    });
    expect(created.status).toBe(201);
    const stored = (await call(api, 'GET', `${SECRETS}/creds`)).body;
    expect(stored.data).toEqual({ user: b64('admin'), host: b64('db'), password: b64('s3cret') });
    expect(stored.stringData).toBeUndefined();
    expect(stored.type).toBe('Opaque');
    const patched = await call(api, 'PATCH', `${SECRETS}/creds`, { body: { stringData: { password: 'rotated' } }, contentType: 'application/merge-patch+json' });
    expect(patched.status).toBe(200);
    expect(patched.body.data.password).toBe(b64('rotated'));
    expect(patched.body.stringData).toBeUndefined();
  });

  it('dry run validates and returns the object without storing it', async () => {
    const reply = await call(api, 'POST', `${CM}?dryRun=All`, { body: configMap('dry') });
    expect(reply.status).toBe(201);
    expect(reply.body.metadata.uid).toBeDefined();
    expect(reply.body.metadata.resourceVersion).toBeUndefined();
    expect((await call(api, 'GET', `${CM}/dry`)).status).toBe(404);
  });

  it('accepts YAML bodies', async () => {
    const reply = await call(api, 'POST', CM, { body: 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\ndata:\n  k: v\n', contentType: 'application/yaml' });
    expect(reply.status).toBe(201);
    expect(reply.body.data).toEqual({ k: 'v' });
  });

  it('refuses bodies over 3 MiB with 413', async () => {
    const reply = await call(api, 'POST', CM, { body: configMap('big', { a: 'x'.repeat(3 * 1024 * 1024) }) });
    expect(reply.status).toBe(413);
    expect(reply.body.message).toBe('Request entity too large: limit is 3145728');
  });
});

describe('get', () => {
  it('answers 404 with the upstream message and details', async () => {
    const reply = await call(api, 'GET', '/apis/apps/v1/namespaces/default/deployments/nope');
    expect(reply.status).toBe(404);
    expect(reply.body).toEqual({
      kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'deployments.apps "nope" not found', reason: 'NotFound',
      details: { name: 'nope', group: 'apps', kind: 'deployments' }, code: 404,
    });
  });

  it('answers a Table when kubectl asks for one', async () => {
    await call(api, 'POST', CM, { body: configMap('t1') });
    api.clock.advance(90_000);
    const reply = await call(api, 'GET', CM, { accept: 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json' });
    expect(reply.headers.get('content-type')).toBe('application/json;as=Table;v=v1;g=meta.k8s.io');
    expect(reply.body.kind).toBe('Table');
    expect(reply.body.apiVersion).toBe('meta.k8s.io/v1');
    expect(reply.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Data', 'Age']);
    expect(reply.body.rows[0].cells).toEqual(['t1', 1, '90s']);
    expect(reply.body.rows[0].object).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 't1' } });
  });

  it('unknown resources answer a Status 404, unknown groups a plain 404', async () => {
    const resource = await call(api, 'GET', '/api/v1/namespaces/default/gizmos');
    expect(resource.body).toMatchObject({ reason: 'NotFound', message: 'the server could not find the requested resource', details: {} });
    const group = await call(api, 'GET', '/apis/nothing.example.com/v1/things');
    expect(group.status).toBe(404);
    expect(group.text).toBe('404 page not found\n');
  });
});

describe('update', () => {
  it('replaces the object, keeps server fields and answers 409 for a stale resourceVersion', async () => {
    const created = (await call(api, 'POST', CM, { body: configMap('u') })).body;
    const updated = await call(api, 'PUT', `${CM}/u`, {
      body: { ...created, data: { a: '2' }, metadata: { ...created.metadata, uid: undefined, creationTimestamp: '1999-01-01T00:00:00Z' } },
    });
    expect(updated.status).toBe(200);
    expect(updated.body.data).toEqual({ a: '2' });
    expect(updated.body.metadata.uid).toBe(created.metadata.uid);
    expect(updated.body.metadata.creationTimestamp).toBe(created.metadata.creationTimestamp);
    expect(Number(updated.body.metadata.resourceVersion)).toBeGreaterThan(Number(created.metadata.resourceVersion));

    const stale = await call(api, 'PUT', `${CM}/u`, { body: { ...created, data: { a: '3' } } });
    expect(stale.status).toBe(409);
    expect(stale.body).toMatchObject({
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on configmaps "u": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('bumps generation only on spec changes and ignores status on the main resource', async () => {
    const created = (await call(api, 'POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('g') })).body;
    const path = '/apis/apps/v1/namespaces/default/deployments/g';
    const labelsOnly = await call(api, 'PUT', path, { body: { ...created, metadata: { ...created.metadata, labels: { x: 'y' } }, status: { replicas: 9 } } });
    expect(labelsOnly.body.metadata.generation).toBe(1);
    expect(labelsOnly.body.status).toBeUndefined();
    const specChange = await call(api, 'PUT', path, { body: { ...labelsOnly.body, spec: { ...labelsOnly.body.spec, replicas: 5 } } });
    expect(specChange.body.metadata.generation).toBe(2);

    const status = await call(api, 'PUT', `${path}/status`, { body: { ...specChange.body, spec: { ...specChange.body.spec, replicas: 1 }, status: { replicas: 5 } } });
    expect(status.status).toBe(200);
    expect(status.body.status).toEqual({ replicas: 5 });
    expect(status.body.spec.replicas).toBe(5);
    expect(status.body.metadata.generation).toBe(2);
    expect(status.body.metadata.managedFields.find((m: { subresource?: string }) => m.subresource === 'status')).toMatchObject({ fieldsV1: { 'f:status': { 'f:replicas': {} } } });
  });

  it('a write that changes nothing keeps the resourceVersion', async () => {
    const created = (await call(api, 'POST', CM, { body: configMap('same') })).body;
    const again = await call(api, 'PUT', `${CM}/same`, { body: created });
    expect(again.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
  });

  it('creates on update only for kinds that allow it', async () => {
    const lease = await call(api, 'PUT', '/apis/coordination.orch.io/v1/namespaces/default/leases/l1', {
      body: { apiVersion: 'coordination.orch.io/v1', kind: 'Lease', metadata: { name: 'l1' }, spec: { holderIdentity: 'a' } },
    });
    expect(lease.status).toBe(201);
    const cm = await call(api, 'PUT', `${CM}/missing`, { body: configMap('missing') });
    expect(cm.status).toBe(404);
  });

  it('rejects a body whose name differs from the URL', async () => {
    await call(api, 'POST', CM, { body: configMap('n1') });
    const reply = await call(api, 'PUT', `${CM}/n1`, { body: configMap('n2') });
    expect(reply.status).toBe(400);
    expect(reply.body.message).toBe('the name of the object (n2) does not match the name on the URL (n1)');
  });
});

describe('patch', () => {
  beforeEach(async () => {
    await call(api, 'POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('p') });
  });
  const path = '/apis/apps/v1/namespaces/default/deployments/p';

  it.each([
    ['application/strategic-merge-patch+json', { spec: { template: { spec: { containers: [{ name: 'side', image: 'envoy' }] } } } }, ['side', 'c']],
    ['application/merge-patch+json', { spec: { template: { spec: { containers: [{ name: 'only', image: 'x' }] } } } }, ['only']],
    ['application/json-patch+json', [{ op: 'add', path: '/spec/template/spec/containers/-', value: { name: 'j', image: 'x' } }], ['c', 'j']],
  ])('%s goes through the patch engine', async (contentType, patch, names) => {
    const reply = await call(api, 'PATCH', `${path}?fieldManager=kubectl-patch`, { body: patch, contentType });
    expect(reply.status).toBe(200);
    expect(reply.body.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual(names);
    expect(reply.body.metadata.generation).toBe(2);
    expect(reply.body.metadata.managedFields.map((m: { manager: string }) => m.manager)).toContain('kubectl-patch');
  });

  it.each([
    ['failing json patch', 'application/json-patch+json', [{ op: 'test', path: '/spec/replicas', value: 7 }], 422, 'Invalid',
      'the server rejected our request due to an error in our request'],
    ['not a json patch', 'application/json-patch+json', '{"op":"add"}', 400, 'BadRequest', expect.any(String)],
    ['server-side apply without fieldManager', 'application/apply-patch+yaml', 'spec: {}', 422, 'Invalid',
      expect.stringMatching(/^PatchOptions\.meta\.[a-z0-9.]+ "" is invalid: fieldManager: Required value: is required for apply patch$/)],
    ['unknown type', 'text/plain', '{}', 415, 'UnsupportedMediaType',
      'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json, application/apply-patch+yaml'],
    ['stale resourceVersion in the patch', 'application/merge-patch+json', { metadata: { resourceVersion: '1' } }, 409, 'Conflict',
      'Operation cannot be fulfilled on deployments.apps "p": the object has been modified; please apply your changes to the latest version and try again'],
    ['missing merge key', 'application/strategic-merge-patch+json', { spec: { template: { spec: { containers: [{ image: 'x' }] } } } }, 500, undefined,
      'map: map[image:x] does not contain declared merge key: name'],
  ])('%s', async (_name, contentType, patch, code, reason, message) => {
    const reply = await call(api, 'PATCH', path, { body: patch, contentType });
    expect(reply.status).toBe(code);
    expect(reply.body.reason).toBe(reason);
    expect(reply.body.message).toEqual(message);
  });

  it('json patch over 10000 operations -> 413', async () => {
    const ops = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/kind', value: 'Deployment' }));
    const reply = await call(api, 'PATCH', path, { body: ops, contentType: 'application/json-patch+json' });
    expect(reply.status).toBe(413);
    expect(reply.body.message).toBe('Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001');
  });

  it('dry-run patch returns the merged object and keeps the old resourceVersion', async () => {
    const before = (await call(api, 'GET', path)).body;
    const reply = await call(api, 'PATCH', `${path}?dryRun=All`, { body: { spec: { replicas: 7 } }, contentType: 'application/merge-patch+json' });
    expect(reply.body.spec.replicas).toBe(7);
    expect(reply.body.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect((await call(api, 'GET', path)).body.spec.replicas).toBe(1);
  });

  it('a no-op patch does not bump the resourceVersion', async () => {
    const before = (await call(api, 'GET', path)).body;
    const reply = await call(api, 'PATCH', path, { body: { spec: { replicas: 1 } }, contentType: 'application/merge-patch+json' });
    expect(reply.body.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
  });

  it('patching status changes only status', async () => {
    const reply = await call(api, 'PATCH', `${path}/status`, { body: { spec: { replicas: 9 }, status: { readyReplicas: 1 } }, contentType: 'application/merge-patch+json' });
    expect(reply.body.status).toEqual({ readyReplicas: 1 });
    expect(reply.body.spec.replicas).toBe(1);
  });
});

describe('scale and binding', () => {
  it('reads and writes the Scale of a deployment', async () => {
    await call(api, 'POST', '/apis/apps/v1/namespaces/default/deployments', { body: deployment('s', 2) });
    const path = '/apis/apps/v1/namespaces/default/deployments/s/scale';
    const scale = await call(api, 'GET', path);
    expect(scale.body).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', metadata: { name: 's', namespace: 'default' }, spec: { replicas: 2 }, status: { replicas: 0, selector: 'app=s' } });
    const patched = await call(api, 'PATCH', path, { body: { spec: { replicas: 4 } }, contentType: 'application/merge-patch+json' });
    expect(patched.body.spec.replicas).toBe(4);
    const put = await call(api, 'PUT', path, { body: { ...patched.body, spec: { replicas: -1 } } });
    expect(put.status).toBe(422);
    expect(put.body.message).toBe('Scale.autoscaling "s" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0');
    const deploy = await call(api, 'GET', '/apis/apps/v1/namespaces/default/deployments/s');
    expect(deploy.body.spec.replicas).toBe(4);
    expect(deploy.body.metadata.generation).toBe(2);
  });

  it('binds a pod once and refuses a second binding with 409', async () => {
    await call(api, 'POST', '/api/v1/namespaces/default/pods', { body: pod('b') });
    const binding = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'b' }, target: { kind: 'Node', name: 'n1' } };
    const first = await call(api, 'POST', '/api/v1/namespaces/default/pods/b/binding', { body: binding });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ kind: 'Status', status: 'Success', code: 201 });
    const bound = (await call(api, 'GET', '/api/v1/namespaces/default/pods/b')).body;
    expect(bound.spec.nodeName).toBe('n1');
    expect(bound.status.conditions).toEqual([expect.objectContaining({ type: 'PodScheduled', status: 'True' })]);
    const second = await call(api, 'POST', '/api/v1/namespaces/default/pods/b/binding', { body: { ...binding, target: { name: 'n2' } } });
    expect(second.status).toBe(409);
    expect(second.body.message).toBe('Operation cannot be fulfilled on pods/binding "b": pod b is already assigned to node "n1"');
  });
});

describe('delete', () => {
  it('answers a Success Status for most kinds and 404 afterwards', async () => {
    const created = (await call(api, 'POST', CM, { body: configMap('d') })).body;
    const reply = await call(api, 'DELETE', `${CM}/d`);
    expect(reply.body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', details: { name: 'd', kind: 'configmaps', uid: created.metadata.uid }, code: 200 });
    expect((await call(api, 'GET', `${CM}/d`)).status).toBe(404);
  });

  it('checks uid and resourceVersion preconditions', async () => {
    await call(api, 'POST', CM, { body: configMap('pre') });
    const reply = await call(api, 'DELETE', `${CM}/pre`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'other' } } });
    expect(reply.status).toBe(409);
    expect(reply.body.message).toMatch(
      /^Operation cannot be fulfilled on configmaps "pre": StorageError: invalid object, Code: 4, Key: \/registry\/configmaps\/default\/pre, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: [0-9a-f-]+$/,
    );
  });

  it('keeps an object with finalizers until they are removed', async () => {
    await call(api, 'POST', CM, { body: { ...configMap('f'), metadata: { name: 'f', finalizers: ['example.com/hold'] } } });
    const deleting = await call(api, 'DELETE', `${CM}/f`);
    expect(deleting.status).toBe(200);
    expect(deleting.body.metadata.deletionTimestamp).toBe('2024-01-02T03:04:05Z');
    expect(deleting.body.metadata.deletionGracePeriodSeconds).toBe(0);
    const current = (await call(api, 'GET', `${CM}/f`)).body;
    const added = await call(api, 'PUT', `${CM}/f`, { body: { ...current, metadata: { ...current.metadata, finalizers: ['example.com/hold', 'new'] } } });
    expect(added.status).toBe(422);
    const released = await call(api, 'PATCH', `${CM}/f`, { body: { metadata: { finalizers: null } }, contentType: 'application/merge-patch+json' });
    expect(released.status).toBe(200);
    expect((await call(api, 'GET', `${CM}/f`)).status).toBe(404);
  });

  it('stores propagation policies as finalizers', async () => {
    await call(api, 'POST', CM, { body: configMap('o') });
    const reply = await call(api, 'DELETE', `${CM}/o?propagationPolicy=Orphan`);
    expect(reply.body.metadata.finalizers).toEqual(['orphan']);
    await call(api, 'POST', CM, { body: configMap('fg') });
    const fg = await call(api, 'DELETE', `${CM}/fg`, { body: { propagationPolicy: 'Foreground' } });
    expect(fg.body.metadata.finalizers).toEqual(['foregroundDeletion']);
    const bad = await call(api, 'DELETE', `${CM}/fg?propagationPolicy=Later`);
    expect(bad.status).toBe(422);
    expect(bad.body.message).toBe('DeleteOptions.meta.orch.io "" is invalid: propagationPolicy: Unsupported value: "Later": supported values: "Foreground", "Background", "Orphan"');
  });

  it('deletes unbound pods at once and bound pods gracefully', async () => {
    await call(api, 'POST', '/api/v1/namespaces/default/pods', { body: pod('free') });
    const free = await call(api, 'DELETE', '/api/v1/namespaces/default/pods/free');
    expect(free.body.kind).toBe('Pod');
    expect((await call(api, 'GET', '/api/v1/namespaces/default/pods/free')).status).toBe(404);

    await call(api, 'POST', '/api/v1/namespaces/default/pods', { body: pod('bound', 'n1') });
    const graceful = await call(api, 'DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=20');
    expect(graceful.body.metadata.deletionTimestamp).toBe('2024-01-02T03:04:25Z');
    expect(graceful.body.metadata.deletionGracePeriodSeconds).toBe(20);
    const longer = await call(api, 'DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=60');
    expect(longer.body.metadata.deletionGracePeriodSeconds).toBe(20);
    const now = await call(api, 'DELETE', '/api/v1/namespaces/default/pods/bound?gracePeriodSeconds=0');
    expect(now.status).toBe(200);
    expect((await call(api, 'GET', '/api/v1/namespaces/default/pods/bound')).status).toBe(404);
  });

  it('dry-run delete leaves the object', async () => {
    await call(api, 'POST', CM, { body: configMap('stay') });
    expect((await call(api, 'DELETE', `${CM}/stay?dryRun=All`)).status).toBe(200);
    expect((await call(api, 'GET', `${CM}/stay`)).status).toBe(200);
  });

  it('deletecollection deletes what the selector matches and returns it', async () => {
    for (const [name, tier] of [['a', 'web'], ['b', 'web'], ['c', 'db']]) {
      await call(api, 'POST', CM, { body: { ...configMap(name!), metadata: { name, labels: { tier } } } });
    }
    const reply = await call(api, 'DELETE', `${CM}?labelSelector=tier%3Dweb`);
    expect(reply.body.kind).toBe('ConfigMapList');
    expect(reply.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['a', 'b']);
    const left = await call(api, 'GET', CM);
    expect(left.body.items.map((i: { metadata: { name: string } }) => i.metadata.name)).toEqual(['c']);
  });
});

describe('namespaces', () => {
  it('terminate through the orch finalizer and refuse new content meanwhile', async () => {
    await call(api, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team' } } });
    const created = (await call(api, 'GET', '/api/v1/namespaces/team')).body;
    expect(created.spec).toEqual({ finalizers: ['orch'] });
    expect(created.status).toEqual({ phase: 'Active' });

    const deleting = await call(api, 'DELETE', '/api/v1/namespaces/team');
    expect(deleting.body.status.phase).toBe('Terminating');
    expect(deleting.body.metadata.deletionTimestamp).toBeDefined();

    const refused = await call(api, 'POST', '/api/v1/namespaces/team/configmaps', { body: configMap('late') });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('configmaps "late" is forbidden: unable to create new content in namespace team because it is being terminated');

    const again = await call(api, 'DELETE', '/api/v1/namespaces/team');
    expect(again.body.kind).toBe('Namespace');
    const current = (await call(api, 'GET', '/api/v1/namespaces/team')).body;
    const finalized = await call(api, 'PUT', '/api/v1/namespaces/team/finalize', { body: { ...current, spec: { finalizers: [] } } });
    expect(finalized.body.spec).toEqual({});
    // As upstream: removing the last finalizer of a namespace being deleted deletes it.
    expect((await call(api, 'GET', '/api/v1/namespaces/team')).status).toBe(404);
  });

  it('the system namespaces cannot be deleted', async () => {
    const reply = await call(api, 'DELETE', '/api/v1/namespaces/orch-system');
    expect(reply.status).toBe(403);
    expect(reply.body.message).toBe('namespaces "orch-system" is forbidden: this namespace may not be deleted');
  });
});

describe('authorization', () => {
  it('asks the authorizer with the request attributes and answers 403 with upstream wording', async () => {
    api.authorizer.decide = (a) => ({ allowed: a.verb !== 'list', reason: 'no rule' });
    const reply = await call(api, 'GET', '/apis/apps/v1/namespaces/default/deployments');
    expect(reply.status).toBe(403);
    expect(reply.body.message).toBe(
      'deployments.apps is forbidden: User "tester" cannot list resource "deployments" in API group "apps" in the namespace "default": no rule',
    );
    expect(api.authorizer.seen.at(-1)).toMatchObject({ verb: 'list', apiGroup: 'apps', resource: 'deployments', namespace: 'default', name: '', resourceRequest: true });
    api.authorizer.decide = () => ({ allowed: false });
    const node = await call(api, 'GET', '/api/v1/nodes/n1/status');
    expect(node.body.message).toBe('nodes/status "n1" is forbidden: User "tester" cannot get resource "nodes/status" in API group "" at the cluster scope');
  });
});
