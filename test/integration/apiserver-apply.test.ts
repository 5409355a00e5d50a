/**
 * Server-side apply with real kubectl against a real API server (in process, SQLite): two field
 * managers and a conflict, --force-conflicts, removal of fields a manager stops applying, list-map
 * merging (containers by name, ports by containerPort and protocol), --dry-run=server, kubectl diff,
 * a custom resource with list types from its schema, managers of ordinary writes (kubectl patch and
 * edit), --show-managed-fields, and the 4xx answers of a malformed apply.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {stringify} from 'yaml';
import {names} from '../../src/api/names.js';
import {kubectl, kubectlEnv, startApiServer, type InProcessServer} from '../helpers/apiserver.js';

const APPLY = 'application/apply-patch+yaml';

function deployment(name: string, spec: Record<string, unknown>): Record<string, unknown> {
  return {apiVersion: 'apps/v1', kind: 'Deployment', metadata: {name}, spec};
}

/** A Deployment spec with one container `app`; `extra` is merged into the spec. */
function appSpec(extra: Record<string, unknown> = {}, container: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    selector: {matchLabels: {app: 'web'}},
    template: {metadata: {labels: {app: 'web'}}, spec: {containers: [{name: 'app', image: 'nginx:1.27', ...container}]}},
    ...extra,
  };
}

describe('server-side apply with kubectl', () => {
  let server: InProcessServer;
  let dir: string;
  let n = 0;
  const k = (args: string[], input?: string) => kubectl(server.orchconfigPath, args, {input});
  const file = (...objects: object[]) => {
    const path = join(dir, `m${n++}.yaml`);
    writeFileSync(path, objects.map((o) => stringify(o)).join('---\n'));
    return path;
  };
  const ssa = (manager: string, object: object, ...flags: string[]) => k(['apply', '--server-side', `--field-manager=${manager}`, ...flags, '-f', file(object)]);
  const getJson = async (...args: string[]) => {
    const r = await k(['get', ...args, '-o', 'json', '--show-managed-fields']);
    expect(r.stderr).toBe('');
    return JSON.parse(r.stdout);
  };
  /** kubectl with extra environment variables (the helper passes none), bounded like the helper. */
  const kubectlWithEnv = (args: string[], env: Record<string, string>) =>
    new Promise<{stdout: string; stderr: string; code: number}>((resolve, reject) => {
      const proc = spawn('kubectl', ['--kubeconfig', server.orchconfigPath, '--request-timeout=10s', ...args], {env: kubectlEnv(server.orchconfigPath, env), stdio: ['ignore', 'pipe', 'pipe']});
      let stdout = '';
      let stderr = '';
      proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
      proc.on('error', reject);
      proc.on('exit', (code) => {
        clearTimeout(timer);
        // Let the pipes drain; an editor left behind must not hold the test.
        setTimeout(() => resolve({stdout, stderr, code: code ?? -1}), 50);
      });
    });
  const managersOf = (object: any) =>
    Object.fromEntries((object.metadata.managedFields ?? []).map((m: any) => [`${m.manager}/${m.operation}`, m.fieldsV1]));

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-apply-'));
    server = await startApiServer({engine: 'sqlite'});
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
    rmSync(dir, {recursive: true, force: true});
  });

  it('two managers: a conflict is a 409 with upstream causes; --force-conflicts takes the field over', async () => {
    expect(await ssa('a', deployment('two', appSpec({replicas: 2})))).toMatchObject({code: 0, stdout: 'deployment.apps/two serverside-applied\n'});
    const conflict = await ssa('b', deployment('two', appSpec({replicas: 3})));
    expect(conflict.code).not.toBe(0);
    expect(conflict.stderr).toContain('error: Apply failed with 1 conflict: conflict with "a": .spec.replicas');
    expect(conflict.stderr).toContain('--force-conflicts');
    expect((await getJson('deploy', 'two')).spec.replicas).toBe(2);

    // The Status on the wire: reason Conflict, one FieldManagerConflict cause per field.
    const raw = await server.client.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/two?fieldManager=b', {
      body: JSON.stringify(deployment('two', {replicas: 3, paused: true})), contentType: APPLY,
    });
    expect(raw.status).toBe(409);
    expect(raw.body).toMatchObject({kind: 'Status', status: 'Failure', reason: 'Conflict', code: 409,
      message: 'Apply failed with 1 conflict: conflict with "a": .spec.replicas',
      details: {causes: [{type: 'FieldManagerConflict', message: 'conflict with "a"', field: '.spec.replicas'}]}});

    expect(await ssa('b', deployment('two', appSpec({replicas: 3})), '--force-conflicts')).toMatchObject({code: 0});
    const after = await getJson('deploy', 'two');
    expect(after.spec.replicas).toBe(3);
    const managers = managersOf(after);
    expect(managers['b/Apply']['f:spec']['f:replicas']).toEqual({});
    expect(managers['a/Apply']['f:spec']['f:replicas']).toBeUndefined();
    // Both still own the container they both applied with the same values.
    expect(managers['a/Apply']['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"app"}']).toMatchObject({'f:image': {}});
  });

  it('a field the manager stops applying is removed, unless another manager owns it', async () => {
    await ssa('a', deployment('drop', appSpec({replicas: 1, minReadySeconds: 5, paused: true})));
    await ssa('b', {...deployment('drop', {paused: true})});
    expect(await ssa('a', deployment('drop', appSpec({replicas: 1})))).toMatchObject({code: 0});
    const after = await getJson('deploy', 'drop');
    expect(after.spec.minReadySeconds).toBeUndefined();
    expect(after.spec.paused).toBe(true);
    expect(managersOf(after)['a/Apply']['f:spec']).not.toHaveProperty('f:minReadySeconds');
  });

  it('merges list maps: containers by name, ports by containerPort and protocol', async () => {
    await ssa('a', deployment('lists', appSpec({}, {ports: [{containerPort: 80, name: 'http'}]})));
    await ssa('b', deployment('lists', {template: {spec: {containers: [
      {name: 'app', ports: [{containerPort: 80, protocol: 'UDP', name: 'dns'}]},
      {name: 'sidecar', image: 'envoy'},
    ]}}}));
    const after = await getJson('deploy', 'lists');
    const containers = after.spec.template.spec.containers;
    expect(containers.map((c: any) => c.name)).toEqual(['app', 'sidecar']);
    expect(containers[0].image).toBe('nginx:1.27');
    expect(containers[0].ports).toEqual([{containerPort: 80, name: 'http', protocol: 'TCP'}, {containerPort: 80, name: 'dns', protocol: 'UDP'}]);
    expect(managersOf(after)['b/Apply']['f:spec']['f:template']['f:spec']['f:containers']['k:{"name":"app"}']['f:ports'])
      .toEqual({'k:{"containerPort":80,"protocol":"UDP"}': {'.': {}, 'f:containerPort': {}, 'f:name': {}, 'f:protocol': {}}});
  });

  it('--dry-run=server answers the applied object and leaves the store unchanged; kubectl diff shows the change', async () => {
    await ssa('a', deployment('dry', appSpec({replicas: 1})));
    const before = await getJson('deploy', 'dry');
    const dry = await ssa('a', deployment('dry', appSpec({replicas: 4})), '--dry-run=server', '-o', 'jsonpath={.spec.replicas}');
    expect(dry).toMatchObject({code: 0, stdout: '4'});
    const created = await ssa('a', deployment('dry-new', appSpec()), '--dry-run=server');
    expect(created).toMatchObject({code: 0, stdout: 'deployment.apps/dry-new serverside-applied (server dry run)\n'});
    expect(await getJson('deploy', 'dry')).toEqual(before);
    expect((await k(['get', 'deploy', 'dry-new'])).stderr).toContain('NotFound');

    const diff = await k(['diff', '--server-side', '--field-manager=a', '-f', file(deployment('dry', appSpec({replicas: 4})))]);
    expect(diff.code).toBe(1); // kubectl diff: 1 means differences were found
    expect(diff.stdout).toMatch(/^-  replicas: 1$/m);
    expect(diff.stdout).toMatch(/^\+  replicas: 4$/m);
    expect(diff.stdout).not.toContain('managedFields');
    const same = await k(['diff', '--server-side', '--field-manager=a', '-f', file(deployment('dry', appSpec({replicas: 1})))]);
    expect(same).toMatchObject({code: 0, stdout: ''});
    expect(await getJson('deploy', 'dry')).toEqual(before);
  });

  it('applies a custom resource with list types from its CRD schema', async () => {
    const group = 'ssa.example.com';
    const crd = {
      apiVersion: `${names().groups.apiextensions}/v1`,
      kind: 'CustomResourceDefinition',
      metadata: {name: `routes.${group}`},
      spec: {
        group, scope: 'Namespaced', names: {plural: 'routes', singular: 'route', kind: 'Route'},
        versions: [{name: 'v1', served: true, storage: true, schema: {openAPIV3Schema: {type: 'object', properties: {spec: {type: 'object', properties: {
          backends: {type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'],
            items: {type: 'object', properties: {name: {type: 'string'}, weight: {type: 'integer'}}}},
          hosts: {type: 'array', items: {type: 'string'}},
        }}}}}}],
      },
    };
    expect(await k(['apply', '-f', file(crd)])).toMatchObject({code: 0});
    const route = (spec: object) => ({apiVersion: `${group}/v1`, kind: 'Route', metadata: {name: 'r'}, spec});
    expect(await ssa('a', route({backends: [{name: 'x', weight: 1}], hosts: ['a.example']}))).toMatchObject({code: 0, stdout: `route.${group}/r serverside-applied\n`});
    expect(await ssa('b', route({backends: [{name: 'blue', weight: 2}], hosts: ['b.example']}))).toMatchObject({code: 1});
    expect(await ssa('b', route({backends: [{name: 'blue', weight: 2}]}))).toMatchObject({code: 0});
    const after = await getJson('route', 'r');
    // The list map merges by name; the list without a list type stays atomic (and with its applier).
    expect(after.spec).toEqual({backends: [{name: 'x', weight: 1}, {name: 'blue', weight: 2}], hosts: ['a.example']});
    expect(managersOf(after)['a/Apply']['f:spec']).toEqual({'f:backends': {'k:{"name":"x"}': {'.': {}, 'f:name': {}, 'f:weight': {}}}, 'f:hosts': {}});
  });

  it('records kubectl patch and kubectl edit as Update managers, shown with --show-managed-fields only', async () => {
    await ssa('a', deployment('ops', appSpec({replicas: 1})));
    expect(await k(['patch', 'deploy', 'ops', '-p', '{"spec":{"minReadySeconds":3}}'])).toMatchObject({code: 0});
    // kubectl edit runs $KUBE_EDITOR on a temporary file: here sed, which sets replicas to 6.
    const edited = await kubectlWithEnv(['edit', 'deploy', 'ops'], {KUBE_EDITOR: `sed -i -e 's/^  replicas: 1$/  replicas: 6/'`});
    expect(edited).toMatchObject({code: 0, stdout: 'deployment.apps/ops edited\n'});
    const after = await getJson('deploy', 'ops');
    expect(after.spec.replicas).toBe(6);
    const managers = managersOf(after);
    expect(managers['kubectl-patch/Update']).toEqual({'f:spec': {'f:minReadySeconds': {}}});
    expect(managers['kubectl-edit/Update']).toEqual({'f:spec': {'f:replicas': {}}});
    expect(managers['a/Apply']['f:spec']['f:replicas']).toBeUndefined();
    expect(after.metadata.managedFields.find((m: any) => m.manager === 'kubectl-edit')).toMatchObject({operation: 'Update', apiVersion: 'apps/v1'});
    // An apply of the edited field now conflicts with the Update manager.
    const conflict = await ssa('a', deployment('ops', appSpec({replicas: 1})));
    expect(conflict.stderr).toContain('conflict with "kubectl-edit" using apps/v1: .spec.replicas');
    const plain = await k(['get', 'deploy', 'ops', '-o', 'yaml']);
    expect(plain.stdout).not.toContain('managedFields');
    expect((await k(['get', 'deploy', 'ops', '-o', 'yaml', '--show-managed-fields'])).stdout).toContain('manager: kubectl-edit');
  });

  it('a repeated apply is a no-op; kubectl moves a client-side applier to server-side apply without conflicts', async () => {
    await ssa('a', deployment('same', appSpec({replicas: 1})));
    const before = await getJson('deploy', 'same');
    expect(await ssa('a', deployment('same', appSpec({replicas: 1})))).toMatchObject({code: 0});
    expect((await getJson('deploy', 'same')).metadata.resourceVersion).toBe(before.metadata.resourceVersion);

    expect(await k(['apply', '-f', file(deployment('csa', appSpec({replicas: 1})))])).toMatchObject({code: 0, stdout: 'deployment.apps/csa created\n'});
    expect(Object.keys(managersOf(await getJson('deploy', 'csa')))).toEqual(['kubectl-client-side-apply/Update']);
    // kubectl rewrites the client-side applier's entry into its own Apply entry (a JSON patch of
    // managedFields) before it applies, so the change of replicas is not a conflict.
    expect(await k(['apply', '--server-side', '-f', file(deployment('csa', appSpec({replicas: 2})))])).toMatchObject({code: 0});
    const after = await getJson('deploy', 'csa');
    expect(after.spec.replicas).toBe(2);
    // As upstream: kubectl keeps the last-applied annotation under its own applier `kubectl-last-applied`;
    // the server keeps the annotation equal to what kubectl applies.
    expect(Object.keys(managersOf(after)).sort()).toEqual(['kubectl-last-applied/Apply', 'kubectl/Apply']);
    expect(JSON.parse(after.metadata.annotations['kubectl.kubernetes.io/last-applied-configuration']).spec.replicas).toBe(2);
  });

  it('applies to the status subresource: only status changes, owned by an entry with subresource status', async () => {
    await ssa('a', deployment('st', appSpec({replicas: 1})));
    const r = await server.client.request('PATCH', '/apis/apps/v1/namespaces/default/deployments/st/status?fieldManager=ctl', {
      body: JSON.stringify({...deployment('st', {replicas: 9}), status: {observedGeneration: 1, replicas: 1}}), contentType: APPLY,
    });
    expect(r.status).toBe(200);
    expect(r.body.spec.replicas).toBe(1);
    expect(r.body.status).toMatchObject({observedGeneration: 1, replicas: 1});
    expect(r.body.metadata.managedFields.find((m: any) => m.manager === 'ctl')).toMatchObject({
      operation: 'Apply', subresource: 'status', fieldsV1: {'f:status': {'f:observedGeneration': {}, 'f:replicas': {}}},
    });
  });

  it.each([
    ['no fieldManager', '', 'kind: ConfigMap\napiVersion: v1\nmetadata: {name: bad}\n', 422, 'Invalid',
      /^PatchOptions\.meta\.[a-z.]+ "" is invalid: fieldManager: Required value: is required for apply patch$/],
    ['managedFields in the configuration', '?fieldManager=x', 'kind: ConfigMap\napiVersion: v1\nmetadata: {name: bad, managedFields: []}\n', 400, 'BadRequest',
      /^metadata\.managedFields must be nil$/],
    ['no kind', '?fieldManager=x', 'apiVersion: v1\nmetadata: {name: bad}\n', 400, 'BadRequest', /^Object 'Kind' is missing in/],
    ['not YAML', '?fieldManager=x', 'kind: [\n', 400, 'BadRequest', /^error decoding YAML: /],
    ['duplicate list-map keys', '?fieldManager=x', 'kind: Pod\napiVersion: v1\nmetadata: {name: bad}\nspec: {containers: [{name: a, image: x}, {name: a, image: y}]}\n', 400, 'BadRequest',
      /^failed to create typed patch object \(default\/bad; \/v1, Kind=Pod\): \.spec\.containers: duplicate entries for key \[name="a"\]$/],
    ['another name than the URL', '?fieldManager=x', 'kind: ConfigMap\napiVersion: v1\nmetadata: {name: other}\n', 400, 'BadRequest',
      /^the name of the object \(other\) does not match the name on the URL \(bad\)$/],
  ])('rejects an apply with %s (and stores nothing)', async (_name, query, body, code, reason, message) => {
    const resource = body.includes('kind: Pod') ? 'pods' : 'configmaps';
    const r = await server.client.request('PATCH', `/api/v1/namespaces/default/${resource}/bad${query}`, {body, contentType: APPLY});
    expect(r.status).toBe(code);
    expect(r.body.reason).toBe(reason);
    expect(r.body.message).toMatch(message);
    expect((await server.client.request('GET', `/api/v1/namespaces/default/${resource}/bad`)).status).toBe(404);
  });
});
