/**
 * The pod admission plugins on a real server, reached with kubectl: LimitRange defaults and limits,
 * the default service account with its token volume and pull secrets, priorities from classes,
 * DefaultTolerationSeconds with its options, nodes born tainted; the optional AlwaysPullImages,
 * ExtendedResourceToleration, LimitPodHardAntiAffinityTopology; PodNodeSelector and
 * PodTolerationRestriction configured from the admission configuration file; NodeRestriction with
 * nodes' client certificates; ImagePolicyWebhook asking a webhook server on loopback over TLS; and
 * bad configurations stopping the start with the plugin named.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {createServer, type Server} from 'node:https';
import type {AddressInfo} from 'node:net';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {type InProcessServer, kubectl, readAdminOrchconfig, startApiServer, writeClientOrchconfig} from '../helpers/apiserver.js';
import {admissionConfig} from '../../src/daemons/apiserver/config.js';
import {names} from '../../src/api/names.js';
import {generateCa, generateClientCertificate, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'orch-admission-pods-'));
});
afterAll(() => rmSync(dir, {recursive: true, force: true}));

let fileCount = 0;
function file(content: unknown, ext = 'json'): string {
  const path = join(dir, `f${fileCount++}.${ext}`);
  writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content));
  return path;
}

function client(orchconfig: string) {
  const ok = async (args: string[], input?: string) => {
    const result = await kubectl(orchconfig, args, input === undefined ? {} : {input});
    if (result.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  return {
    ok,
    fails: async (args: string[], input?: string) => {
      const result = await kubectl(orchconfig, args, input === undefined ? {} : {input});
      expect(result.code).not.toBe(0);
      return result.stderr;
    },
    create: (object: unknown) => ok(['create', '-f', file(object)]),
    get: async (args: string[]) => JSON.parse(await ok(['get', ...args, '-o', 'json'])),
  };
}

const podManifest = (name: string, spec: object = {}, metadata: object = {}) => ({
  apiVersion: 'v1', kind: 'Pod', metadata: {name, ...metadata}, spec: {containers: [{name: 'app', image: 'nginx'}], ...spec},
});

describe('the pod plugins of the default set, and three optional ones', () => {
  let api: InProcessServer;
  let k: ReturnType<typeof client>;

  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite', config: {admission: admissionConfig({
      'enable-admission-plugins': ['AlwaysPullImages', 'ExtendedResourceToleration', 'LimitPodHardAntiAffinityTopology'],
      'default-not-ready-toleration-seconds': 120,
      'default-unreachable-toleration-seconds': 60,
    })}});
    k = client(api.orchconfigPath);
    // No controller manager runs here: the default account is made by hand.
    await k.create({apiVersion: 'v1', kind: 'Secret', metadata: {name: 'registry'}, type: names().secretTypes.dockerConfigJson, data: {'.dockerconfigjson': Buffer.from('{"auths":{}}').toString('base64')}});
    await k.create({apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name: 'default'}, imagePullSecrets: [{name: 'registry'}]});
  });
  afterAll(() => api?.stop());

  it('LimitRanger: the defaults of a LimitRange reach a pod created with kubectl, and its max refuses', async () => {
    await k.create({apiVersion: 'v1', kind: 'LimitRange', metadata: {name: 'limits'}, spec: {limits: [
      {type: 'Container', default: {cpu: '500m', memory: '256Mi'}, defaultRequest: {cpu: '100m'}, max: {cpu: '1'}},
    ]}});
    const range = await k.get(['limitrange', 'limits']);
    // Upstream's LimitRange defaulting: the default request falls back to the default limit.
    expect(range.spec.limits[0].defaultRequest).toEqual({cpu: '100m', memory: '256Mi'});
    await k.ok(['run', 'limited', '--image=nginx', '--restart=Never']);
    const pod = await k.get(['pod', 'limited']);
    expect(pod.spec.containers[0].resources).toEqual({limits: {cpu: '500m', memory: '256Mi'}, requests: {cpu: '100m', memory: '256Mi'}});
    expect(pod.metadata.annotations[names().podAdmission.limitRangerAnnotation]).toBe('LimitRanger plugin set: cpu, memory request for container limited; cpu, memory limit for container limited');
    const refused = await k.fails(['run', 'greedy', '--image=nginx', '--restart=Never', '--overrides', JSON.stringify({spec: {containers: [{name: 'greedy', image: 'nginx', resources: {limits: {cpu: '2'}}}]}})]);
    expect(refused).toContain('pods "greedy" is forbidden: maximum cpu usage per Container is 1, but limit is 2');
  });

  it('ServiceAccount, DefaultTolerationSeconds, Priority and AlwaysPullImages on one pod', async () => {
    await k.create(podManifest('plain'));
    const pod = await k.get(['pod', 'plain']);
    const spec = pod.spec;
    expect(spec.serviceAccountName).toBe('default');
    expect(spec.imagePullSecrets).toEqual([{name: 'registry'}]);
    const volume = spec.volumes.find((v: {name: string}) => v.name.startsWith(`${names().podAdmission.apiAccessVolumePrefix}-`));
    expect(volume.name).toMatch(new RegExp(`^${names().podAdmission.apiAccessVolumePrefix}-[a-z0-9]{5}$`));
    expect(volume.projected.sources.map((s: object) => Object.keys(s)[0])).toEqual(['serviceAccountToken', 'configMap', 'downwardAPI']);
    expect(spec.containers[0].volumeMounts).toEqual([{name: volume.name, readOnly: true, mountPath: names().serviceAccountMountPath}]);
    expect(spec.tolerations).toEqual([
      {key: names().taints.notReady, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 120},
      {key: names().taints.unreachable, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 60},
    ]);
    expect(spec.priority).toBe(0);
    expect(spec.preemptionPolicy).toBe('PreemptLowerPriority');
    expect(spec.containers[0].imagePullPolicy).toBe('Always');
  });

  it('ServiceAccount refuses a missing account; Priority resolves system classes and refuses unknown ones', async () => {
    expect(await k.fails(['create', '-f', file(podManifest('robot', {serviceAccountName: 'robot'}))])).toContain(
      'pods "robot" is forbidden: error looking up service account default/robot: serviceaccount "robot" not found',
    );
    await k.create(podManifest('critical', {priorityClassName: 'system-node-critical'}));
    expect((await k.get(['pod', 'critical'])).spec.priority).toBe(2000001000);
    expect(await k.fails(['create', '-f', file(podManifest('gold', {priorityClassName: 'gold'}))])).toContain('pods "gold" is forbidden: no PriorityClass with name gold was found');
    const scheduling = `${names().groups.scheduling}/v1`;
    await k.create({apiVersion: scheduling, kind: 'PriorityClass', metadata: {name: 'everyday'}, value: 100, globalDefault: true});
    expect(await k.fails(['create', '-f', file({apiVersion: scheduling, kind: 'PriorityClass', metadata: {name: 'second'}, value: 5, globalDefault: true})])).toContain(
      'PriorityClass everyday is already marked as default. Only one default can exist',
    );
    await k.create(podManifest('defaulted'));
    expect((await k.get(['pod', 'defaulted'])).spec).toMatchObject({priorityClassName: 'everyday', priority: 100});
  });

  it('TaintNodesByCondition, ExtendedResourceToleration and LimitPodHardAntiAffinityTopology', async () => {
    await k.create({apiVersion: 'v1', kind: 'Node', metadata: {name: 'fresh'}});
    expect((await k.get(['node', 'fresh'])).spec.taints).toEqual([{key: names().taints.notReady, effect: 'NoSchedule'}]);
    await k.create(podManifest('gpu', {containers: [{name: 'app', image: 'x', resources: {requests: {'example.com/gpu': '1'}, limits: {'example.com/gpu': '1'}}}]}));
    expect((await k.get(['pod', 'gpu'])).spec.tolerations).toContainEqual({key: 'example.com/gpu', operator: 'Exists', effect: 'NoSchedule'});
    const spread = podManifest('spread', {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {a: 'b'}}, topologyKey: names().labels.zone}]}}});
    expect(await k.fails(['create', '-f', file(spread)])).toContain(
      `pods "spread" is forbidden: affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey ${names().labels.zone} but only key ${names().labels.hostname} is allowed`,
    );
  });
});

describe('PodNodeSelector and PodTolerationRestriction from the configuration file', () => {
  let api: InProcessServer;
  let k: ReturnType<typeof client>;
  const a = () => names().podAdmission;

  beforeAll(async () => {
    const config = file({
      apiVersion: `apiserver.config.${names().domain}/v1`, kind: 'AdmissionConfiguration',
      plugins: [
        {name: 'PodNodeSelector', path: file('podNodeSelectorPluginConfig:\n  clusterDefaultNodeSelector: env=prod\n  restricted: env=prod\n', 'yaml')},
        {name: 'PodTolerationRestriction', configuration: {
          apiVersion: `${a().tolerationRestrictionGroup}/v1alpha1`, kind: 'Configuration',
          default: [{key: 'shared', operator: 'Exists', effect: 'NoSchedule'}],
        }},
      ],
    }, 'json');
    api = await startApiServer({engine: 'sqlite', config: {admission: admissionConfig({
      'enable-admission-plugins': ['PodNodeSelector', 'PodTolerationRestriction'], 'disable-admission-plugins': ['ServiceAccount'], 'admission-control-config-file': config,
    })}});
    k = client(api.orchconfigPath);
    await k.create({apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'restricted'}});
    await k.create({apiVersion: 'v1', kind: 'Namespace', metadata: {name: 'team', annotations: {
      [a().nodeSelector]: 'disk=ssd',
      [a().defaultTolerations]: '[{"key":"dedicated","operator":"Equal","value":"team","effect":"NoSchedule"}]',
      [a().tolerationsWhitelist]: '[{"key":"dedicated","operator":"Exists"},{"key":"' + names().taints.notReady + '","operator":"Exists"},{"key":"' + names().taints.unreachable + '","operator":"Exists"}]',
    }}});
  });
  afterAll(() => api?.stop());

  it('the cluster default selector and tolerations, or the namespace annotations', async () => {
    await k.create(podManifest('anywhere'));
    const plain = await k.get(['pod', 'anywhere']);
    expect(plain.spec.nodeSelector).toEqual({env: 'prod'});
    expect(plain.spec.tolerations).toContainEqual({key: 'shared', operator: 'Exists', effect: 'NoSchedule'});
    await k.create({...podManifest('member'), metadata: {name: 'member', namespace: 'team'}});
    const member = await k.get(['pod', 'member', '-n', 'team']);
    expect(member.spec.nodeSelector).toEqual({disk: 'ssd'});
    expect(member.spec.tolerations).toContainEqual({key: 'dedicated', operator: 'Equal', value: 'team', effect: 'NoSchedule'});
  });

  it('refuses selectors and tolerations outside the rules', async () => {
    expect(await k.fails(['create', '-n', 'team', '-f', file(podManifest('hdd', {nodeSelector: {disk: 'hdd'}}))])).toContain(
      'pods "hdd" is forbidden: pod node label selector conflicts with its namespace node label selector',
    );
    expect(await k.fails(['create', '-n', 'restricted', '-f', file(podManifest('gpu', {nodeSelector: {gpu: 'yes'}}))])).toContain(
      'pods "gpu" is forbidden: pod node label selector labels conflict with its namespace whitelist',
    );
    expect(await k.fails(['create', '-n', 'team', '-f', file(podManifest('intruder', {tolerations: [{key: 'gpu', operator: 'Exists'}]}))])).toContain(
      'pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist',
    );
  });
});

describe('NodeRestriction', () => {
  let api: InProcessServer;
  const as: Record<string, ReturnType<typeof client>> = {};

  beforeAll(async () => {
    const ca = await generateCa({commonName: 'node-client-ca'});
    const caFile = file(ca.certPem, 'pem');
    api = await startApiServer({engine: 'sqlite', config: {
      anonymousAuth: false, clientCaFile: caFile, authorizationModes: ['Node', 'RBAC'],
      admission: admissionConfig({'enable-admission-plugins': ['NodeRestriction'], 'disable-admission-plugins': ['ServiceAccount']}),
    }});
    const admin = readAdminOrchconfig(api.orchconfigPath);
    for (const node of ['x', 'y']) {
      const cert = await generateClientCertificate(ca, {user: `system:node:${node}`, groups: ['system:nodes']});
      as[node] = client(writeClientOrchconfig(join(dir, `${node}.orchconfig`), {server: admin.server, caPem: admin.caPem, cert}));
      await as[node]!.create({apiVersion: 'v1', kind: 'Node', metadata: {name: node, labels: {[names().labels.hostname]: node}}});
    }
  });
  afterAll(() => api?.stop());

  it('a node may label itself but not another node, nor set node-restriction labels', async () => {
    await as.x!.ok(['label', 'node', 'x', `node.${names().labelDomain}/ready-for=jobs`]);
    expect(await as.x!.fails(['label', 'node', 'y', 'owner=x'])).toContain('nodes "y" is forbidden: node "x" is not allowed to modify node "y"');
    expect(await as.x!.fails(['label', 'node', 'x', `${names().podAdmission.nodeRestrictionLabelNamespace}/pool=gold`])).toContain(
      `nodes "x" is forbidden: is not allowed to modify labels: ${names().podAdmission.nodeRestrictionLabelNamespace}/pool`,
    );
  });

  it('a node may evict only the pods bound to it', async () => {
    await client(api.orchconfigPath).create(podManifest('on-y', {nodeName: 'y'}));
    const eviction = file({apiVersion: 'policy/v1', kind: 'Eviction', metadata: {name: 'on-y', namespace: 'default'}});
    const evict = ['create', '--raw', '/api/v1/namespaces/default/pods/on-y/eviction', '-f', eviction];
    expect(await as.x!.fails(evict)).toContain('pods "on-y" is forbidden: node x can only evict pods with spec.nodeName set to itself');
    await as.y!.ok(evict);
  });

  it('a node may create only its own mirror pods', async () => {
    expect(await as.x!.fails(['create', '-f', file(podManifest('sneaky', {nodeName: 'x'}))])).toContain(
      `pods "sneaky" is forbidden: pod does not have "${names().annotations.mirrorPod}" annotation, node "x" can only create mirror pods`,
    );
  });
});

describe('ImagePolicyWebhook with a webhook over TLS on loopback', () => {
  let api: InProcessServer;
  let hook: Server;
  const reviews: Array<{spec: {containers: Array<{image: string}>; namespace: string}}> = [];
  let k: ReturnType<typeof client>;

  beforeAll(async () => {
    const ca = await generateCa({commonName: 'webhook-ca'});
    const serving = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
    hook = createServer({key: serving.keyPem, cert: serving.certPem}, (req, res) => {
      let body = '';
      req.on('data', (chunk) => (body += chunk));
      req.on('end', () => {
        const review = JSON.parse(body);
        reviews.push(review);
        const banned = review.spec.containers.some((c: {image: string}) => c.image.startsWith('evil'));
        res.setHeader('Content-Type', 'application/json');
        res.end(JSON.stringify({apiVersion: review.apiVersion, kind: 'ImageReview', status: banned ? {allowed: false, reason: 'images from evil are banned'} : {allowed: true}}));
      });
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    const kubeConfigFile = writeClientOrchconfig(join(dir, 'image-policy.orchconfig'), {server: `https://127.0.0.1:${(hook.address() as AddressInfo).port}/review`, caPem: ca.certPem});
    const config = file(`apiVersion: apiserver.config.${names().domain}/v1\nkind: AdmissionConfiguration\nplugins:\n- name: ImagePolicyWebhook\n  configuration:\n    imagePolicy:\n      kubeConfigFile: ${kubeConfigFile}\n      allowTTL: 50\n      denyTTL: 50\n      retryBackoff: 50\n      defaultAllow: false\n`, 'yaml');
    api = await startApiServer({engine: 'sqlite', config: {admission: admissionConfig({
      'enable-admission-plugins': ['ImagePolicyWebhook'], 'disable-admission-plugins': ['ServiceAccount'], 'admission-control-config-file': config,
    })}});
    k = client(api.orchconfigPath);
  });
  afterAll(async () => {
    await api?.stop();
    await new Promise((resolve) => hook?.close(resolve));
  });

  it('admits what the webhook allows and refuses what it denies, with its reason', async () => {
    await k.create(podManifest('good'));
    expect(reviews.at(-1)).toMatchObject({apiVersion: `${names().podAdmission.imagePolicyGroup}/v1alpha1`, kind: 'ImageReview', spec: {containers: [{image: 'nginx'}], namespace: 'default'}});
    expect(await k.fails(['create', '-f', file(podManifest('bad', {containers: [{name: 'app', image: 'evil/miner'}]}))])).toContain(
      'pods "bad" is forbidden: image policy webhook backend denied one or more images: images from evil are banned',
    );
    expect(await k.fails(['get', 'pod', 'bad'])).toContain('NotFound');
  });
});

describe('bad configuration stops the start, naming the plugin', () => {
  it.each([
    ['PodNodeSelector', {podNodeSelectorPluginConfig: {team: 'env'}}, 'the node selector of "team": invalid selector: [env]'],
    ['PodTolerationRestriction', {kind: 'Configuration', apiVersion: 'v1'}, 'apiVersion must be'],
    ['ImagePolicyWebhook', {imagePolicy: {kubeConfigFile: '/nonexistent', allowTTL: 5000}}, 'imagePolicy.allowTTL (allow cache): valid value is between 1s and 30m0s, got 1h23m20s'],
    ['ImagePolicyWebhook', {imagePolicy: {kubeConfigFile: '/nonexistent/kubeconfig'}}, 'kubeConfigFile /nonexistent/kubeconfig'],
  ])('%s: %j', async (plugin, configuration, message) => {
    const config = file({apiVersion: `apiserver.config.${names().domain}/v1`, kind: 'AdmissionConfiguration', plugins: [{name: plugin, configuration}]});
    const start = startApiServer({engine: 'sqlite', config: {admission: admissionConfig({'enable-admission-plugins': [plugin], 'admission-control-config-file': config})}});
    const error = await start.then(async (api) => {
      await api.stop();
      return undefined;
    }, (e: Error) => e);
    expect(error?.message).toContain(plugin);
    expect(error?.message).toContain(message);
  });
});
