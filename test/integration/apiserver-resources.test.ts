/**
 * Every built-in resource through real kubectl, against one in-process API server (RBAC on) with
 * upstream's name set, so kubectl's typed commands (certificate approve, auth can-i, auth whoami,
 * create ingress/pdb) reach the groups they hard-code: for each group, one object through
 * create/get/list/watch/update/patch/delete; every other kind created, listed and deleted;
 * upstream's printer columns; eviction against a PodDisruptionBudget; CSR approval; access and
 * self reviews; HPA autoscaling/v1 <-> v2 round trip; componentstatuses; `kubectl api-resources`.
 *
 * The name set is chosen before the server's modules load (they read it when they start), hence
 * the dynamic imports.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {createServer, type Server} from 'node:http';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {selectNames} from '../../src/api/names.js';

const n = selectNames('kubernetes');
const g = n.groups;

type Helpers = typeof import('../helpers/apiserver.js');
let helpers: Helpers;
let server: Awaited<ReturnType<Helpers['startApiServer']>>;
let dir: string;
let rbacGroup: string;

const k = (args: string[], input?: string) => helpers.kubectl(server.orchconfigPath, args, {input});
const manifest = (name: string, ...objects: object[]) => {
  const path = join(dir, name);
  writeFileSync(path, objects.map((o) => JSON.stringify(o)).join('\n'));
  return path;
};
const ok = async (args: string[], input?: string) => {
  const r = await k(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
};
const getJson = async (args: string[]) => JSON.parse(await ok(['get', ...args, '-o', 'json']));
const header = (table: string) => table.split('\n')[0]!.trim().split(/\s{2,}/);

const meta = (name: string, namespaced = false) => ({name, ...(namespaced ? {namespace: 'default'} : {})});

/** One object per group: [group label, kubectl resource, manifest, what a replace changes]. */
function groupCases(): [string, string, Record<string, any>, (o: Record<string, any>) => void][] {
  return [
    ['core', 'limitranges', {apiVersion: 'v1', kind: 'LimitRange', metadata: meta('lr', true), spec: {limits: [{type: 'Container', max: {cpu: '1'}}]}},
      (o) => (o.spec.limits[0].max.cpu = '2')],
    ['apps', 'controllerrevisions.apps', {apiVersion: 'apps/v1', kind: 'ControllerRevision', metadata: meta('rev-1', true), revision: 1, data: {a: 1}},
      (o) => (o.data = {a: 2})],
    ['autoscaling', 'horizontalpodautoscalers.v2.autoscaling', {
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('hpa', true),
      spec: {scaleTargetRef: {apiVersion: 'apps/v1', kind: 'Deployment', name: 'web'}, maxReplicas: 5},
    }, (o) => (o.spec.maxReplicas = 7)],
    ['policy', 'poddisruptionbudgets.policy', {apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('crud-pdb', true), spec: {minAvailable: 1, selector: {matchLabels: {app: 'nothing'}}}},
      (o) => (o.spec.minAvailable = 2)],
    ['networking', `ingresses.${g.networking}`, {
      apiVersion: `${g.networking}/v1`, kind: 'Ingress', metadata: meta('ing', true),
      spec: {rules: [{host: 'a.example.com', http: {paths: [{path: '/', pathType: 'Prefix', backend: {service: {name: 'web', port: {number: 80}}}}]}}]},
    }, (o) => (o.spec.rules[0].host = 'b.example.com')],
    ['storage', `storageclasses.${g.storage}`, {apiVersion: `${g.storage}/v1`, kind: 'StorageClass', metadata: meta('fast'), provisioner: 'example.com/disk', parameters: {a: '1'}},
      (o) => (o.allowVolumeExpansion = true)],
    ['certificates', `clustertrustbundles.${g.certificates}`, {apiVersion: `${g.certificates}/v1beta1`, kind: 'ClusterTrustBundle', metadata: meta('bundle'), spec: {trustBundle: 'pem-1'}},
      (o) => (o.spec.trustBundle = 'pem-2')],
    ['admissionregistration', `validatingwebhookconfigurations.${g.admissionregistration}`, {
      apiVersion: `${g.admissionregistration}/v1`, kind: 'ValidatingWebhookConfiguration', metadata: meta('vwc'),
      webhooks: [{name: 'check.example.com', sideEffects: 'None', admissionReviewVersions: ['v1'], clientConfig: {url: 'https://127.0.0.1:1/validate'}, rules: [{apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps']}]}],
    }, (o) => (o.webhooks[0].timeoutSeconds = 5)],
    ['flowcontrol', `flowschemas.${g.flowcontrol}`, {apiVersion: `${g.flowcontrol}/v1`, kind: 'FlowSchema', metadata: meta('fs'), spec: {priorityLevelConfiguration: {name: 'global-default'}}},
      (o) => (o.spec.matchingPrecedence = 500)],
    ['node', `runtimeclasses.${g.node}`, {apiVersion: `${g.node}/v1`, kind: 'RuntimeClass', metadata: meta('native'), handler: 'runc'}, (o) => (o.scheduling = {nodeSelector: {a: 'b'}})],
    ['events', `events.${g.events}`, {
      apiVersion: `${g.events}/v1`, kind: 'Event', metadata: meta('ev1', true), eventTime: '2026-01-01T00:00:00.000000Z', reportingController: 'test', reportingInstance: 'test-1',
      action: 'Tested', reason: 'Testing', type: 'Normal', regarding: {kind: 'Pod', name: 'p', namespace: 'default'}, note: 'first',
    }, (o) => (o.note = 'second')],
    ['apiregistration', `apiservices.${g.apiregistration}`, {
      apiVersion: `${g.apiregistration}/v1`, kind: 'APIService', metadata: meta('v1.example.com'), spec: {group: 'example.com', version: 'v1', groupPriorityMinimum: 100, versionPriority: 10},
    }, (o) => (o.spec.versionPriority = 20)],
    ['resource', `deviceclasses.${g.resource}`, {apiVersion: `${g.resource}/v1`, kind: 'DeviceClass', metadata: meta('gpu'), spec: {selectors: []}},
      (o) => (o.spec.selectors = [{cel: {expression: 'true'}}])],
    ['coordination', `leasecandidates.${g.coordination}`, {
      apiVersion: `${g.coordination}/v1beta1`, kind: 'LeaseCandidate', metadata: meta('cand', true), spec: {leaseName: 'l', binaryVersion: '1.34.0', strategy: 'OldestEmulationVersion'},
    }, (o) => (o.spec.binaryVersion = '1.34.1')],
  ];
}

/** Every other kind of the catalog: created, listed and deleted in one go. */
function otherObjects(): Record<string, any>[] {
  const ns = (name: string) => meta(name, true);
  return [
    {apiVersion: 'v1', kind: 'ResourceQuota', metadata: ns('quota'), spec: {hard: {pods: '10', 'limits.cpu': '4'}}},
    {apiVersion: 'v1', kind: 'PersistentVolume', metadata: meta('pv1'), spec: {capacity: {storage: '1Gi'}, accessModes: ['ReadWriteOnce'], hostPath: {path: '/tmp/pv1'}, storageClassName: 'fast'}},
    {apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: ns('claim'), spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '1Gi'}}}},
    {apiVersion: 'v1', kind: 'PodTemplate', metadata: ns('tmpl'), template: {metadata: {labels: {app: 'x'}}, spec: {containers: [{name: 'c', image: 'busybox'}]}}},
    {apiVersion: `${g.networking}/v1`, kind: 'IngressClass', metadata: meta('nginx'), spec: {controller: 'example.com/ingress'}},
    {apiVersion: `${g.networking}/v1`, kind: 'NetworkPolicy', metadata: ns('deny'), spec: {podSelector: {matchLabels: {app: 'db'}}}},
    {apiVersion: `${g.networking}/v1`, kind: 'IPAddress', metadata: meta('10.96.0.10'), spec: {parentRef: {resource: 'services', namespace: 'default', name: 'dns'}}},
    {apiVersion: `${g.networking}/v1`, kind: 'ServiceCIDR', metadata: meta('extra'), spec: {cidrs: ['10.100.0.0/16']}},
    {apiVersion: `${g.storage}/v1`, kind: 'CSIDriver', metadata: meta('disk.example.com'), spec: {}},
    {apiVersion: `${g.storage}/v1`, kind: 'CSINode', metadata: meta('node-1'), spec: {drivers: [{name: 'disk.example.com', nodeID: 'n1'}]}},
    {apiVersion: `${g.storage}/v1`, kind: 'CSIStorageCapacity', metadata: ns('cap'), storageClassName: 'fast', capacity: '10Gi'},
    {apiVersion: `${g.storage}/v1`, kind: 'VolumeAttachment', metadata: meta('va'), spec: {attacher: 'disk.example.com', nodeName: 'node-1', source: {persistentVolumeName: 'pv1'}}},
    {apiVersion: `${g.storage}/v1`, kind: 'VolumeAttributesClass', metadata: meta('gold'), driverName: 'disk.example.com', parameters: {iops: '100'}},
    {apiVersion: `${g.admissionregistration}/v1`, kind: 'MutatingWebhookConfiguration', metadata: meta('mwc'),
      webhooks: [{name: 'mutate.example.com', sideEffects: 'None', admissionReviewVersions: ['v1'], clientConfig: {url: 'https://127.0.0.1:1/mutate'}}]},
    {apiVersion: `${g.admissionregistration}/v1`, kind: 'ValidatingAdmissionPolicy', metadata: meta('vap'),
      spec: {matchConstraints: {resourceRules: [{apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE'], resources: ['deployments']}]}, validations: [{expression: 'object.spec.replicas <= 5'}]}},
    {apiVersion: `${g.admissionregistration}/v1`, kind: 'ValidatingAdmissionPolicyBinding', metadata: meta('vapb'), spec: {policyName: 'vap', validationActions: ['Deny']}},
    {apiVersion: `${g.admissionregistration}/v1beta1`, kind: 'MutatingAdmissionPolicy', metadata: meta('map'),
      spec: {matchConstraints: {resourceRules: [{apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods']}]}, mutations: [{patchType: 'ApplyConfiguration', applyConfiguration: {expression: 'Object{}'}}]}},
    {apiVersion: `${g.admissionregistration}/v1beta1`, kind: 'MutatingAdmissionPolicyBinding', metadata: meta('mapb'), spec: {policyName: 'map'}},
    {apiVersion: `${g.flowcontrol}/v1`, kind: 'PriorityLevelConfiguration', metadata: meta('plc'), spec: {type: 'Limited', limited: {limitResponse: {type: 'Queue', queuing: {}}}}},
    {apiVersion: `${g.resource}/v1`, kind: 'ResourceClaim', metadata: ns('claim-1'), spec: {devices: {requests: [{name: 'gpu', exactly: {deviceClassName: 'gpu'}}]}}},
    {apiVersion: `${g.resource}/v1`, kind: 'ResourceClaimTemplate', metadata: ns('claim-tmpl'), spec: {spec: {devices: {requests: [{name: 'gpu', exactly: {deviceClassName: 'gpu'}}]}}}},
    {apiVersion: `${g.resource}/v1`, kind: 'ResourceSlice', metadata: meta('slice'), spec: {driver: 'gpu.example.com', pool: {name: 'p', generation: 1, resourceSliceCount: 1}, nodeName: 'node-1', devices: []}},
  ];
}

beforeAll(async () => {
  helpers = await import('../helpers/apiserver.js');
  rbacGroup = g.rbac;
  dir = mkdtempSync(join(tmpdir(), 'orch-resources-'));
  server = await helpers.startApiServer({engine: 'sqlite', config: {authorizationModes: ['RBAC'], ...helpers.betaApisConfig()}});
}, 60_000);

afterAll(async () => {
  await server?.stop();
  if (dir) rmSync(dir, {recursive: true, force: true});
  selectNames('orch');
});

describe('every group through kubectl', () => {
  // Concurrent: one group's objects never touch another's, and kubectl's start-up dominates each step.
  it.concurrent.each(groupCases())('%s: create, get, list, watch, patch, update and delete %s', async (_group, resource, object, change) => {
    const name = object.metadata.name as string;
    const created = await ok(['create', '-f', manifest(`${name}.json`, object)]);
    expect(created).toMatch(/ created\n$/);
    const got = await getJson([resource, name]);
    expect(got).toMatchObject({kind: object.kind, apiVersion: object.apiVersion, metadata: {name}});
    expect(got.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(await ok(['get', resource, '-o', 'name'])).toContain(`/${name}\n`);

    const watch = helpers.kubectlStream(server.orchconfigPath, ['get', resource, name, '-w', '--output-watch-events']);
    try {
      await watch.waitFor(/ADDED\s/);
      expect(await ok(['label', resource, name, 'tier=gold'])).toMatch(/ labeled\n$/);
      await watch.waitFor(/MODIFIED\s/);
    } finally {
      await watch.stop();
    }
    const labeled = await getJson([resource, name]);
    expect(labeled.metadata.labels).toEqual({tier: 'gold'});

    change(labeled);
    // (replace -o json prints what the server stored.)
    const replaced = JSON.parse(await ok(['replace', '-f', manifest(`${name}-changed.json`, labeled), '-o', 'json']));
    const expected = JSON.parse(JSON.stringify(labeled));
    delete expected.metadata;
    expect(replaced).toMatchObject(expected);
    expect(Number(replaced.metadata.resourceVersion)).toBeGreaterThan(Number(labeled.metadata.resourceVersion));

    expect(await ok(['delete', resource, name])).toMatch(/ deleted\n$/);
    const gone = await k(['get', resource, name]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('NotFound');
  });

  it('creates, lists and deletes every other kind of the catalog', async () => {
    const objects = otherObjects();
    const file = manifest('others.json', ...objects);
    const created = (await ok(['create', '-f', file])).trim().split('\n');
    expect(created).toHaveLength(objects.length);
    for (const line of created) expect(line).toMatch(/ created$/);
    const kinds = objects.map((o) => {
      const group = String(o.apiVersion).includes('/') ? String(o.apiVersion).split('/')[0] : '';
      return `${o.kind.toLowerCase()}${group ? `.${group}` : ''}`;
    });
    // One kubectl call lists them all (kind by kind, as `kubectl get a,b,c` does).
    const listed = await getJson([kinds.join(',')]);
    const seen = listed.items.map((i: any) => `${i.kind}/${i.metadata.name}`);
    expect(seen).toEqual(expect.arrayContaining(objects.map((o) => `${o.kind}/${o.metadata.name}`)));
    // No controller manager runs here, so nothing removes the protection finalizers the default
    // StorageObjectInUseProtection admission plugin put on the claim and the volume: kubectl's
    // delete would wait for them forever. Delete without waiting, see both left terminating with
    // their finalizer, and remove it as an administrator of such a server would.
    const deleted = (await ok(['delete', '-f', file, '--wait=false'])).trim().split('\n');
    expect(deleted).toHaveLength(objects.length);
    const protectedObjects: [string, string, string][] = [
      ['persistentvolumeclaim', 'claim', `${n.labelDomain}/pvc-protection`],
      ['persistentvolume', 'pv1', `${n.labelDomain}/pv-protection`],
    ];
    for (const [resource, name, finalizer] of protectedObjects) {
      const terminating = await getJson(['-n', 'default', resource, name]);
      expect(terminating.metadata.deletionTimestamp).toBeDefined();
      expect(terminating.metadata.finalizers).toEqual([finalizer]);
      await ok(['-n', 'default', 'patch', resource, name, '--type=merge', '-p', '{"metadata":{"finalizers":null}}']);
    }
    const ours = new Set(objects.map((o) => `${o.kind}/${o.metadata.name}`));
    const left = (await getJson([kinds.join(',')])).items.map((i: any) => `${i.kind}/${i.metadata.name}`);
    expect(left.filter((object: string) => ours.has(object))).toEqual([]);
  });

  it('refuses to change what upstream keeps immutable', async () => {
    const sc = {apiVersion: `${g.storage}/v1`, kind: 'StorageClass', metadata: meta('frozen'), provisioner: 'example.com/disk', parameters: {a: '1'}};
    await ok(['create', '-f', manifest('frozen.json', sc)]);
    const changed = await k(['replace', '-f', manifest('frozen-changed.json', {...sc, parameters: {a: '2'}, provisioner: 'example.com/other'})]);
    expect(changed.code).toBe(1);
    expect(changed.stderr).toContain('parameters: Forbidden: updates to parameters are forbidden.');
    expect(changed.stderr).toContain('provisioner: Forbidden: updates to provisioner are forbidden.');
    expect((await getJson([`storageclass.${g.storage}`, 'frozen'])).parameters).toEqual({a: '1'});

    const rc = {apiVersion: `${g.node}/v1`, kind: 'RuntimeClass', metadata: meta('frozen-rc'), handler: 'runc'};
    await ok(['create', '-f', manifest('frozen-rc.json', rc)]);
    const handler = await k(['replace', '-f', manifest('frozen-rc2.json', {...rc, handler: 'crun'})]);
    expect(handler.stderr).toContain('handler: Invalid value: "crun": field is immutable');
  });

  it.each([
    ['a volume without a source', {apiVersion: 'v1', kind: 'PersistentVolume', metadata: meta('no-source'), spec: {capacity: {storage: '1Gi'}, accessModes: ['ReadWriteOnce']}},
      'spec: Required value: must specify a volume type'],
    ['an HPA metric without its source', {apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('no-metric', true), spec: {scaleTargetRef: {kind: 'Deployment', name: 'x'}, maxReplicas: 2, metrics: [{type: 'Resource'}]}},
      'spec.metrics[0].resource: Required value: must populate information for the given metric source'],
    ['a PDB with both bounds', {apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('both', true), spec: {minAvailable: 1, maxUnavailable: 1}},
      'minAvailable and maxUnavailable cannot be both set'],
  ])('refuses %s with upstream\'s 422, storing nothing', async (_what, object, message) => {
    const r = await k(['create', '-f', manifest(`bad-${object.metadata.name}.json`, object)]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is invalid');
    expect(r.stderr).toContain(message);
    const group = String(object.apiVersion).includes('/') ? `.${String(object.apiVersion).split('/')[0]}` : '';
    expect((await k(['get', `${object.kind.toLowerCase()}${group}`, object.metadata.name])).stderr).toContain('NotFound');
  });

  it('creates objects with kubectl generator commands, which send protobuf', async () => {
    expect(await ok(['create', 'ingress', 'gen-ing', '--class=nginx', '--rule=foo.com/bar*=svc:8080,tls=cert'])).toBe(`ingress.${g.networking}/gen-ing created\n`);
    expect((await getJson([`ingress.${g.networking}`, 'gen-ing'])).spec).toEqual({
      ingressClassName: 'nginx', tls: [{hosts: ['foo.com'], secretName: 'cert'}],
      rules: [{host: 'foo.com', http: {paths: [{path: '/bar', pathType: 'Prefix', backend: {service: {name: 'svc', port: {number: 8080}}}}]}}],
    });
    expect(await ok(['create', 'poddisruptionbudget', 'gen-pdb', '--selector=app=x', '--max-unavailable=50%'])).toBe('poddisruptionbudget.policy/gen-pdb created\n');
    expect((await getJson(['pdb', 'gen-pdb'])).spec).toEqual({maxUnavailable: '50%', selector: {matchLabels: {app: 'x'}}});
    expect(await ok(['create', 'quota', 'gen-quota', '--hard=pods=2,limits.cpu=1'])).toBe('resourcequota/gen-quota created\n');
    expect(await ok(['create', 'priorityclass', 'gen-pc', '--value=100', '--preemption-policy=Never'])).toBe(`priorityclass.${g.scheduling}/gen-pc created\n`);
    expect(await getJson(['priorityclass', 'gen-pc'])).toMatchObject({value: 100, preemptionPolicy: 'Never'});
    await ok(['create', 'deployment', 'gen-web', '--image=nginx']);
    expect(await ok(['autoscale', 'deployment', 'gen-web', '--max=4', '--cpu-percent=55'])).toBe('horizontalpodautoscaler.autoscaling/gen-web autoscaled\n');
    expect((await getJson(['hpa', 'gen-web'])).spec.metrics).toEqual([{type: 'Resource', resource: {name: 'cpu', target: {type: 'Utilization', averageUtilization: 55}}}]);
    expect((await getJson(['quota', 'gen-quota'])).spec.hard).toEqual({pods: '2', 'limits.cpu': '1'});
  });

  it('answers `kubectl api-resources` with every built-in resource', async () => {
    const out = await ok(['api-resources', '--no-headers']);
    const lines = out.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(68);
    const names = lines.map((l) => l.split(/\s+/)[0]);
    for (const plural of ['limitranges', 'resourcequotas', 'persistentvolumes', 'persistentvolumeclaims', 'podtemplates', 'componentstatuses', 'controllerrevisions',
      'horizontalpodautoscalers', 'poddisruptionbudgets', 'ingresses', 'ingressclasses', 'networkpolicies', 'ipaddresses', 'servicecidrs', 'storageclasses', 'csidrivers',
      'csinodes', 'csistoragecapacities', 'volumeattachments', 'volumeattributesclasses', 'certificatesigningrequests', 'clustertrustbundles',
      'mutatingwebhookconfigurations', 'validatingwebhookconfigurations', 'validatingadmissionpolicies', 'validatingadmissionpolicybindings', 'mutatingadmissionpolicies',
      'tokenreviews', 'selfsubjectreviews', 'selfsubjectaccessreviews', 'subjectaccessreviews', 'localsubjectaccessreviews', 'selfsubjectrulesreviews', 'flowschemas',
      'prioritylevelconfigurations', 'runtimeclasses', 'apiservices', 'deviceclasses', 'resourceclaims', 'resourceclaimtemplates', 'resourceslices', 'leasecandidates']) {
      expect(names).toContain(plural);
    }
    expect(out).toMatch(/^horizontalpodautoscalers\s+hpa\s+autoscaling\/v2\s+true\s+HorizontalPodAutoscaler$/m);
    expect(out).toMatch(new RegExp(`^events\\s+ev\\s+${g.events.replace(/\./g, '\\.')}/v1\\s+true\\s+Event$`, 'm'));
  });
});

describe('printer columns', () => {
  it.each([
    ['pdb', ['NAME', 'MIN AVAILABLE', 'MAX UNAVAILABLE', 'ALLOWED DISRUPTIONS', 'AGE'],
      {apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: meta('cols-pdb', true), spec: {maxUnavailable: '25%', selector: {matchLabels: {a: 'b'}}}},
      /cols-pdb\s+N\/A\s+25%\s+0\s+\d+s/],
    ['ingress', ['NAME', 'CLASS', 'HOSTS', 'ADDRESS', 'PORTS', 'AGE'],
      {apiVersion: `${g.networking}/v1`, kind: 'Ingress', metadata: meta('cols-ing', true), spec: {ingressClassName: 'nginx', tls: [{hosts: ['x.example.com']}], rules: [{host: 'x.example.com'}]}},
      /cols-ing\s+nginx\s+x\.example\.com\s+80, 443\s+\d+s/],
    ['pv', ['NAME', 'CAPACITY', 'ACCESS MODES', 'RECLAIM POLICY', 'STATUS', 'CLAIM', 'STORAGECLASS', 'VOLUMEATTRIBUTESCLASS', 'REASON', 'AGE'],
      {apiVersion: 'v1', kind: 'PersistentVolume', metadata: meta('cols-pv'), spec: {capacity: {storage: '5Gi'}, accessModes: ['ReadWriteOnce', 'ReadOnlyMany'], hostPath: {path: '/tmp/x'}}},
      /cols-pv\s+5Gi\s+RWO,ROX\s+Retain\s+Pending\s+<unset>\s+\d+s/],
    ['hpa', ['NAME', 'REFERENCE', 'TARGETS', 'MINPODS', 'MAXPODS', 'REPLICAS', 'AGE'],
      {apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('cols-hpa', true), spec: {scaleTargetRef: {apiVersion: 'apps/v1', kind: 'Deployment', name: 'web'}, maxReplicas: 3}},
      /cols-hpa\s+Deployment\/web\s+cpu: <unknown>\/80%\s+1\s+3\s+0\s+\d+s/],
    ['sc', ['NAME', 'PROVISIONER', 'RECLAIMPOLICY', 'VOLUMEBINDINGMODE', 'ALLOWVOLUMEEXPANSION', 'AGE'],
      {apiVersion: `${g.storage}/v1`, kind: 'StorageClass', metadata: {name: 'cols-sc', annotations: {[`storageclass.${n.labelDomain}/is-default-class`]: 'true'}}, provisioner: 'example.com/x'},
      /cols-sc \(default\)\s+example\.com\/x\s+Delete\s+Immediate\s+false\s+\d+s/],
  ])('kubectl get %s prints upstream\'s columns', async (resource, columns, object, row) => {
    await ok(['create', '-f', manifest(`${object.metadata.name}.json`, object)]);
    const table = await ok(['get', resource, object.metadata.name as string]);
    expect(header(table)).toEqual(columns);
    expect(table).toMatch(row as RegExp);
  });

  it('prints the wide columns of persistent volume claims', async () => {
    await ok(['create', '-f', manifest('cols-pvc.json', {apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: meta('cols-pvc', true), spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '1Gi'}}, storageClassName: 'fast'}})]);
    const table = await ok(['get', 'pvc', 'cols-pvc', '-o', 'wide']);
    expect(header(table)).toEqual(['NAME', 'STATUS', 'VOLUME', 'CAPACITY', 'ACCESS MODES', 'STORAGECLASS', 'VOLUMEATTRIBUTESCLASS', 'AGE', 'VOLUMEMODE']);
    expect(table).toMatch(/cols-pvc\s+Pending\s+fast\s+<unset>\s+\d+s\s+Filesystem/);
  });

  it('registers every built-in group version as a local APIService, as upstream\'s autoregister does', async () => {
    const table = await ok(['get', 'apiservices']);
    expect(header(table)).toEqual(['NAME', 'SERVICE', 'AVAILABLE', 'AGE']);
    for (const name of ['v1.', 'v2.autoscaling', 'v1.autoscaling', `v1.${g.networking}`, `v1beta1.${g.certificates}`]) {
      expect(table).toMatch(new RegExp(`^${name.replace(/\./g, '\\.')}\\s+Local\\s+True\\s`, 'm'));
    }
    expect((await getJson([`apiservice.${g.apiregistration}`, 'v2.autoscaling'])).spec).toEqual({group: 'autoscaling', version: 'v2', groupPriorityMinimum: 17500, versionPriority: 30});
  });

  it('computes componentstatuses on read: the store is healthy, an absent controller manager is not', async () => {
    const table = await ok(['get', 'componentstatuses']);
    expect(header(table)).toEqual(['NAME', 'STATUS', 'MESSAGE', 'ERROR']);
    expect(table).toMatch(/sqlite-0\s+Healthy\s+ok/);
    expect(table).toMatch(/controller-manager\s+Unhealthy\s+Get "https:\/\/127\.0\.0\.1:10257\/healthz"/);
  });
});

describe('subresources and reviews', () => {
  it('evicts a pod only as its PodDisruptionBudget allows, and takes one disruption', async () => {
    await ok(['create', '-f', manifest('evict.json',
      {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'guarded', labels: {app: 'guarded'}}, spec: {containers: [{name: 'c', image: 'busybox'}]}},
      {apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: {name: 'guard'}, spec: {minAvailable: 1, selector: {matchLabels: {app: 'guarded'}}}})]);
    await ok(['patch', 'pod', 'guarded', '--subresource=status', '--type=merge', '-p', '{"status":{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}}']);
    const early = JSON.stringify({apiVersion: 'policy/v1', kind: 'Eviction', metadata: {name: 'guarded', namespace: 'default'}});
    // No disruption controller has looked at the budget yet (observedGeneration < generation): refused too.
    const unprocessed = await server.client.post('/api/v1/namespaces/default/pods/guarded/eviction', JSON.parse(early));
    expect(unprocessed.status).toBe(429);
    expect(unprocessed.body.details.causes[0].message).toBe('The disruption budget guard is still being processed by the server.');
    const budgetStatus = (allowed: number) => JSON.stringify({status: {observedGeneration: 1, disruptionsAllowed: allowed, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1}});
    await ok(['patch', 'pdb', 'guard', '--subresource=status', '--type=merge', '-p', budgetStatus(0)]);
    const eviction = JSON.stringify({apiVersion: 'policy/v1', kind: 'Eviction', metadata: {name: 'guarded', namespace: 'default'}});

    const refused = await k(['create', '--raw', '/api/v1/namespaces/default/pods/guarded/eviction', '-f', '-'], eviction);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("Cannot evict pod as it would violate the pod's disruption budget.");
    const rawRefusal = await server.client.post('/api/v1/namespaces/default/pods/guarded/eviction', JSON.parse(eviction));
    expect(rawRefusal.status).toBe(429);
    expect(rawRefusal.body.details.causes).toEqual([{reason: 'DisruptionBudget', message: 'The disruption budget guard needs 1 healthy pods and has 1 currently'}]);
    expect((await getJson(['pod', 'guarded'])).metadata.name).toBe('guarded');

    await ok(['patch', 'pdb', 'guard', '--subresource=status', '--type=merge', '-p', budgetStatus(1)]);
    const allowed = await server.client.post('/api/v1/namespaces/default/pods/guarded/eviction', JSON.parse(eviction));
    expect(allowed.status).toBe(201);
    expect(allowed.body).toMatchObject({kind: 'Status', status: 'Success'});
    expect((await k(['get', 'pod', 'guarded'])).stderr).toContain('NotFound');
    const budget = await getJson(['pdb', 'guard']);
    expect(budget.status.disruptionsAllowed).toBe(0);
    expect(Object.keys(budget.status.disruptedPods)).toEqual(['guarded']);
  });

  it('approves a CertificateSigningRequest with `kubectl certificate approve`, through /approval only', async () => {
    const x509 = await (await import('../../src/daemons/shared/pki/x509-lib.js')).loadX509();
    const {webcrypto} = await import('node:crypto');
    const keys = await webcrypto.subtle.generateKey({name: 'ECDSA', namedCurve: 'P-256'}, true, ['sign', 'verify']);
    const request = await x509.Pkcs10CertificateRequestGenerator.create({name: 'CN=jane', keys, signingAlgorithm: {name: 'ECDSA', hash: 'SHA-256'}});
    const csr = {
      apiVersion: `${g.certificates}/v1`, kind: 'CertificateSigningRequest', metadata: {name: 'jane'},
      spec: {request: Buffer.from(request.toString('pem')).toString('base64'), signerName: n.signers.apiserverClient, usages: ['client auth'], username: 'someone-else', expirationSeconds: 3600},
    };
    await ok(['create', '-f', manifest('csr.json', csr)]);
    const pending = await ok(['get', 'csr', 'jane']);
    expect(header(pending)).toEqual(['NAME', 'AGE', 'SIGNERNAME', 'REQUESTOR', 'REQUESTEDDURATION', 'CONDITION']);
    // The requester is who sent it (the admin's certificate), not what the body claims.
    expect(pending).toMatch(new RegExp(`jane\\s+\\d+s\\s+${n.signers.apiserverClient.replace(/[./]/g, '\\$&')}\\s+\\S+\\s+60m\\s+Pending`));
    expect(pending).not.toContain('someone-else');

    expect(await ok(['certificate', 'approve', 'jane'])).toBe('certificatesigningrequest.certificates.k8s.io/jane approved\n');
    const approved = await getJson(['csr', 'jane']);
    expect(approved.status.conditions).toEqual([expect.objectContaining({type: 'Approved', status: 'True', reason: 'KubectlApprove'})]);
    expect(await ok(['get', 'csr', 'jane', '--no-headers'])).toMatch(/Approved\n$/);
    // Approval cannot be taken back, and a main-resource update leaves the status alone.
    // (kubectl refuses to deny an approved request itself; the server refuses it too.)
    const denied = {...approved, status: {conditions: [...approved.status.conditions, {type: 'Denied', status: 'True', reason: 'Changed'}]}};
    const deny = await server.client.put(`/apis/${g.certificates}/v1/certificatesigningrequests/jane/approval`, denied);
    expect(deny.status).toBe(422);
    expect(deny.body.message).toContain('Approved and Denied conditions are mutually exclusive');
    const unapprove = await server.client.put(`/apis/${g.certificates}/v1/certificatesigningrequests/jane/approval`, {...approved, status: {}});
    expect(unapprove.body.message).toContain('updates may not remove a condition of type "Approved"');
    await ok(['label', 'csr', 'jane', 'seen=yes']);
    await ok(['patch', 'csr', 'jane', '--type=merge', '-p', '{"spec":{"usages":["server auth"]},"status":{"conditions":[]}}']);
    const after = await getJson(['csr', 'jane']);
    expect(after.metadata.labels).toEqual({seen: 'yes'});
    expect(after.spec.usages).toEqual(['client auth']);
    expect(after.status.conditions[0].type).toBe('Approved');
  });

  it('answers `kubectl auth whoami` and `kubectl auth can-i` from the requesting user and RBAC', async () => {
    const whoami = await ok(['auth', 'whoami', '-o', 'json']);
    expect(JSON.parse(whoami)).toMatchObject({kind: 'SelfSubjectReview', status: {userInfo: {username: expect.any(String), groups: expect.arrayContaining(['system:masters'])}}});
    expect(await ok(['auth', 'can-i', 'create', 'deployments'])).toBe('yes\n');

    await ok(['create', '-f', manifest('rbac.json',
      {apiVersion: `${rbacGroup}/v1`, kind: 'Role', metadata: {name: 'pod-reader', namespace: 'default'}, rules: [{apiGroups: [''], resources: ['pods'], verbs: ['get', 'list']}]},
      {apiVersion: `${rbacGroup}/v1`, kind: 'RoleBinding', metadata: {name: 'jane-reads', namespace: 'default'}, roleRef: {apiGroup: rbacGroup, kind: 'Role', name: 'pod-reader'}, subjects: [{kind: 'User', name: 'jane', apiGroup: rbacGroup}]})]);
    await helpers.sleep(300); // the RBAC informer applies the binding
    expect(await ok(['auth', 'can-i', 'list', 'pods', '--as', 'jane'])).toBe('yes\n');
    const denied = await k(['auth', 'can-i', 'delete', 'pods', '--as', 'jane']);
    expect(denied).toMatchObject({code: 1, stdout: 'no\n'});
    expect((await k(['auth', 'can-i', 'list', 'pods', '--as', 'jane', '-n', 'kube-other'])).stdout).toBe('no\n');
    const list = await ok(['auth', 'can-i', '--list', '--as', 'jane']);
    expect(list).toMatch(/^pods\s+\[\]\s+\[\]\s+\[get list\]$/m);

    const sar = await server.client.post(`/apis/${g.authorization}/v1/subjectaccessreviews`, {
      apiVersion: `${g.authorization}/v1`, kind: 'SubjectAccessReview', spec: {user: 'jane', resourceAttributes: {namespace: 'default', verb: 'get', resource: 'pods'}},
    });
    expect(sar.status).toBe(201);
    expect(sar.body.status).toEqual({allowed: true});
    const bad = await server.client.post(`/apis/${g.authorization}/v1/subjectaccessreviews`, {apiVersion: `${g.authorization}/v1`, kind: 'SubjectAccessReview', spec: {user: 'jane'}});
    expect(bad.status).toBe(422);
    expect(bad.body.message).toContain('exactly one of nonResourceAttributes or resourceAttributes must be specified');
    // Reviews are not stored: nothing to list.
    expect((await server.client.get(`/apis/${g.authorization}/v1/subjectaccessreviews`)).status).toBe(405);
  });

  it('answers TokenReview and serviceaccounts/token (kubectl create token), not 404', async () => {
    const review = await server.client.post(`/apis/${g.authentication}/v1/tokenreviews`, {apiVersion: `${g.authentication}/v1`, kind: 'TokenReview', spec: {token: 'x'}});
    expect(review.status).toBe(201);
    expect(review.body.status.authenticated).toBe(false);
    await ok(['create', 'serviceaccount', 'robot']);
    const token = await k(['create', 'token', 'robot']);
    expect(token.stderr).toBe('');
    expect(token.stdout.split('.')).toHaveLength(3);
  });

  it('round-trips an HPA between autoscaling/v2 and v1 without losing what v1 cannot say', async () => {
    const hpa = {
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: meta('trip', true),
      spec: {
        scaleTargetRef: {apiVersion: 'apps/v1', kind: 'Deployment', name: 'web'}, minReplicas: 2, maxReplicas: 10,
        metrics: [
          {type: 'Resource', resource: {name: 'memory', target: {type: 'AverageValue', averageValue: '500Mi'}}},
          {type: 'Resource', resource: {name: 'cpu', target: {type: 'Utilization', averageUtilization: 60}}},
        ],
        behavior: {scaleDown: {stabilizationWindowSeconds: 120}},
      },
    };
    await ok(['create', '-f', manifest('trip.json', hpa)]);
    const v1 = await getJson(['horizontalpodautoscalers.v1.autoscaling', 'trip']);
    expect(v1.apiVersion).toBe('autoscaling/v1');
    expect(v1.spec).toEqual({scaleTargetRef: hpa.spec.scaleTargetRef, minReplicas: 2, maxReplicas: 10, targetCPUUtilizationPercentage: 60});
    const annotations = v1.metadata.annotations;
    expect(JSON.parse(annotations[`autoscaling.alpha.${n.labelDomain}/metrics`])).toEqual([{type: 'Resource', resource: {name: 'memory', targetAverageValue: '500Mi'}}]);
    expect(JSON.parse(annotations[`autoscaling.alpha.${n.labelDomain}/behavior`]).scaleDown.stabilizationWindowSeconds).toBe(120);

    // A v1 client changes what it knows; the v2 view keeps the rest.
    v1.spec.maxReplicas = 12;
    v1.spec.targetCPUUtilizationPercentage = 70;
    await ok(['replace', '-f', manifest('trip-v1.json', v1)]);
    const v2 = await getJson(['horizontalpodautoscalers.v2.autoscaling', 'trip']);
    expect(v2.spec.maxReplicas).toBe(12);
    expect(v2.spec.metrics).toEqual([
      {type: 'Resource', resource: {name: 'memory', target: {type: 'AverageValue', averageValue: '500Mi'}}},
      {type: 'Resource', resource: {name: 'cpu', target: {type: 'Utilization', averageUtilization: 70}}},
    ]);
    expect(v2.spec.behavior.scaleDown.stabilizationWindowSeconds).toBe(120);
    expect(v2.metadata.annotations).toBeUndefined();

    // A v1 object without a target scales on 80% CPU, as upstream defaults it.
    await ok(['create', '-f', manifest('v1-hpa.json', {apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: meta('plain', true), spec: {scaleTargetRef: {kind: 'Deployment', name: 'web'}, maxReplicas: 3}})]);
    expect((await getJson(['horizontalpodautoscalers.v2.autoscaling', 'plain'])).spec.metrics).toEqual([{type: 'Resource', resource: {name: 'cpu', target: {type: 'Utilization', averageUtilization: 80}}}]);
  });

  it('serves core events as events/v1 and back', async () => {
    await ok(['create', '-f', manifest('core-event.json', {
      apiVersion: 'v1', kind: 'Event', metadata: meta('core-ev', true), involvedObject: {kind: 'Pod', name: 'p', namespace: 'default'}, reason: 'Pulled', message: 'pulled it', type: 'Normal', count: 3,
    })]);
    const v1 = await getJson([`events.${g.events}`, 'core-ev']);
    expect(v1).toMatchObject({apiVersion: `${g.events}/v1`, kind: 'Event', regarding: {kind: 'Pod', name: 'p'}, note: 'pulled it', deprecatedCount: 3, reason: 'Pulled'});
    expect(v1.involvedObject).toBeUndefined();
    // events/v1 creates are held to the new API's rules; the store keeps nothing of a refused one.
    const strict = await k(['create', '-f', manifest('bad-event.json', {apiVersion: `${g.events}/v1`, kind: 'Event', metadata: meta('bad-ev', true), reason: 'R', type: 'Odd', regarding: {kind: 'Pod', name: 'p'}})]);
    expect(strict.code).toBe(1);
    for (const text of ['eventTime: Required value', 'reportingController: Required value', 'action: Required value', 'type: Invalid value: "": has invalid value: Odd']) {
      expect(strict.stderr).toContain(text);
    }
    expect((await k(['get', 'event', 'bad-ev'])).stderr).toContain('NotFound');
  });

  it('adds ephemeral containers and resizes through their own subresources only', async () => {
    await ok(['create', '-f', manifest('eph.json', {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'eph'}, spec: {containers: [{name: 'c', image: 'busybox', resources: {requests: {cpu: '100m'}}}]}})]);
    const body = {spec: {ephemeralContainers: [{name: 'debug', image: 'busybox:1.36'}], containers: [{name: 'c', image: 'changed'}]}};
    const patched = await server.client.patch('/api/v1/namespaces/default/pods/eph/ephemeralcontainers', body, 'application/strategic-merge-patch+json');
    expect(patched.status).toBe(200);
    expect(patched.body.spec.ephemeralContainers).toEqual([expect.objectContaining({name: 'debug', image: 'busybox:1.36'})]);
    expect(patched.body.spec.containers[0].image).toBe('busybox');
    const resized = await ok(['patch', 'pod', 'eph', '--subresource=resize', '-p', '{"spec":{"containers":[{"name":"c","resources":{"requests":{"cpu":"200m"}}}]}}']);
    expect(resized).toBe('pod/eph patched\n');
    expect((await getJson(['pod', 'eph'])).spec.containers[0].resources.requests.cpu).toBe('200m');
  });

  it('proxies nodes/proxy to the agent port the node reports, over HTTPS', async () => {
    const x509 = await (await import('../../src/daemons/shared/pki/x509-lib.js')).loadX509();
    const {webcrypto} = await import('node:crypto');
    const {createServer: createHttpsServer} = await import('node:https');
    const algorithm = {name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256'};
    const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']);
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '01', name: 'CN=agent', notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 3_600_000), keys, signingAlgorithm: algorithm,
    });
    const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64').replace(/(.{64})/g, '$1\n');
    const agent = createHttpsServer({cert: cert.toString('pem'), key: `-----BEGIN PRIVATE KEY-----\n${pkcs8}\n-----END PRIVATE KEY-----\n`}, (req, res) => res.end(`agent saw ${req.method} ${req.url}`));
    await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
    try {
      const port = (agent.address() as {port: number}).port;
      await ok(['create', '-f', manifest('proxy-node.json', {
        apiVersion: 'v1', kind: 'Node', metadata: {name: 'proxy-node'},
        status: {addresses: [{type: 'InternalIP', address: '127.0.0.1'}], daemonEndpoints: {kubeletEndpoint: {Port: port}}},
      })]);
      expect(await ok(['get', '--raw', '/api/v1/nodes/proxy-node/proxy/healthz'])).toMatch(/^agent saw GET \/healthz(\?|$)/);
      const missing = await k(['get', '--raw', '/api/v1/nodes/no-such-node/proxy/healthz']);
      expect(missing.stderr).toContain('NotFound');
    } finally {
      agent.close();
    }
  });

  it('proxies services/proxy to a ready endpoint on loopback, and pods/proxy to the pod IP', async () => {
    const backend: Server = createServer((req, res) => res.end(`hello from ${req.url}`));
    await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
    const port = (backend.address() as {port: number}).port;
    try {
      await ok(['create', '-f', manifest('svc.json',
        {apiVersion: 'v1', kind: 'Service', metadata: {name: 'echo'}, spec: {ports: [{name: 'http', port: 80}]}},
        {apiVersion: 'v1', kind: 'Endpoints', metadata: {name: 'echo'}, subsets: [{addresses: [{ip: '127.0.0.1'}], ports: [{name: 'http', port}]}]})]);
      // (kubectl adds its own `timeout` parameter; the query goes through as sent.)
      expect(await ok(['get', '--raw', '/api/v1/namespaces/default/services/echo:http/proxy/some/path?x=1'])).toMatch(/^hello from \/some\/path\?(.*&)?x=1$/);
      const missing = await k(['get', '--raw', '/api/v1/namespaces/default/services/nothing/proxy/']);
      expect(missing.stderr).toContain('NotFound');
      // pods/proxy: to the pod's IP, on the port named after the pod's name.
      await ok(['create', '-f', manifest('proxied-pod.json', {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'proxied'}, spec: {containers: [{name: 'c', image: 'busybox', ports: [{name: 'web', containerPort: port}]}]}})]);
      await ok(['patch', 'pod', 'proxied', '--subresource=status', '--type=merge', '-p', '{"status":{"podIP":"127.0.0.1"}}']);
      expect(await ok(['get', '--raw', '/api/v1/namespaces/default/pods/proxied:web/proxy/from-pod'])).toMatch(/^hello from \/from-pod(\?|$)/);
    } finally {
      backend.close();
    }
  });
});
