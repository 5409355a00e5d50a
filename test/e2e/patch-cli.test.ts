/** `orch patch` as a user runs it: inputs of every kind, outputs, --diff, -i, and clear errors. */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn} from 'node:child_process';
import {createServer, type Server} from 'node:http';
import {mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {orchBin, runOrch} from '../helpers/run-orch.js';

let dir: string;
const pod = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'web', labels: {app: 'web'}}, spec: {containers: [{name: 'web', image: 'nginx:1.26'}]}};
const cm = (name: string) => ({apiVersion: 'v1', kind: 'ConfigMap', metadata: {name}, data: {x: '1'}});

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'orch-patch-'));
  writeFileSync(join(dir, 'pod.json'), JSON.stringify(pod));
  writeFileSync(
    join(dir, 'multi.yaml'),
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata: {x: "1"}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\ndata: {x: "2"}\n',
  );
  writeFileSync(join(dir, 'list.json'), JSON.stringify({apiVersion: 'v1', kind: 'List', items: [cm('c'), cm('d')]}));
  mkdirSync(join(dir, 'tree', 'sub'), {recursive: true});
  writeFileSync(join(dir, 'tree', 'one.json'), JSON.stringify(cm('one')));
  writeFileSync(join(dir, 'tree', 'notes.txt'), 'not a manifest');
  writeFileSync(join(dir, 'tree', 'sub', 'two.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: two\n');
  writeFileSync(join(dir, 'bad.json'), '{"apiVersion": "v1", "kind": ');
  writeFileSync(join(dir, 'patch.yaml'), 'metadata:\n  labels:\n    tier: front\n');
  mkdirSync(join(dir, 'kust'));
  writeFileSync(join(dir, 'kust', 'pod.json'), JSON.stringify(pod));
  writeFileSync(join(dir, 'kust', 'cm.yaml'), 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: "1"\n');
  writeFileSync(
    join(dir, 'kust', 'kustomization.yaml'),
    [
      'resources: [pod.json, cm.yaml]',
      'namespace: prod',
      'namePrefix: p-',
      'nameSuffix: -s',
      'commonLabels: {team: core}',
      'patches:',
      '  - patch: |-',
      '      apiVersion: v1',
      '      kind: ConfigMap',
      '      metadata: {name: settings}',
      '      data: {b: "2"}',
      '',
    ].join('\n'),
  );
  mkdirSync(join(dir, 'kust-bad'));
  writeFileSync(join(dir, 'kust-bad', 'kustomization.yaml'), 'resources: []\nconfigMapGenerator: []\n');
});
afterAll(() => rmSync(dir, {recursive: true, force: true}));

const f = (name: string) => join(dir, name);

describe('inputs', () => {
  it('patches every document of a multi-document YAML file', () => {
    const r = runOrch(['patch', '--local', '-f', f('multi.yaml'), '-p', '{"data":{"x":"1"}}']);
    expect(r).toMatchObject({code: 0, stdout: 'configmap/a patched (no change)\nconfigmap/b patched\n'});
  });
  it('patches every item of a List', () => {
    const r = runOrch(['patch', '--local', '-f', f('list.json'), '--type', 'merge', '-p', '{"data":{"y":"2"}}', '-o', 'name']);
    expect(r.stdout).toBe('configmap/c\nconfigmap/d\n');
  });
  it('reads a directory (manifests only), and its subdirectories with -R', () => {
    expect(runOrch(['patch', '--local', '-f', f('tree'), '-p', '{}']).stdout).toBe('configmap/one patched (no change)\n');
    expect(runOrch(['patch', '--local', '-f', f('tree'), '-R', '-p', '{}']).stdout).toBe(
      'configmap/one patched (no change)\nconfigmap/two patched (no change)\n',
    );
  });
  it('reads standard input with -f -', () => {
    const r = runOrch(['patch', '--local', '-f', '-', '-p', '{"metadata":{"labels":{"a":"b"}}}', '-o', 'jsonpath={.metadata.labels.a}'], {
      input: JSON.stringify(pod),
    });
    expect(r).toMatchObject({code: 0, stdout: 'b'});
  });
  it('reads a patch file in YAML', () => {
    const r = runOrch(['patch', '--local', '-f', f('pod.json'), '--patch-file', f('patch.yaml'), '-o', 'jsonpath={.metadata.labels.tier}']);
    expect(r.stdout).toBe('front');
  });
  it('reads a patch in YAML from -p, with YAML 1.1 booleans as kubectl reads them', () => {
    const r = runOrch(['patch', '--local', '-f', f('pod.json'), '--type', 'merge', '-p', 'spec:\n  hostNetwork: yes', '-o', 'json']);
    expect(JSON.parse(r.stdout).spec.hostNetwork).toBe(true);
  });
  it('reads an http URL', async () => {
    const server: Server = createServer((_req, res) => res.end(JSON.stringify(pod)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as {port: number}).port;
    try {
      const out = await new Promise<string>((resolve) => {
        const child = spawn(process.execPath, [orchBin, 'patch', '--local', '-f', `http://127.0.0.1:${port}/pod.json`, '-p', '{}', '-o', 'name']);
        let text = '';
        child.stdout.on('data', (d) => (text += d));
        child.on('close', () => resolve(text));
      });
      expect(out).toBe('pod/web\n');
    } finally {
      server.close();
    }
  });
  it('builds a kustomization with -k: resources, namespace, prefix/suffix, labels and patches', () => {
    const r = runOrch(['patch', '--local', '-k', f('kust'), '--type', 'merge', '-p', '{"metadata":{"annotations":{"by":"orch"}}}', '-o', 'json']);
    expect(r.code).toBe(0);
    const docs = r.stdout.split(/\n(?=\{)/).map((t) => JSON.parse(t));
    expect(docs.map((d) => d.metadata.name)).toEqual(['p-web-s', 'p-settings-s']);
    expect(docs.every((d) => d.metadata.namespace === 'prod' && d.metadata.labels.team === 'core' && d.metadata.annotations.by === 'orch')).toBe(true);
    expect(docs[1].data).toEqual({a: '1', b: '2'});
  });
  it('refuses a kustomization field it does not support, naming it', () => {
    const r = runOrch(['patch', '--local', '-k', f('kust-bad'), '-p', '{}']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('unsupported kustomization field(s) configMapGenerator');
  });
});

describe('outputs', () => {
  it.each([
    [['-o', 'yaml'], 'apiVersion: v1\nkind: Pod\nmetadata:\n  labels:\n    app: web\n  name: web\nspec:\n  containers:\n  - image: nginx:1.27\n    name: web\n'],
    [['-o', 'name'], 'pod/web\n'],
    [['-o', 'jsonpath={.spec.containers[*].image}'], 'nginx:1.27'],
    [['-o', 'go-template={{range .spec.containers}}{{.name}}={{.image}}{{end}}'], 'web=nginx:1.27'],
    [['--template', '{{.metadata.name}}'], 'web'],
  ])('%j', (args, expected) => {
    const r = runOrch(['patch', '--local', '-f', f('pod.json'), '-p', '{"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}', ...args]);
    expect(r).toMatchObject({code: 0, stdout: expected, stderr: ''});
  });
  it('reports a missing template key when asked to, with exit code 1', () => {
    const r = runOrch(['patch', '--local', '-f', f('pod.json'), '-p', '{}', '-o', 'jsonpath={.nope}', '--allow-missing-template-keys=false']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: .*nope is not found/);
  });
});

describe('--diff and --interactive', () => {
  it('prints a unified diff before the result line', () => {
    const r = runOrch(['patch', '--local', '-f', f('pod.json'), '--type', 'merge', '-p', '{"metadata":{"labels":{"app":"api"}}}', '--diff']);
    expect(r.code).toBe(0);
    const lines = r.stdout.split('\n');
    expect(lines.slice(0, 2)).toEqual(['--- a/pod/web', '+++ b/pod/web']);
    expect(lines[2]).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@$/);
    expect(lines).toContain('-    app: web');
    expect(lines).toContain('+    app: api');
    expect(lines.filter((l) => /^[-+] /.test(l) || /^[-+]\s/.test(l))).toHaveLength(2);
    expect(r.stdout.endsWith('\npod/web patched\n')).toBe(true);
  });
  it('sends the diff to stderr when -o keeps stdout for data', () => {
    const r = runOrch(['patch', '--local', '-f', f('pod.json'), '--type', 'merge', '-p', '{"metadata":{"labels":{"app":"api"}}}', '--diff', '-o', 'json']);
    expect(JSON.parse(r.stdout).metadata.labels.app).toBe('api');
    expect(r.stderr).toContain('+    app: api');
  });
  it('refuses --interactive without a terminal', () => {
    const r = runOrch(['patch', '--local', '-f', f('pod.json'), '-p', '{}', '-i']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('--interactive (-i) needs a terminal');
  });
});

describe('bad input: a clear error, exit 1, and the input file untouched', () => {
  it.each([
    [['-f', 'missing.json', '-p', '{}'], 'error: the path "missing.json" does not exist'],
    [['-f', 'BAD', '-p', '{}'], 'invalid YAML'],
    [['-f', 'POD', '-p', '{"spec":'], 'error: invalid JSON document in the patch'],
    [['-f', 'POD', '--type', 'json', '-p', '{"op":"add"}'], 'error: '],
    [['-f', 'POD', '--type', 'json', '-p', '[{"op":"test","path":"/metadata/name","value":"other"}]'], 'error: '],
    [['-f', 'POD', '-p', '{"spec":{"containers":[{"image":"x"}]}}'], 'does not contain declared merge key: name'],
    [['-f', 'POD', '-p', '{}', '-o', 'wide'], 'unable to match a printer suitable for the output format "wide"'],
    [['-f', 'POD', '--type', 'yaml', '-p', '{}'], '--type'],
    [['-f', 'POD'], 'error: must specify --patch or --patch-file containing the contents of the patch'],
    [['-f', 'POD', '-p', '{}', '--patch-file', 'x'], 'error: cannot specify --patch and --patch-file together'],
    [['-p', '{}'], 'error: You must provide one or more resources by argument or filename.'],
    [['-f', 'POD', '-p', '{}', '--dry-run=server'], 'error: cannot specify --local and --dry-run=server - did you mean --dry-run=client?'],
    [['-f', 'POD', '--patch-file', '/nonexistent/p.json'], 'error: unable to read patch file: open /nonexistent/p.json: no such file or directory'],
  ])('%j', (args, message) => {
    const before = readFileSync(f('pod.json'), 'utf8');
    const resolved = args.map((a) => (a === 'POD' ? f('pod.json') : a === 'BAD' ? f('bad.json') : a));
    const r = runOrch(['patch', '--local', ...resolved]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(message);
    expect(r.stdout).toBe('');
    expect(readFileSync(f('pod.json'), 'utf8')).toBe(before);
  });

  it('without --local, reaches for the server of the orchconfig and says so when none answers', () => {
    const home = mkdtempSync(join(tmpdir(), 'orch-home-'));
    try {
      const r = runOrch(['patch', 'pod', 'web', '-p', '{}', '--request-timeout=2s'], {env: {HOME: home, ORCHCONFIG: ''}});
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('The connection to the server localhost:8080 was refused - did you specify the right host or port?');
    } finally {
      rmSync(home, {recursive: true, force: true});
    }
  });

  it('accepts a bare --dry-run with kubectl\'s deprecation warning', () => {
    const r = runOrch(['patch', '--local', '-f', f('pod.json'), '-p', '{}', '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('--dry-run is deprecated and can be replaced with --dry-run=client.');
  });
});
