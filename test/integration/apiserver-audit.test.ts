/**
 * Auditing on a real server reached with real kubectl: a policy with one namespace per level, the
 * JSON log (rotated by size, gzip-compressed), the webhook backend against a loopback server that
 * fails at first (events retried, none lost), the legacy format in batch mode flushed on stop, and a
 * bad policy that stops the start naming the rule.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:http';
import {mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {gunzipSync} from 'node:zlib';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type InProcessServer, kubectl, readAdminOrchconfig, sleep, startApiServer, writeClientOrchconfig} from '../helpers/apiserver.js';
import {auditConfig} from '../../src/daemons/apiserver/config.js';
import type {AuditEvent} from '../../src/daemons/apiserver/audit/event.js';

const LEVELS = ['none', 'meta', 'req', 'rr'] as const;

const POLICY = `apiVersion: audit.orch.io/v1
kind: Policy
rules:
  - level: Metadata
    users: [eve]
  - level: None
    namespaces: [lvl-none]
  - level: Metadata
    namespaces: [lvl-meta]
  - level: Request
    namespaces: [lvl-req]
    omitManagedFields: true
  - level: RequestResponse
    namespaces: [lvl-rr]
    omitStages: [RequestReceived]
  - level: None
`;

/** Every event of the log directory: the live file and the rotated ones (gunzipped). */
function readEvents(dir: string, base = 'audit'): AuditEvent[] {
  const files = readdirSync(dir).filter((f) => f.startsWith(base) && (f.endsWith('.log') || f.endsWith('.log.gz')));
  return files.flatMap((f) => {
    const raw = readFileSync(join(dir, f));
    const text = f.endsWith('.gz') ? gunzipSync(raw).toString('utf8') : raw.toString('utf8');
    return text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as AuditEvent);
  });
}

describe('audit log and webhook (JSON)', () => {
  let dir: string;
  let api: InProcessServer;
  let hook: Server;
  let admin: string;
  let eve: string;
  let hookCalls = 0;
  const hookLists: {kind: string; apiVersion: string; items: AuditEvent[]}[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-audit-'));
    // The webhook refuses its first two calls: the backend must retry them.
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        hookCalls++;
        if (hookCalls <= 2) {
          res.statusCode = 503;
          return res.end('not yet');
        }
        hookLists.push(JSON.parse(body));
        res.setHeader('content-type', 'application/json');
        res.end('{}');
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const hookConfig = join(dir, 'audit-webhook.yaml');
    writeFileSync(hookConfig, ['apiVersion: v1', 'kind: Config', 'clusters:', '- name: audit', '  cluster:', `    server: http://127.0.0.1:${(hook.address() as {port: number}).port}/events`,
      'users:', '- name: apiserver', '  user: {}', 'contexts:', '- name: audit', '  context: {cluster: audit, user: apiserver}', 'current-context: audit', ''].join('\n'));
    writeFileSync(join(dir, 'policy.yaml'), POLICY);
    writeFileSync(join(dir, 'tokens.csv'), 'eve-token,eve,7\n');
    api = await startApiServer({
      engine: 'sqlite',
      config: {
        authorizationModes: ['RBAC'],
        tokenAuthFile: join(dir, 'tokens.csv'),
        audit: auditConfig({
          'audit-policy-file': join(dir, 'policy.yaml'),
          'audit-log-path': join(dir, 'logs', 'audit.log'),
          'audit-log-maxsize': 1,
          'audit-log-maxbackup': 3,
          'audit-log-compress': true,
          'audit-webhook-config-file': hookConfig,
          'audit-webhook-initial-backoff': {ms: 100},
          'audit-webhook-batch-max-wait': {ms: 200},
        }),
      },
    });
    const creds = readAdminOrchconfig(api.orchconfigPath);
    admin = api.orchconfigPath;
    eve = writeClientOrchconfig(join(dir, 'eve.kubeconfig'), {server: creds.server, caPem: creds.caPem, token: 'eve-token'});
    for (const level of LEVELS) expect((await kubectl(admin, ['create', 'namespace', `lvl-${level}`])).code).toBe(0);
    for (const level of LEVELS) {
      const ns = `lvl-${level}`;
      for (const args of [['create', 'configmap', 'cm', '--from-literal=k=v'], ['get', 'configmap', 'cm', '-o', 'json'], ['patch', 'configmap', 'cm', '-p', '{"data":{"k":"w"}}'], ['delete', 'configmap', 'cm']]) {
        const out = await kubectl(admin, [...args, '-n', ns]);
        expect(`${out.code} ${out.stderr}`).toBe('0 ');
      }
    }
  }, 90_000);

  afterAll(async () => {
    await api?.stop();
    await new Promise<void>((resolve) => (hook ? hook.close(() => resolve()) : resolve()));
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  const logDir = () => join(dir, 'logs');
  const complete = (ns: string, verb: string) => readEvents(logDir()).filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.namespace === ns && e.objectRef?.resource === 'configmaps' && e.verb === verb);

  it('logs nothing at level None', () => {
    expect(readEvents(logDir()).filter((e) => e.objectRef?.namespace === 'lvl-none' && e.objectRef.resource === 'configmaps')).toEqual([]);
  });

  it('logs Metadata without bodies, with user, objectRef, status, stages and the authorizer\'s decision', () => {
    const events = readEvents(logDir()).filter((e) => e.objectRef?.namespace === 'lvl-meta' && e.objectRef.resource === 'configmaps');
    // Each request: RequestReceived, then ResponseComplete (kubectl adds gets of its own).
    const byId = new Map<string, string[]>();
    for (const e of events) byId.set(e.auditID, [...(byId.get(e.auditID) ?? []), e.stage]);
    expect([...byId.values()].every((stages) => stages.join() === 'RequestReceived,ResponseComplete')).toBe(true);
    expect([...new Set(events.map((e) => e.verb))].sort()).toEqual(['create', 'delete', 'get', 'patch']);
    const [created] = complete('lvl-meta', 'create');
    expect(created).toMatchObject({
      kind: 'Event', apiVersion: 'audit.orch.io/v1', level: 'Metadata', requestURI: '/api/v1/namespaces/lvl-meta/configmaps?fieldManager=kubectl-create&fieldValidation=Strict&timeout=10s',
      user: {username: 'orch-admin', groups: expect.arrayContaining(['system:masters'])},
      sourceIPs: ['127.0.0.1'], objectRef: {resource: 'configmaps', namespace: 'lvl-meta', name: 'cm', apiGroup: '', apiVersion: 'v1'},
      responseStatus: {code: 201}, annotations: {'authorization.orch.io/decision': 'allow'},
    });
    expect(created.userAgent).toMatch(/^kubectl/);
    expect(created.requestObject).toBeUndefined();
    expect(created.responseObject).toBeUndefined();
    expect(created.auditID).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(created.stageTimestamp)).toBeGreaterThanOrEqual(Date.parse(created.requestReceivedTimestamp));
    expect(created.requestReceivedTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  it('logs the request body at Request level (managed fields omitted), not the response', () => {
    const [created] = complete('lvl-req', 'create');
    expect(created.level).toBe('Request');
    expect(created.requestObject).toMatchObject({kind: 'ConfigMap', data: {k: 'v'}});
    expect(created.responseObject).toBeUndefined();
    const [patched] = complete('lvl-req', 'patch');
    expect(patched.requestObject).toEqual({data: {k: 'w'}});
    expect(patched.objectRef?.name).toBe('cm');
  });

  it('logs request and response at RequestResponse, without the omitted stage', () => {
    const events = readEvents(logDir()).filter((e) => e.objectRef?.namespace === 'lvl-rr' && e.objectRef.resource === 'configmaps');
    expect(events.every((e) => e.stage === 'ResponseComplete')).toBe(true);
    const [got] = complete('lvl-rr', 'get');
    expect(got.responseObject).toMatchObject({kind: 'ConfigMap', metadata: {name: 'cm', namespace: 'lvl-rr'}, data: {k: 'v'}});
    const [patched] = complete('lvl-rr', 'patch');
    expect(patched.responseObject).toMatchObject({data: {k: 'w'}});
    const [deleted] = complete('lvl-rr', 'delete');
    expect(deleted.responseStatus?.code).toBe(200);
  });

  it('logs a denied request with the decision, the reason and the Status', async () => {
    const out = await kubectl(eve, ['get', 'secrets', '-n', 'lvl-meta']);
    expect(out.stderr).toContain('forbidden');
    const [denied] = readEvents(logDir()).filter((e) => e.user.username === 'eve' && e.stage === 'ResponseComplete' && e.objectRef?.resource === 'secrets');
    expect(denied).toMatchObject({verb: 'list', responseStatus: {code: 403, status: 'Failure', reason: 'Forbidden'}, annotations: {'authorization.orch.io/decision': 'forbid'}});
    expect(denied.responseStatus?.message).toContain('User "eve" cannot list resource "secrets"');
    expect(denied.annotations).toHaveProperty(['authorization.orch.io/reason']);
  });

  it('records the impersonated user beside the authenticated one', async () => {
    await kubectl(admin, ['get', 'configmaps', '-n', 'lvl-meta', '--as', 'bob', '--as-group', 'devs']);
    const [ev] = readEvents(logDir()).filter((e) => e.impersonatedUser?.username === 'bob' && e.stage === 'ResponseComplete');
    expect(ev.user.username).toBe('orch-admin');
    expect(ev.impersonatedUser).toEqual({username: 'bob', groups: ['devs', 'system:authenticated']});
    expect(ev.responseStatus?.code).toBe(403);
  });

  it('logs a request with refused credentials as one ResponseStarted event with the 401', async () => {
    const res = await api.client.as({token: 'wrong-token', clientCert: false}).request('GET', '/api/v1/namespaces/lvl-meta/configmaps');
    expect(res.status).toBe(401);
    const events = readEvents(logDir()).filter((e) => e.auditID === res.headers['audit-id']);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({stage: 'ResponseStarted', user: {username: ''}, responseStatus: {code: 401, message: 'Authentication failed, attempted: token'}});
  });

  it('answers with the Audit-ID header of the logged event', async () => {
    const res = await api.client.request('GET', '/api/v1/namespaces/lvl-meta/configmaps');
    const id = res.headers['audit-id'] as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(readEvents(logDir()).filter((e) => e.auditID === id).map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
  });

  it('rotates the log by size into gzip files', async () => {
    const big = 'x'.repeat(700 * 1024);
    writeFileSync(join(dir, 'big.txt'), big);
    expect((await kubectl(admin, ['create', 'configmap', 'big', '--from-file=big.txt=' + join(dir, 'big.txt'), '-n', 'lvl-rr'])).code).toBe(0);
    expect((await kubectl(admin, ['get', 'configmap', 'cm-none', '-n', 'lvl-rr'])).code).not.toBe(0);
    let gz: string[] = [];
    for (let i = 0; i < 100 && gz.length === 0; i++) {
      gz = readdirSync(logDir()).filter((f) => /^audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d\.\d{3}(-\d+)?\.log\.gz$/.test(f));
      if (gz.length === 0) await sleep(100);
    }
    expect(gz).toHaveLength(1);
    const rotated = gunzipSync(readFileSync(join(logDir(), gz[0]))).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditEvent);
    expect(rotated.some((e) => e.objectRef?.name === 'big' && (e.requestObject as {data: {'big.txt': string}}).data['big.txt'] === big)).toBe(true);
    // The live file starts over after the rotation.
    const live = readFileSync(join(logDir(), 'audit.log'), 'utf8');
    expect(live.length).toBeLessThan(1024 * 1024);
    expect(live).toContain('"name":"cm-none"');
  });

  it('delivers EventLists to the webhook, retrying a server that was down', async () => {
    for (let i = 0; i < 100 && !hookLists.some((l) => l.items.some((e) => e.objectRef?.namespace === 'lvl-rr' && e.verb === 'delete')); i++) await sleep(100);
    expect(hookCalls).toBeGreaterThan(2);
    expect(hookLists[0]).toMatchObject({kind: 'EventList', apiVersion: 'audit.orch.io/v1'});
    const delivered = hookLists.flatMap((l) => l.items).filter((e) => e.objectRef?.resource === 'configmaps' && e.objectRef.namespace?.startsWith('lvl-') && e.stage === 'ResponseComplete');
    // The first events were refused twice, then arrived: none lost.
    for (const ns of ['lvl-meta', 'lvl-req', 'lvl-rr']) expect([...new Set(delivered.filter((e) => e.objectRef?.namespace === ns && e.objectRef.name === 'cm').map((e) => e.verb))].sort()).toEqual(['create', 'delete', 'get', 'patch']);
  });
});

describe('audit log (legacy format, batch mode) and policy errors', () => {
  it('writes legacy lines and flushes buffered events on stop', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-audit-legacy-'));
    try {
      writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.orch.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n  - level: Metadata\n    resources: [{group: "", resources: [configmaps]}]\n');
      const api = await startApiServer({
        engine: 'sqlite',
        config: {
          audit: auditConfig({
            'audit-policy-file': join(dir, 'policy.yaml'),
            'audit-log-path': join(dir, 'audit.log'),
            'audit-log-format': 'legacy',
            'audit-log-mode': 'batch',
            'audit-log-batch-max-size': 100,
            'audit-log-batch-max-wait': {ms: 3_600_000},
          }),
        },
      });
      let stopped = false;
      try {
        expect((await kubectl(api.orchconfigPath, ['create', 'configmap', 'legacy', '--from-literal=a=b'])).code).toBe(0);
        expect((await kubectl(api.orchconfigPath, ['delete', 'configmap', 'legacy'])).code).toBe(0);
        // Batches of 100 that wait an hour: nothing is written yet.
        expect(readFileSync(join(dir, 'audit.log'), 'utf8')).toBe('');
        await api.stop();
        stopped = true;
      } finally {
        if (!stopped) await api.stop();
      }
      const lines = readFileSync(join(dir, 'audit.log'), 'utf8').trim().split('\n');
      // kubectl delete waits for the object to be gone with a get (404).
      expect(lines).toHaveLength(3);
      expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z AUDIT: id="[0-9a-f-]{36}" stage="ResponseComplete" ip="127\.0\.0\.1" method="create" user="orch-admin" groups="\\"system:masters\\",\\"system:authenticated\\"" as="<self>" asgroups="<lookup>" user-agent="kubectl\/[^"]*" namespace="default" uri="\/api\/v1\/namespaces\/default\/configmaps\?[^"]*" response="201"$/);
      expect(lines[1]).toContain('method="delete"');
      expect(lines[1]).toContain('response="200"');
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  }, 60_000);

  it('refuses to start with a bad policy, naming the rule and the problem', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-audit-bad-'));
    try {
      writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n  - level: Loud\n    nonResourceURLs: ["/a*b"]\n');
      await expect(startApiServer({engine: 'sqlite', config: {audit: auditConfig({'audit-policy-file': join(dir, 'policy.yaml'), 'audit-log-path': '-'})}})).rejects.toThrow(
        /--audit-policy-file .*policy\.yaml: rules\[1\]\.level: Unsupported value: "Loud".*rules\[1\]\.nonResourceURLs\[0\]: Invalid value: "\/a\*b"/,
      );
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  }, 30_000);
});

describe('audit log under concurrent requests (blocking mode, group commit)', () => {
  it('every answered request already has its events in the log, stages in order, none lost or repeated', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-audit-many-'));
    try {
      writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n    resources: [{group: "", resources: [configmaps]}]\n');
      const api = await startApiServer({
        engine: 'sqlite',
        config: {audit: auditConfig({'audit-policy-file': join(dir, 'policy.yaml'), 'audit-log-path': join(dir, 'audit.log'), 'audit-log-maxsize': 1})},
      });
      try {
        const CM = '/api/v1/namespaces/default/configmaps';
        // Creates and reads interleaved, all in flight together: their events share group commits.
        const answers = await Promise.all(
          Array.from({length: 120}, (_, i) =>
            i % 2 ? api.client.request('GET', `${CM}/many-${i - 1}`) : api.client.request('POST', CM, {body: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: `many-${i}`}}}),
          ),
        );
        // Read before stop: a blocking backend answers only once the event is written.
        const events = readEvents(dir);
        const ids = answers.map((a) => a.headers['audit-id'] as string);
        expect(new Set(ids).size).toBe(120);
        for (const [i, id] of ids.entries()) {
          const mine = events.filter((e) => e.auditID === id);
          expect(mine.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
          expect(mine[1]!.responseStatus?.code).toBe(answers[i]!.status);
          expect(mine[0]!.objectRef?.name ?? mine[1]!.objectRef?.name).toBe(`many-${i - (i % 2)}`);
        }
      } finally {
        await api.stop();
      }
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  }, 60_000);
  it('blocking-strict refuses requests with a 500 when the log cannot be written (/dev/full)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-audit-full-'));
    try {
      writeFileSync(join(dir, 'policy.yaml'), 'apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n    resources: [{group: "", resources: [configmaps]}]\n');
      const api = await startApiServer({
        engine: 'sqlite',
        config: {audit: auditConfig({'audit-policy-file': join(dir, 'policy.yaml'), 'audit-log-path': '/dev/full', 'audit-log-maxsize': 0, 'audit-log-mode': 'blocking-strict'})},
      });
      try {
        const answers = await Promise.all(Array.from({length: 10}, () => api.client.request('GET', '/api/v1/namespaces/default/configmaps')));
        for (const a of answers) expect([a.status, a.body?.message]).toEqual([500, 'Internal error occurred: failed to store audit event']);
        // Requests the policy does not audit are not affected.
        expect((await api.client.request('GET', '/api/v1/namespaces/default/secrets')).status).toBe(200);
      } finally {
        await api.stop();
      }
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  }, 60_000);
});
