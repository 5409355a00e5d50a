/**
 * The admission chain on a real server, reached with kubectl and the REST client: the default set's
 * storage, ingress, runtime-class and certificate plugins; the optional NamespaceAutoProvision,
 * DenyServiceExternalIPs and AlwaysDeny; `--admission-control=` turning every plugin off; what a
 * plugin is given (warnings reaching kubectl, annotations reaching the audit log, the request's
 * options, the authorizer, CONNECT of a proxy request); a bad configuration file stopping the start.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type InProcessServer, kubectl, startApiServer} from '../helpers/apiserver.js';
import {auditConfig} from '../../src/daemons/apiserver/config.js';
import {names} from '../../src/api/names.js';
import {forbidden} from '../../src/api/status.js';
import {AdmissionChain} from '../../src/daemons/apiserver/admission/chain.js';
import type {AdmissionAttributes, AdmissionPlugin} from '../../src/daemons/apiserver/admission/interfaces.js';
import type {ApiHandler} from '../../src/daemons/apiserver/rest/handler.js';
import type {AuditEvent} from '../../src/daemons/apiserver/audit/event.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'orch-admission-'));
});
afterAll(() => rmSync(dir, {recursive: true, force: true}));

let fileCount = 0;
function manifest(object: unknown): string {
  const path = join(dir, `m${fileCount++}.json`);
  writeFileSync(path, JSON.stringify(object));
  return path;
}

describe('the default set and optional plugins', () => {
  let api: InProcessServer;
  let admin: string;
  const k = (args: string[]) => kubectl(admin, args);
  const ok = async (args: string[]) => {
    const result = await k(args);
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const getJson = async (args: string[]) => JSON.parse(await ok(['get', ...args, '-o', 'json']));

  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite', config: {admission: {enable: ['NamespaceAutoProvision', 'DenyServiceExternalIPs']}}});
    admin = api.orchconfigPath;
  });
  afterAll(() => api?.stop());

  it('gives a new claim the default StorageClass (the newest default) and the protection finalizer', async () => {
    const domain = names().labelDomain;
    for (const name of ['old-default', 'new-default']) {
      await ok(['create', '-f', manifest({
        apiVersion: `${names().groups.storage}/v1`, kind: 'StorageClass', provisioner: 'example.com/p',
        metadata: {name, annotations: {[`storageclass.${domain}/is-default-class`]: 'true'}},
      })]);
      // Creation timestamps have second resolution: the second default is the newer one.
      if (name === 'old-default') await new Promise((resolve) => setTimeout(resolve, 1100));
    }
    const claim = (name: string, extra: object = {}) => ({
      apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: {name},
      spec: {accessModes: ['ReadWriteOnce'], resources: {requests: {storage: '1Gi'}}, ...extra},
    });
    await ok(['create', '-f', manifest(claim('data'))]);
    await ok(['create', '-f', manifest(claim('explicit', {storageClassName: ''}))]);
    const data = await getJson(['pvc', 'data']);
    expect(data.spec.storageClassName).toBe('new-default');
    expect(data.metadata.finalizers).toEqual([`${domain}/pvc-protection`]);
    expect((await getJson(['pvc', 'explicit'])).spec.storageClassName).toBe('');

    // Growing an unbound claim is refused with upstream's message.
    const grown = await k(['patch', 'pvc', 'data', '--type=merge', '-p', '{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}']);
    expect(grown.code).not.toBe(0);
    expect(grown.stderr).toContain('persistentvolumeclaims "data" is forbidden: Only bound persistent volume claims can be expanded');
  });

  it('gives a new Ingress the default IngressClass', async () => {
    const net = names().groups.networking;
    await ok(['create', '-f', manifest({
      apiVersion: `${net}/v1`, kind: 'IngressClass', metadata: {name: 'nginx', annotations: {[`ingressclass.${names().labelDomain}/is-default-class`]: 'true'}},
      spec: {controller: 'example.com/ingress'},
    })]);
    await ok(['create', '-f', manifest({
      apiVersion: `${net}/v1`, kind: 'Ingress', metadata: {name: 'web'},
      spec: {defaultBackend: {service: {name: 'web', port: {number: 80}}}},
    })]);
    expect((await getJson(['ingress', 'web'])).spec.ingressClassName).toBe('nginx');
  });

  it("applies a RuntimeClass's overhead and scheduling to a pod, and refuses a pod naming a missing class", async () => {
    await ok(['create', '-f', manifest({
      apiVersion: `${names().groups.node}/v1`, kind: 'RuntimeClass', metadata: {name: 'sandboxed'}, handler: 'runsc',
      overhead: {podFixed: {cpu: '250m', memory: '64Mi'}},
      scheduling: {nodeSelector: {sandbox: 'yes'}, tolerations: [{key: 'sandbox', operator: 'Exists', effect: 'NoSchedule'}]},
    })]);
    const pod = (name: string, runtimeClassName: string, nodeSelector?: object) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: {name},
      spec: {runtimeClassName, ...(nodeSelector ? {nodeSelector} : {}), containers: [{name: 'c', image: 'busybox'}]},
    });
    await ok(['create', '-f', manifest(pod('sandboxed', 'sandboxed', {disk: 'ssd'}))]);
    const created = await getJson(['pod', 'sandboxed']);
    expect(created.spec.overhead).toEqual({cpu: '250m', memory: '64Mi'});
    expect(created.spec.nodeSelector).toEqual({disk: 'ssd', sandbox: 'yes'});
    expect(created.spec.tolerations).toEqual(expect.arrayContaining([{key: 'sandbox', operator: 'Exists', effect: 'NoSchedule'}]));

    const conflict = await k(['create', '-f', manifest(pod('conflict', 'sandboxed', {sandbox: 'no'}))]);
    expect(conflict.stderr).toContain('pods "conflict" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[sandbox] = yes; pod.spec.nodeSelector[sandbox] = no');
    const missing = await k(['create', '-f', manifest(pod('nowhere', 'gvisor'))]);
    expect(missing.stderr).toContain('pods "nowhere" is forbidden: pod rejected: RuntimeClass "gvisor" not found');
  });

  it('refuses a request for the API server client signer in system:masters', async () => {
    const x509 = await (await import('../../src/daemons/shared/pki/x509-lib.js')).loadX509();
    const {webcrypto} = await import('node:crypto');
    const keys = await webcrypto.subtle.generateKey({name: 'ECDSA', namedCurve: 'P-256'}, true, ['sign', 'verify']);
    const csr = async (name: string, subject: string) => {
      const request = await x509.Pkcs10CertificateRequestGenerator.create({name: subject, keys, signingAlgorithm: {name: 'ECDSA', hash: 'SHA-256'}});
      return manifest({
        apiVersion: `${names().groups.certificates}/v1`, kind: 'CertificateSigningRequest', metadata: {name},
        spec: {request: Buffer.from(request.toString('pem')).toString('base64'), signerName: names().signers.apiserverClient, usages: ['client auth']},
      });
    };
    const refused = await k(['create', '-f', await csr('root', 'CN=root,O=system:masters')]);
    expect(refused.stderr).toContain(`certificatesigningrequests.${names().groups.certificates} "root" is forbidden: use of ${names().signers.apiserverClient} signer with system:masters group is not allowed`);
    await ok(['create', '-f', await csr('dev', 'CN=dev,O=developers')]);
    // The admin may approve (CertificateApproval asks the authorizer for `approve` on the signer).
    const path = `/apis/${names().groups.certificates}/v1/certificatesigningrequests/dev`;
    const current = (await api.client.get(path)).body;
    current.status = {conditions: [{type: 'Approved', status: 'True', reason: 'Test', message: 'approved'}]};
    expect((await api.client.put(`${path}/approval`, current)).status).toBe(200);
  });

  it('creates a missing namespace on first use (NamespaceAutoProvision)', async () => {
    await ok(['create', 'configmap', 'settings', '-n', 'made-on-demand', '--from-literal=a=b']);
    expect((await getJson(['namespace', 'made-on-demand'])).status.phase).toBe('Active');
    // A dry run does not create it.
    const dry = await k(['create', 'configmap', 'settings', '-n', 'dry-only', '--dry-run=server']);
    expect(dry.stderr).toContain('namespaces "dry-only" not found');
  });

  it('refuses new external IPs on a Service but keeps the ones it had (DenyServiceExternalIPs)', async () => {
    const service = (externalIPs?: string[]) => ({
      apiVersion: 'v1', kind: 'Service', metadata: {name: 'front'},
      spec: {ports: [{port: 80}], selector: {app: 'front'}, ...(externalIPs ? {externalIPs} : {})},
    });
    const refused = await k(['create', '-f', manifest(service(['192.0.2.10']))]);
    expect(refused.stderr).toContain('services "front" is forbidden: Use of external IPs is denied by admission control');
    await ok(['create', '-f', manifest(service())]);
    const patched = await k(['patch', 'service', 'front', '--type=merge', '-p', '{"spec":{"externalIPs":["192.0.2.10"]}}']);
    expect(patched.stderr).toContain('Use of external IPs is denied by admission control');
  });
});

describe('pods on nodes (default set)', () => {
  let api: InProcessServer;
  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite'});
  });
  afterAll(() => api?.stop());

  const zone = () => `topology.${names().domain}/zone`;
  const createNode = (name: string, cpu: string, memory: string) => api.client.post('/api/v1/nodes', {
    apiVersion: 'v1', kind: 'Node', metadata: {name, labels: {[zone()]: 'z1', [names().labels.os]: 'linux'}},
    status: {allocatable: {cpu, memory, pods: '110'}, capacity: {cpu, memory, pods: '110'}},
  });

  it('copies the node topology labels onto a pod created on it and onto a pod bound to it (PodTopologyLabels)', async () => {
    expect((await createNode('n1', '2', '4Gi')).status).toBe(201);
    const pod = (name: string, nodeName?: string) => ({
      apiVersion: 'v1', kind: 'Pod', metadata: {name}, spec: {...(nodeName ? {nodeName} : {}), containers: [{name: 'c', image: 'busybox'}]},
    });
    const created = await api.client.post('/api/v1/namespaces/default/pods', pod('placed', 'n1'));
    expect(created.body.metadata.labels).toEqual({[zone()]: 'z1'});
    expect((await api.client.post('/api/v1/namespaces/default/pods', pod('floating'))).status).toBe(201);
    const bound = await api.client.post('/api/v1/namespaces/default/pods/floating/binding', {
      apiVersion: 'v1', kind: 'Binding', metadata: {name: 'floating'}, target: {apiVersion: 'v1', kind: 'Node', name: 'n1'},
    });
    expect(bound.status).toBe(201);
    expect((await api.client.get('/api/v1/namespaces/default/pods/floating')).body.metadata.labels).toEqual({[zone()]: 'z1'});
  });

  it("refuses a resize beyond the node's allocatable, with the NodeCapacity cause (PodResizeValidator)", async () => {
    expect((await createNode('small', '1', '1Gi')).status).toBe(201);
    const created = await api.client.post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1', kind: 'Pod', metadata: {name: 'grows'},
      spec: {nodeName: 'small', containers: [{name: 'c', image: 'busybox', resources: {requests: {cpu: '500m'}, limits: {cpu: '500m'}}}]},
    });
    expect(created.status).toBe(201);
    const resize = (cpu: string) => api.client.patch('/api/v1/namespaces/default/pods/grows/resize',
      {spec: {containers: [{name: 'c', resources: {requests: {cpu}, limits: {cpu}}}]}}, 'application/strategic-merge-patch+json');
    const refused = await resize('3');
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe('pods "grows" is forbidden: Node didn\'t have enough allocatable resources: cpu, requested: 3000, allocatable: 1000');
    expect(refused.body.details.causes).toEqual([{reason: 'NodeCapacity'}]);
    expect((await resize('800m')).status).toBe(200);
  });
});

describe('OwnerReferencesPermissionEnforcement', () => {
  let api: InProcessServer;
  beforeAll(async () => {
    writeFileSync(join(dir, 'tokens.csv'), 'dev-token,dev,1001\n');
    api = await startApiServer({engine: 'sqlite', config: {
      authorizationModes: ['RBAC'], tokenAuthFile: join(dir, 'tokens.csv'), admission: {enable: ['OwnerReferencesPermissionEnforcement']},
    }});
  });
  afterAll(() => api?.stop());

  it('needs delete on the object to set owner references, and update on the owner finalizers to block its deletion', async () => {
    const rbac = `/apis/${names().groups.rbac}/v1/namespaces/default`;
    const role = (verbs: string[], extra: object[] = []) => ({
      apiVersion: `${names().groups.rbac}/v1`, kind: 'Role', metadata: {name: 'dev'},
      rules: [{apiGroups: [''], resources: ['configmaps'], verbs}, ...extra],
    });
    expect((await api.client.post(`${rbac}/roles`, role(['create', 'get']))).status).toBe(201);
    expect((await api.client.post(`${rbac}/rolebindings`, {
      apiVersion: `${names().groups.rbac}/v1`, kind: 'RoleBinding', metadata: {name: 'dev'},
      roleRef: {apiGroup: names().groups.rbac, kind: 'Role', name: 'dev'}, subjects: [{kind: 'User', name: 'dev', apiGroup: names().groups.rbac}],
    })).status).toBe(201);
    const owner = (await api.client.post('/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'owner'}})).body;
    const dev = api.client.as({clientCert: false, token: 'dev-token'});
    const child = (name: string, block?: boolean) => ({
      apiVersion: 'v1', kind: 'ConfigMap',
      metadata: {name, ownerReferences: [{apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata.uid, ...(block ? {blockOwnerDeletion: true} : {})}]},
    });
    const refused = await dev.post('/api/v1/namespaces/default/configmaps', child('child'));
    expect(refused.status).toBe(403);
    expect(refused.body.message).toMatch(/^configmaps "child" is forbidden: cannot set an ownerRef on a resource you can't delete: /);
    // Without owner references the same user creates freely.
    expect((await dev.post('/api/v1/namespaces/default/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'plain'}})).status).toBe(201);

    expect((await api.client.put(`${rbac}/roles/dev`, role(['create', 'get', 'delete']))).status).toBe(200);
    expect((await dev.post('/api/v1/namespaces/default/configmaps', child('child'))).status).toBe(201);
    const blocking = await dev.post('/api/v1/namespaces/default/configmaps', child('blocker', true));
    expect(blocking.status).toBe(403);
    expect(blocking.body.message).toMatch(/^configmaps "blocker" is forbidden: cannot set blockOwnerDeletion if an ownerReference refers to a resource you can't set finalizers on: /);

    expect((await api.client.put(`${rbac}/roles/dev`, role(['create', 'get', 'delete'], [{apiGroups: [''], resources: ['configmaps/finalizers'], verbs: ['update']}]))).status).toBe(200);
    expect((await dev.post('/api/v1/namespaces/default/configmaps', child('blocker', true))).status).toBe(201);
    dev.close();
  });
});

describe('AlwaysDeny', () => {
  let api: InProcessServer;
  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite', config: {admission: {enable: ['AlwaysDeny']}}});
  });
  afterAll(() => api?.stop());

  it('refuses every write with upstream message, and the object is not stored', async () => {
    const result = await kubectl(api.orchconfigPath, ['create', 'namespace', 'nope']);
    expect(result.stderr).toContain('namespaces "nope" is forbidden: admission control is denying all modifications');
    expect((await api.client.get('/api/v1/namespaces/nope')).status).toBe(404);
    // Reads do not go through admission.
    expect((await api.client.get('/api/v1/namespaces/default')).status).toBe(200);
  });
});

describe('what a plugin is given', () => {
  let api: InProcessServer;
  const seen: AdmissionAttributes[] = [];
  const authorizations: boolean[] = [];

  /** A real plugin put in the server's chain: it warns, annotates, asks the authorizer and refuses CONNECTs. */
  const probe: AdmissionPlugin = {
    name: 'Probe',
    async admit(attributes) {
      seen.push(attributes);
      if (attributes.operation === 'CONNECT') throw forbidden({group: '', resource: 'nodes'}, attributes.name, 'probe refuses proxying');
      attributes.addWarning?.(`probe saw ${attributes.operation} ${attributes.resource.plural}`);
      attributes.addAnnotation?.('probe.admission.orch.io/seen', attributes.resource.plural);
      if (attributes.authorize) {
        authorizations.push((await attributes.authorize({verb: 'delete', resourceRequest: true, resource: 'nodes', apiGroup: '', name: 'x'})).allowed);
      }
    },
  };

  beforeAll(async () => {
    writeFileSync(join(dir, 'policy.yaml'), `apiVersion: ${names().groups.audit}/v1\nkind: Policy\nrules:\n  - level: Metadata\n`);
    api = await startApiServer({
      engine: 'sqlite',
      config: {
        // --admission-control= : no plugin at all.
        admission: {admissionControl: []},
        audit: auditConfig({'audit-policy-file': join(dir, 'policy.yaml'), 'audit-log-path': join(dir, 'audit.log')}),
      },
    });
  });
  afterAll(() => api?.stop());

  it('runs no plugin under --admission-control=: a namespace that does not exist is no obstacle', async () => {
    const created = await api.client.post('/api/v1/namespaces/ghost/configmaps', {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name: 'c'}});
    expect(created.status).toBe(201);
  });

  it('sends warnings to kubectl, annotations to the audit log, and the options and authorizer to the plugin', async () => {
    const handler = (api.server as unknown as {api: ApiHandler}).api;
    handler.setAdmission(new AdmissionChain([probe]));
    const result = await kubectl(api.orchconfigPath, ['create', 'configmap', 'probed', '--dry-run=server', '--field-manager=tester']);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('Warning: probe saw CREATE configmaps');
    const create = seen.find((a) => a.operation === 'CREATE' && a.resource.plural === 'configmaps')!;
    expect(create.dryRun).toBe(true);
    expect(create.operationOptions).toEqual({kind: 'CreateOptions', apiVersion: `${names().groups.meta}/v1`, dryRun: ['All'], fieldManager: 'tester', fieldValidation: 'Strict'});
    expect(authorizations).toEqual([true]);

    await api.client.delete('/api/v1/namespaces/ghost/configmaps/c?gracePeriodSeconds=0');
    const deleted = seen.find((a) => a.operation === 'DELETE')!;
    expect(deleted.operationOptions).toMatchObject({kind: 'DeleteOptions', gracePeriodSeconds: 0});

    await api.server.stop();
    const events = readFileSync(join(dir, 'audit.log'), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as AuditEvent);
    const audited = events.find((e) => e.verb === 'create' && e.objectRef?.name === 'probed' && e.stage === 'ResponseComplete');
    expect(audited?.annotations).toMatchObject({'probe.admission.orch.io/seen': 'configmaps'});
  });
});

describe('CONNECT admission', () => {
  let api: InProcessServer;
  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite', config: {admission: {admissionControl: []}}});
  });
  afterAll(() => api?.stop());

  it('asks the plugins before proxying to a node, with the proxy options', async () => {
    const seen: AdmissionAttributes[] = [];
    const handler = (api.server as unknown as {api: ApiHandler}).api;
    handler.setAdmission(new AdmissionChain([{
      name: 'Probe',
      admit(attributes) {
        seen.push(attributes);
        if (attributes.operation === 'CONNECT') throw forbidden({group: '', resource: 'nodes'}, attributes.name, 'probe refuses proxying');
      },
    }]));
    const response = await api.client.get('/api/v1/nodes/worker-1/proxy/metrics');
    expect(response.status).toBe(403);
    expect(response.body.message).toBe('nodes "worker-1" is forbidden: probe refuses proxying');
    expect(seen[0]).toMatchObject({operation: 'CONNECT', subresource: 'proxy', name: 'worker-1', object: {kind: 'NodeProxyOptions', apiVersion: 'v1', path: '/metrics'}});
  });

  it('admits a binding as a CREATE of pods/binding with the Binding, and not the pod write that follows', async () => {
    const seen: AdmissionAttributes[] = [];
    const handler = (api.server as unknown as {api: ApiHandler}).api;
    handler.setAdmission(new AdmissionChain([{name: 'Probe', validate: (attributes) => void seen.push(attributes)}]));
    expect((await api.client.post('/api/v1/namespaces/default/pods', {
      apiVersion: 'v1', kind: 'Pod', metadata: {name: 'to-bind'}, spec: {containers: [{name: 'c', image: 'busybox'}]},
    })).status).toBe(201);
    const bound = await api.client.post('/api/v1/namespaces/default/pods/to-bind/binding', {
      apiVersion: 'v1', kind: 'Binding', metadata: {name: 'to-bind', annotations: {why: 'test'}}, target: {kind: 'Node', name: 'n1'},
    });
    expect(bound.status).toBe(201);
    expect(seen.map((a) => `${a.operation} ${a.resource.plural}${a.subresource ? `/${a.subresource}` : ''}`)).toEqual(['CREATE pods', 'CREATE pods/binding']);
    expect(seen[1].object).toMatchObject({kind: 'Binding', metadata: {name: 'to-bind', namespace: 'default'}, target: {name: 'n1'}});
    const pod = (await api.client.get('/api/v1/namespaces/default/pods/to-bind')).body;
    expect(pod.spec.nodeName).toBe('n1');
    expect(pod.metadata.annotations).toEqual({why: 'test'});
  });

  it('asks the plugins before opening an exec stream, with the exec options', async () => {
    const seen: AdmissionAttributes[] = [];
    const handler = (api.server as unknown as {api: ApiHandler}).api;
    handler.setAdmission(new AdmissionChain([{
      name: 'Probe',
      validate(attributes) {
        seen.push(attributes);
        throw forbidden({group: '', resource: 'pods'}, attributes.name, 'probe refuses exec');
      },
    }]));
    const response = await api.client.post('/api/v1/namespaces/default/pods/web/exec?command=ls&command=-l&stdout=true&container=app', '');
    expect(response.status).toBe(403);
    expect(response.body.message).toBe('pods "web" is forbidden: probe refuses exec');
    expect(seen[0]).toMatchObject({
      operation: 'CONNECT', subresource: 'exec', namespace: 'default', name: 'web',
      object: {kind: 'PodExecOptions', apiVersion: 'v1', command: ['ls', '-l'], stdout: true, container: 'app'},
    });
  });
});

describe('a bad configuration file', () => {
  it('stops the start naming the file and the plugin', async () => {
    const file = join(dir, 'admission.yaml');
    writeFileSync(file, `apiVersion: apiserver.config.${names().domain}/v1\nkind: AdmissionConfiguration\nplugins:\n- name: Nonexistent\n  configuration: {}\n`);
    await expect(startApiServer({engine: 'sqlite', config: {admission: {configFile: file}}}))
      .rejects.toThrow(`--admission-control-config-file ${file}: plugin Nonexistent: unknown admission plugin; known plugins: AlwaysAdmit,`);
  });
});
