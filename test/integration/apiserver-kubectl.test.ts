/**
 * kubectl against `orch apiserver` (run as the CLI, on SQLite and on etcd) with nothing but the
 * generated admin orchconfig. Every kubectl call is asynchronous and bounded. The suite runs with
 * each name set (`--names orch|kubernetes`; upstream's on SQLite only, the store is the same).
 *
 * kubectl's generator commands (`kubectl create namespace x`) send protobuf bodies; orch decodes
 * them (src/api/protobuf), so they work too.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {stringify} from 'yaml';
import {type Engine, type ServerProcess, configMap, kubectl, kubectlStream, pod, startApiServerProcess} from '../helpers/apiserver.js';
import {type EtcdServer, startEtcd} from '../helpers/etcd.js';
import {nameSet, type NameSet, type NameSetId} from '../../src/api/names.js';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {name: 'api'},
  spec: {
    replicas: 2,
    selector: {matchLabels: {app: 'api'}},
    template: {metadata: {labels: {app: 'api'}}, spec: {containers: [{name: 'api', image: 'nginx:1.27'}]}},
  },
};

const crdOf = (n: NameSet) => ({
  apiVersion: `${n.groups.apiextensions}/v1`,
  kind: 'CustomResourceDefinition',
  metadata: {name: 'widgets.example.com'},
  spec: {
    group: 'example.com',
    scope: 'Namespaced',
    names: {plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd']},
    versions: [{name: 'v1', served: true, storage: true, schema: {openAPIV3Schema: {type: 'object', 'x-kubernetes-preserve-unknown-fields': true}}}],
  },
});

const widget = {apiVersion: 'example.com/v1', kind: 'Widget', metadata: {name: 'w1'}, spec: {size: 3}};

describe.each<[Engine, NameSetId]>([
  ['sqlite', 'orch'],
  ['etcd', 'orch'],
  ['sqlite', 'kubernetes'],
])('kubectl against orch apiserver on %s with the %s names', (engine, namesId) => {
  const n = nameSet(namesId);
  const crd = crdOf(n);
  let etcd: EtcdServer | undefined;
  let server: ServerProcess;
  let dir: string;
  let orchconfig: string;
  const k = (args: string[], input?: string) => kubectl(orchconfig, args, {input});
  /** Writes a manifest as YAML and returns its path. */
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

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-kubectl-'));
    if (engine === 'etcd') etcd = await startEtcd();
    server = await startApiServerProcess({engine, etcdEndpoint: etcd?.endpoint, args: ['--names', namesId]});
    orchconfig = server.orchconfigPath;
  });
  afterAll(async () => {
    await server?.stop();
    await etcd?.stop();
    rmSync(dir, {recursive: true, force: true});
  });

  it('lists the bootstrap namespaces with only the generated orchconfig', async () => {
    const r = await k(['get', 'ns', '-o', 'name']);
    expect(r.code).toBe(0);
    const {system, public: publicNs, nodeLease} = n.namespaces;
    expect(r.stdout.split('\n')).toEqual(expect.arrayContaining(['namespace/default', `namespace/${system}`, `namespace/${publicNs}`, `namespace/${nodeLease}`]));
  });

  it('creates objects with kubectl generator commands, which send protobuf', async () => {
    expect(await k(['create', 'namespace', 'gen'])).toMatchObject({code: 0, stdout: 'namespace/gen created\n'});
    expect(await k(['-n', 'gen', 'create', 'configmap', 'c1', '--from-literal=a=b'])).toMatchObject({code: 0, stdout: 'configmap/c1 created\n'});
    const got = await k(['-n', 'gen', 'get', 'configmap', 'c1', '-o', 'jsonpath={.data.a}']);
    expect(got).toMatchObject({code: 0, stdout: 'b'});
  });

  it('creates a Pod, a Deployment and a ConfigMap from manifests, with server-set metadata', async () => {
    const file = manifest('objects.yaml', pod('web', {app: 'web'}), deployment, configMap('settings', {mode: 'fast'}));
    const r = await k(['create', '-f', file]);
    expect(r).toMatchObject({code: 0, stderr: ''});
    expect(r.stdout.trim().split('\n')).toEqual(['pod/web created', 'deployment.apps/api created', 'configmap/settings created']);

    for (const [resource, name] of [['pod', 'web'], ['deployment', 'api'], ['configmap', 'settings']]) {
      const object = await getJson([resource, name]);
      expect(object.metadata.name).toBe(name);
      expect(object.metadata.namespace).toBe('default');
      expect(object.metadata.resourceVersion).toMatch(/^[1-9][0-9]*$/);
      expect(object.metadata.uid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(Date.parse(object.metadata.creationTimestamp)).toBeGreaterThan(Date.now() - 60_000);
    }
    // A second create of the same object is refused.
    const again = await k(['create', '-f', manifest('pod.yaml', pod('web'))]);
    expect(again.code).not.toBe(0);
    expect(again.stderr).toContain('Error from server (AlreadyExists): error when creating');
  });

  it('streams a change to `kubectl get -w`', async () => {
    const watch = kubectlStream(orchconfig, ['get', 'configmap', 'settings', '-w', '--output-watch-events']);
    try {
      await watch.waitFor(/ADDED\s+settings\s+1\s/);
      const patched = await k(['patch', 'configmap', 'settings', '--type=merge', '-p', '{"data":{"extra":"yes"}}']);
      expect(patched.code).toBe(0);
      await watch.waitFor(/MODIFIED\s+settings\s+2\s/);
    } finally {
      await watch.stop();
    }
  });

  it.each([
    ['strategic', ['-p', '{"metadata":{"labels":{"tier":"front"}}}'], {tier: 'front'}],
    ['merge', ['--type=merge', '-p', '{"metadata":{"labels":{"merged":"yes"}}}'], {merged: 'yes'}],
    ['json', ['--type=json', '-p', '[{"op":"add","path":"/metadata/labels/jsonpatched","value":"yes"}]'], {jsonpatched: 'yes'}],
  ])('patches a pod with a %s patch', async (_type, args, labels) => {
    const before = await getJson(['pod', 'web']);
    const r = await k(['patch', 'pod', 'web', ...(args as string[])]);
    expect(r).toMatchObject({code: 0, stdout: 'pod/web patched\n'});
    const after = await getJson(['pod', 'web']);
    expect(after.metadata.labels).toMatchObject({app: 'web', ...labels});
    expect(Number(after.metadata.resourceVersion)).toBeGreaterThan(Number(before.metadata.resourceVersion));
  });

  it('merges a strategic patch of a Deployment container by name and bumps the generation', async () => {
    const r = await k(['patch', 'deployment', 'api', '-p', '{"spec":{"template":{"spec":{"containers":[{"name":"api","image":"nginx:1.28"}]}}}}']);
    expect(r.code).toBe(0);
    const d = await getJson(['deployment', 'api']);
    expect(d.spec.template.spec.containers).toEqual([expect.objectContaining({name: 'api', image: 'nginx:1.28'})]);
    expect(d.metadata.generation).toBe(2);
  });

  it('prints the printer columns of events and, with -o wide, of deployments', async () => {
    const event = {
      apiVersion: 'v1', kind: 'Event', metadata: {name: 'web.start'},
      involvedObject: {kind: 'Pod', name: 'web', namespace: 'default'}, reason: 'Started', message: 'Started container web',
      type: 'Normal', source: {component: 'agent', host: 'node-1'}, firstTimestamp: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'), count: 1,
    };
    expect((await k(['create', '-f', manifest('event.yaml', event)])).code).toBe(0);
    const events = await k(['get', 'events']);
    expect(events.stdout).toMatch(/^LAST SEEN\s+TYPE\s+REASON\s+OBJECT\s+MESSAGE\n/);
    expect(events.stdout).toMatch(/Normal\s+Started\s+pod\/web\s+Started container web/);
    const wide = await k(['get', 'deployment', 'api', '-o', 'wide']);
    expect(wide.stdout).toMatch(/^NAME\s+READY\s+UP-TO-DATE\s+AVAILABLE\s+AGE\s+CONTAINERS\s+IMAGES\s+SELECTOR\n/);
    expect(wide.stdout).toMatch(/api\s+\S+\s+\d+\s+\d+\s+\S+\s+api\s+nginx:1\.\d+\s+app=api/);
  });

  it('creates the items of a kind: List file, as `kubectl get -o yaml` writes several objects', async () => {
    const list = {apiVersion: 'v1', kind: 'List', items: [configMap('listed-1', {a: '1'}), configMap('listed-2', {b: '2'})]};
    const created = await k(['create', '-f', manifest('list.yaml', list)]);
    expect(created).toMatchObject({code: 0, stdout: 'configmap/listed-1 created\nconfigmap/listed-2 created\n'});
    // kubectl validates a List through /openapi/v2 (protobuf), which orch answers.
    const applied = await k(['apply', '-f', manifest('list-changed.yaml', {...list, items: [configMap('listed-1', {a: 'one'})]})]);
    expect(applied.code).toBe(0);
    expect(applied.stdout).toBe('configmap/listed-1 configured\n');
    expect((await getJson(['configmap', 'listed-1'])).data).toEqual({a: 'one'});
  });

  it('answers exec without an upgrade with upstream\'s 400, and a pod on no node as upstream does', async () => {
    const raw = await k(['create', '--raw', '/api/v1/namespaces/default/pods/web/portforward', '-f', '-'], '{}');
    expect(raw.code).toBe(1);
    expect(raw.stderr).toContain('Upgrade request required');
    const exec = await k(['exec', 'web', '--', 'true']);
    expect(exec.code).toBe(1);
    expect(exec.stderr).toContain('pod web does not have a host assigned');
  });

  it('deletes objects', async () => {
    const r = await k(['delete', 'pod', 'web', '--wait=false']);
    expect(r).toMatchObject({code: 0, stdout: 'pod "web" deleted\n'});
    const gone = await k(['get', 'pod', 'web']);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('Error from server (NotFound): pods "web" not found');
  });

  it('answers the raw health endpoints', async () => {
    const ready = await k(['get', '--raw', '/readyz?verbose']);
    expect(ready.code).toBe(0);
    const lines = ready.stdout.trimEnd().split('\n');
    expect(lines.at(-1)).toBe('readyz check passed');
    expect(lines).toEqual(expect.arrayContaining(['[+]ping ok', '[+]kvstore ok', '[+]poststarthook/bootstrap-controller ok', '[+]shutdown ok']));
    const ping = await k(['get', '--raw', '/livez/ping']);
    expect(ping).toMatchObject({code: 0, stdout: 'ok'});
  });

  it('serves a CRD created with create -f, and its custom objects', async () => {
    expect(await k(['create', '-f', manifest('crd.yaml', crd)])).toMatchObject({code: 0, stdout: `customresourcedefinition.${n.groups.apiextensions}/widgets.example.com created\n`});
    // Discovery of the new group may lag the create by a moment; kubectl re-reads it on a miss.
    let created = await k(['create', '-f', manifest('widget.yaml', widget)]);
    for (let i = 0; created.code !== 0 && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 250));
      created = await k(['create', '-f', join(dir, 'widget.yaml')]);
    }
    expect(created).toMatchObject({code: 0, stdout: 'widget.example.com/w1 created\n'});

    const list = await getJson(['widgets']);
    expect(list.items.map((w: {metadata: {name: string}}) => w.metadata.name)).toEqual(['w1']);
    expect((await getJson(['wd', 'w1'])).spec).toEqual({size: 3});

    const merged = await k(['patch', 'widget', 'w1', '--type=merge', '-p', '{"spec":{"size":4}}']);
    expect(merged.code).toBe(0);
    expect((await getJson(['widget', 'w1'])).spec).toEqual({size: 4});
  });

  it('refuses a strategic patch of a custom object with 415', async () => {
    const r = await k(['patch', 'widget', 'w1', '-p', '{"spec":{"size":5}}']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('application/strategic-merge-patch+json is not supported by example.com/v1, Kind=Widget');
    expect(r.stderr).toContain('the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json');
    expect((await getJson(['widget', 'w1'])).spec).toEqual({size: 4});
  });
});
