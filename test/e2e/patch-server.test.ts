/**
 * `orch patch` against an API server, as a user runs it: the built CLI (run `npm run build` first)
 * talks to the real REST handler (startTestApi) through a small recording proxy, which also adds a
 * server `Warning` header for objects named `legacy` (the handler itself sends none yet).
 * The CLI runs with async spawn: a blocking spawnSync would stop the in-process server from answering.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn} from 'node:child_process';
import {createServer, request, type Server} from 'node:http';
import type {AddressInfo} from 'node:net';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {call, startTestApi, type TestApi} from '../helpers/memory-store.js';
import {orchBin, repoRoot, type RunResult} from '../helpers/run-orch.js';

let api: TestApi;
let proxy: Server;
let proxyUrl: string;
let dir: string;
let orchconfig: string;
/** Every request the CLI sent: method, path with query, content type. */
let seen: {method: string; url: string; contentType?: string}[] = [];

function orch(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [orchBin, 'patch', ...args], {
      cwd: repoRoot,
      env: {...process.env, NO_COLOR: '1', HOME: dir, ORCHCONFIG: orchconfig, ...env},
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill(), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({stdout, stderr, code: code ?? -1});
    });
  });
}

async function object(path: string): Promise<any> {
  return (await call(api, 'GET', path)).body;
}

const pod = (name: string, namespace: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: {name, namespace, labels: {app: name}},
  spec: {containers: [{name: 'web', image: 'nginx:1.26'}]},
});

beforeAll(async () => {
  api = await startTestApi();
  dir = mkdtempSync(join(tmpdir(), 'orch-patch-server-'));
  await call(api, 'POST', '/api/v1/namespaces', {body: {apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'prod'}}});
  for (const [name, ns] of [['web', 'default'], ['api', 'prod'], ['legacy', 'default'], ['other', 'default']]) {
    const created = await call(api, 'POST', `/api/v1/namespaces/${ns}/pods`, {body: pod(name, ns)});
    expect(created.status).toBe(201);
  }
  proxy = createServer((req, res) => {
    seen.push({method: req.method!, url: req.url!, contentType: req.headers['content-type']});
    const upstream = request(`${api.url}${req.url}`, {method: req.method, headers: req.headers}, (answer) => {
      const headers = {...answer.headers};
      if (req.url!.includes('/pods/legacy')) headers.warning = ['299 - "pods named legacy are deprecated"'] as unknown as string;
      res.writeHead(answer.statusCode!, headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  orchconfig = join(dir, 'config');
  writeFileSync(
    orchconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'current-context: test',
      `clusters: [{name: test, cluster: {server: "${proxyUrl}"}}]`,
      'users: [{name: tester, user: {}}]',
      'contexts: [{name: test, context: {cluster: test, user: tester}}, {name: in-prod, context: {cluster: test, user: tester, namespace: prod}}]',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'web.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\n  namespace: default\n');
  writeFileSync(join(dir, 'gadget.yaml'), 'apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n');
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  await api.close();
  rmSync(dir, {recursive: true, force: true});
});

const patches = () => seen.filter((r) => r.method === 'PATCH');

describe('orch patch TYPE NAME against the server', () => {
  it('sends a strategic merge patch with the orch-patch field manager and reports the change', async () => {
    seen = [];
    const r = await orch(['pod', 'web', '-p', '{"metadata":{"labels":{"tier":"front"}}}']);
    expect(r).toEqual({stdout: 'pod/web patched\n', stderr: '', code: 0});
    expect(patches()).toEqual([
      {method: 'PATCH', url: '/api/v1/namespaces/default/pods/web?fieldManager=orch-patch', contentType: 'application/strategic-merge-patch+json'},
    ]);
    expect((await object('/api/v1/namespaces/default/pods/web')).metadata.labels).toEqual({app: 'web', tier: 'front'});
  });

  it('says "(no change)" when the object comes back unchanged', async () => {
    const r = await orch(['pod', 'web', '-p', '{"metadata":{"labels":{"tier":"front"}}}']);
    expect(r).toEqual({stdout: 'pod/web patched (no change)\n', stderr: '', code: 0});
  });

  it('takes TYPE/NAME, short names and a merge patch', async () => {
    seen = [];
    const r = await orch(['po/web', '--type', 'merge', '-p', '{"metadata":{"labels":{"tier":null}}}']);
    expect(r).toEqual({stdout: 'pod/web patched\n', stderr: '', code: 0});
    expect(patches()[0].contentType).toBe('application/merge-patch+json');
    expect((await object('/api/v1/namespaces/default/pods/web')).metadata.labels).toEqual({app: 'web'});
  });

  it('sends a JSON patch', async () => {
    const r = await orch(['pods', 'web', '--type', 'json', '-p', '[{"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.27"}]']);
    expect(r).toEqual({stdout: 'pod/web patched\n', stderr: '', code: 0});
    expect((await object('/api/v1/namespaces/default/pods/web')).spec.containers[0].image).toBe('nginx:1.27');
  });

  it('--dry-run=server asks with dryRun=All and stores nothing', async () => {
    seen = [];
    const r = await orch(['pod', 'web', '-p', '{"metadata":{"labels":{"tier":"dry"}}}', '--dry-run=server', '-o', 'jsonpath={.metadata.labels.tier}']);
    expect(r).toEqual({stdout: 'dry', stderr: '', code: 0});
    expect(patches()[0].url).toBe('/api/v1/namespaces/default/pods/web?dryRun=All&fieldManager=orch-patch');
    expect((await object('/api/v1/namespaces/default/pods/web')).metadata.labels.tier).toBeUndefined();
  });

  it('--dry-run=client fetches the object, patches it locally and sends no PATCH', async () => {
    seen = [];
    const r = await orch(['pod', 'web', '-p', '{"metadata":{"labels":{"tier":"local"}}}', '--dry-run=client', '-o', 'json']);
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.stdout);
    expect(printed.metadata.labels).toEqual({app: 'web', tier: 'local'});
    expect(printed.metadata.uid).toBeTruthy(); // the server's object, not a file's
    expect(patches()).toEqual([]);
    expect(seen.some((s) => s.method === 'GET' && s.url === '/api/v1/namespaces/default/pods/web')).toBe(true);
  });

  it('--subresource status patches the status only', async () => {
    seen = [];
    const r = await orch(['pod', 'web', '--subresource', 'status', '--type', 'merge', '-p', '{"status":{"phase":"Running"}}']);
    expect(r).toEqual({stdout: 'pod/web patched\n', stderr: '', code: 0});
    expect(patches()[0].url).toBe('/api/v1/namespaces/default/pods/web/status?fieldManager=orch-patch');
    expect((await object('/api/v1/namespaces/default/pods/web')).status.phase).toBe('Running');
  });

  it('-n, and the context namespace, choose the namespace', async () => {
    const r = await orch(['pod', 'api', '-n', 'prod', '-p', '{"metadata":{"labels":{"env":"prod"}}}']);
    expect(r).toEqual({stdout: 'pod/api patched\n', stderr: '', code: 0});
    const viaContext = await orch(['pod', 'api', '--context', 'in-prod', '-p', '{"metadata":{"labels":{"env":"prod2"}}}']);
    expect(viaContext).toEqual({stdout: 'pod/api patched\n', stderr: '', code: 0});
    expect((await object('/api/v1/namespaces/prod/pods/api')).metadata.labels.env).toBe('prod2');
    const missingNamespace = await orch(['pod', 'api', '-n', 'nowhere', '-p', '{}']);
    expect(missingNamespace).toEqual({stdout: '', stderr: 'Error from server (NotFound): namespaces "nowhere" not found\n', code: 1});
  });

  it('--field-manager names the manager in managedFields', async () => {
    const r = await orch(['pod', 'web', '-p', '{"metadata":{"labels":{"owner":"me"}}}', '--field-manager', 'me', '-o', 'jsonpath={.metadata.managedFields[*].manager}']);
    expect(r.code).toBe(0);
    expect(r.stdout.split(' ')).toContain('me');
  });

  it('--request-timeout takes bare seconds and sends the timeout as kubectl does', async () => {
    seen = [];
    const r = await orch(['pod', 'web', '-p', '{}', '--request-timeout', '5']);
    expect(r.code).toBe(0);
    expect(patches()[0].url).toBe('/api/v1/namespaces/default/pods/web?fieldManager=orch-patch&timeout=5s');
    const bad = await orch(['pod', 'web', '-p', '{}', '--request-timeout', 'soon']);
    expect(bad.stderr).toBe('error: Invalid timeout value. Timeout must be a single integer in seconds, or an integer followed by a corresponding time unit (e.g. 1s | 2m | 3h)\n');
    expect(bad.code).toBe(1);
  });

  it('--diff shows the change on the server object', async () => {
    const r = await orch(['pod', 'web', '--type', 'merge', '-p', '{"metadata":{"labels":{"tier":"diffed"}}}', '--diff']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^\+ {4}tier: diffed$/m);
    expect(r.stdout).not.toContain('managedFields');
    expect(r.stdout.endsWith('pod/web patched\n')).toBe(true);
  });
});

describe('orch patch -f FILE against the server', () => {
  it('patches the object the file names', async () => {
    const r = await orch(['-f', join(dir, 'web.yaml'), '--type', 'merge', '-p', '{"metadata":{"annotations":{"from":"file"}}}']);
    expect(r).toEqual({stdout: 'pod/web patched\n', stderr: '', code: 0});
    expect((await object('/api/v1/namespaces/default/pods/web')).metadata.annotations).toEqual({from: 'file'});
  });

  it('refuses a kind the server does not serve, as kubectl does', async () => {
    const r = await orch(['-f', join(dir, 'gadget.yaml'), '-p', '{}']);
    expect(r.stderr).toBe(
      `error: resource mapping not found for name: "g" namespace: "" from "${join(dir, 'gadget.yaml')}": no matches for kind "Gadget" in version "example.com/v1"\nensure CRDs are installed first\n`,
    );
    expect(r.code).toBe(1);
  });
});

describe('server errors, as kubectl prints them', () => {
  it.each<[string, string[], string]>([
    ['a missing object', ['pod', 'nope', '-p', '{}'], 'Error from server (NotFound): pods "nope" not found\n'],
    [
      'a stale resourceVersion in the patch',
      ['pod', 'web', '-p', '{"metadata":{"resourceVersion":"1","labels":{"x":"y"}}}'],
      'Error from server (Conflict): Operation cannot be fulfilled on pods "web": the object has been modified; please apply your changes to the latest version and try again\n',
    ],
    // The patched object no longer decodes: upstream's decoder error (the API server's schema stage).
    ['an invalid result', ['pod', 'web', '-p', '{"metadata":{"labels":"invalid"}}'],
      'Error from server (BadRequest): Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field ObjectMeta.metadata.labels of type map[string]string\n'],
    ['an unknown type', ['foos', 'web', '-p', '{}'], 'error: the server doesn\'t have a resource type "foos"\n'],
    ['a refused connection', ['-s', 'http://127.0.0.1:1', 'pod', 'web', '-p', '{}'], 'The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?\n'],
    ['a missing context', ['--context', 'nope', 'pod', 'web', '-p', '{}'], 'error: context "nope" does not exist\n'],
  ])('%s', async (_name, args, stderr) => {
    expect(await orch(args)).toEqual({stdout: '', stderr, code: 1});
  });

  it('patches the other objects and reports the failures last', async () => {
    const r = await orch(['pod', 'nope', 'other', '-p', '{"metadata":{"labels":{"batch":"1"}}}']);
    expect(r).toEqual({stdout: 'pod/other patched\n', stderr: 'Error from server (NotFound): pods "nope" not found\n', code: 1});
  });
});

describe('server warnings', () => {
  it('are printed on stderr, once each', async () => {
    const r = await orch(['pod', 'legacy', '-p', '{"metadata":{"labels":{"w":"1"}}}']);
    // The GET and the PATCH both carry the warning; it is shown once.
    expect(r).toEqual({stdout: 'pod/legacy patched\n', stderr: 'Warning: pods named legacy are deprecated\n', code: 0});
  });

  it('fail the command with --warnings-as-errors, after the work is done', async () => {
    const r = await orch(['pod', 'legacy', '-p', '{"metadata":{"labels":{"w":"2"}}}', '--warnings-as-errors']);
    expect(r).toEqual({stdout: 'pod/legacy patched\n', stderr: 'Warning: pods named legacy are deprecated\nerror: 1 warning received\n', code: 1});
    expect((await object('/api/v1/namespaces/default/pods/legacy')).metadata.labels.w).toBe('2');
    const quiet = await orch(['pod', 'web', '-p', '{}', '--warnings-as-errors']);
    expect(quiet.code).toBe(0);
  });
});
