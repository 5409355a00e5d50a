/**
 * Quota and event rate limits as users meet them: `orch apiserver` with ResourceQuota (on by
 * default) and EventRateLimit enabled through --admission-control-config-file, and
 * `orch controller-manager --controllers=resourcequota`, both as child processes, driven with
 * kubectl. A quota of three pods gets its usage from the controller, refuses the fourth pod with
 * upstream's message, shows its usage in `kubectl describe`, and gets a pod's share back when the
 * pod is deleted; limitedResources refuses a claim no quota covers; a burst of events past the
 * bucket is refused with 429; a bad plugin configuration stops the start.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {names} from '../../src/api/names.js';
import {kubectl, sleep, startApiServer, startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';
import {startControllerManager, type ControllerManagerProcess} from '../helpers/controller-manager.js';

const NS = 'quota-e2e';
const COUNTED = 'quota-counted';
let server: ServerProcess;
let cm: ControllerManagerProcess;
let configDir: string;

function admissionConfiguration(): string {
  const domain = names().domain;
  return JSON.stringify({
    apiVersion: `apiserver.config.${domain}/v1`,
    kind: 'AdmissionConfiguration',
    plugins: [
      {name: 'EventRateLimit', configuration: {apiVersion: `eventratelimit.admission.${domain}/v1alpha1`, kind: 'Configuration', limits: [{type: 'Namespace', qps: 1, burst: 5}]}},
      {name: 'ResourceQuota', configuration: {
        apiVersion: `apiserver.config.${domain}/v1`, kind: 'ResourceQuotaConfiguration',
        limitedResources: [{resource: 'persistentvolumeclaims', matchContains: [`.storageclass.${names().groups.storage}/requests.storage`]}],
      }},
    ],
  });
}

const podYaml = (namespace: string, name: string) => `apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m, memory: 32Mi}, limits: {cpu: 200m, memory: 64Mi}}}]
`;

async function used(namespace: string, quota = 'q'): Promise<Record<string, string> | undefined> {
  const r = await kubectl(server.orchconfigPath, ['get', 'resourcequota', quota, '-n', namespace, '-o', 'jsonpath={.status.used}']);
  return r.code === 0 && r.stdout !== '' ? JSON.parse(r.stdout) : undefined;
}

const usedPods = async (namespace: string) => (await used(namespace))?.pods;

async function waitForUsed(namespace: string, name: string, expected: string, quota = 'q', timeoutMs = 15_000): Promise<string | undefined> {
  const deadline = Date.now() + timeoutMs;
  let value = (await used(namespace, quota))?.[name];
  while (value !== expected && Date.now() < deadline) {
    await sleep(200);
    value = (await used(namespace, quota))?.[name];
  }
  return value;
}

const waitForUsedPods = (namespace: string, expected: string) => waitForUsed(namespace, 'pods', expected);

beforeAll(async () => {
  configDir = mkdtempSync(join(tmpdir(), 'orch-admission-'));
  const configPath = join(configDir, 'admission.json');
  writeFileSync(configPath, admissionConfiguration());
  server = await startApiServerProcess({
    engine: 'sqlite',
    args: ['--enable-admission-plugins=EventRateLimit', `--admission-control-config-file=${configPath}`],
  });
  cm = await startControllerManager({
    name: 'cm',
    orchconfigPath: server.orchconfigPath,
    args: ['--controllers=resourcequota', '--leader-elect=false', '--resource-quota-sync-period=30s'],
  });
  for (const namespace of [NS, COUNTED]) expect((await kubectl(server.orchconfigPath, ['create', 'namespace', namespace])).stderr).toBe('');
}, 60_000);

afterAll(async () => {
  await cm?.stop();
  await server?.stop();
  rmSync(configDir, {recursive: true, force: true});
});

describe('ResourceQuota', () => {
  it('the controller counts what a namespace holds, shows it, and gives a deleted pod its share back', async () => {
    for (const name of ['p1', 'p2', 'p3']) expect((await kubectl(server.orchconfigPath, ['apply', '-f', '-'], {input: podYaml(COUNTED, name)})).stderr).toBe('');
    // A quota made after the pods: only the controller's count can know them.
    const quota = await kubectl(server.orchconfigPath, ['create', 'quota', 'q', '-n', COUNTED, '--hard=pods=10,requests.cpu=2,limits.memory=1Gi']);
    expect(quota.stderr).toBe('');
    expect(await waitForUsedPods(COUNTED, '3')).toBe('3');
    const described = await kubectl(server.orchconfigPath, ['describe', 'quota', 'q', '-n', COUNTED]);
    expect(described.stdout).toMatch(/limits\.memory\s+192Mi\s+1Gi/);
    expect(described.stdout).toMatch(/pods\s+3\s+10/);
    expect(described.stdout).toMatch(/requests\.cpu\s+300m\s+2/);

    const deleted = await kubectl(server.orchconfigPath, ['delete', 'pod', 'p1', '-n', COUNTED, '--grace-period=0', '--force']);
    expect(deleted.code).toBe(0);
    expect(await waitForUsedPods(COUNTED, '2')).toBe('2');
  }, 60_000);

  it('refuses the fourth pod with upstream message', async () => {
    expect((await kubectl(server.orchconfigPath, ['create', 'quota', 'q', '-n', NS, '--hard=pods=3'])).stderr).toBe('');
    // The controller fills in the usage; until then admission refuses pods ("status unknown").
    expect(await waitForUsedPods(NS, '0')).toBe('0');
    for (const name of ['p1', 'p2', 'p3']) expect((await kubectl(server.orchconfigPath, ['apply', '-f', '-'], {input: podYaml(NS, name)})).stderr).toBe('');
    const fourth = await kubectl(server.orchconfigPath, ['apply', '-f', '-'], {input: podYaml(NS, 'p4')});
    expect(fourth.stderr).toContain('pods "p4" is forbidden: exceeded quota: q, requested: pods=1, used: pods=3, limited: pods=3');
    // Charged at admission, before any controller pass.
    expect(await usedPods(NS)).toBe('3');
  }, 60_000);
});

describe('ResourceQuota limitedResources', () => {
  it('refuses a claim on a storage class no quota covers, and admits it once one does', async () => {
    const gold = `gold.storageclass.${names().groups.storage}/requests.storage`;
    const claim = `apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: ${COUNTED}}
spec: {storageClassName: gold, accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
`;
    const refused = await kubectl(server.orchconfigPath, ['apply', '-f', '-'], {input: claim});
    expect(refused.stderr).toContain(`persistentvolumeclaims "data" is forbidden: insufficient quota to consume: ${gold}`);
    expect((await kubectl(server.orchconfigPath, ['create', 'quota', 'storage', '-n', COUNTED, `--hard=${gold}=10Gi`])).stderr).toBe('');
    expect(await waitForUsed(COUNTED, gold, '0', 'storage')).toBe('0');
    expect((await kubectl(server.orchconfigPath, ['apply', '-f', '-'], {input: claim})).stderr).toBe('');
    expect((await used(COUNTED, 'storage'))?.[gold]).toBe('1Gi');
  }, 60_000);
});

describe('EventRateLimit', () => {
  it('refuses a burst of events past the namespace bucket with 429', async () => {
    // Sent at once: the bucket holds 5 and refills one a second, so a burst of 10 loses at least 4
    // even if the server takes a second to answer them all.
    const replies = await Promise.all(Array.from({length: 10}, (_, i) => server.client.request('POST', `/api/v1/namespaces/${NS}/events`, {
      body: {apiVersion: 'v1', kind: 'Event', metadata: {name: `burst-${i}`}, involvedObject: {kind: 'Pod', name: 'p2', namespace: NS}, reason: 'Burst', message: 'm'},
    })));
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 201).length).toBeGreaterThanOrEqual(5);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(4);
    expect(statuses.filter((s) => s !== 201 && s !== 429)).toEqual([]);
    expect(replies.find((r) => r.status === 429)!.body).toMatchObject({
      code: 429, reason: 'TooManyRequests', message: `Too many requests: limit reached on type Namespace for key ${NS}`,
    });
  }, 30_000);
});

describe('bad plugin configuration', () => {
  const domain = () => names().domain;
  it.each([
    ['EventRateLimit', {apiVersion: `eventratelimit.admission.${domain()}/v1alpha1`, kind: 'Configuration', limits: [{type: 'Namespace', qps: 0, burst: 5}]},
      'limits[0].qps: Invalid value: 0: must be positive'],
    ['ResourceQuota', {apiVersion: `apiserver.config.${domain()}/v1`, kind: 'ResourceQuotaConfiguration', limitedResources: [{matchContains: ['x']}]},
      'limitedResources[0].resource: Required value'],
  ])('%s: the server does not start, and says which plugin and field', async (plugin, configuration, problem) => {
    const file = join(configDir, `${plugin}.json`);
    writeFileSync(file, JSON.stringify({apiVersion: `apiserver.config.${domain()}/v1`, kind: 'AdmissionConfiguration', plugins: [{name: plugin, configuration}]}));
    const start = startApiServer({engine: 'sqlite', config: {admission: {enable: [plugin], configFile: file}}});
    await expect(start).rejects.toThrow(`admission plugin ${plugin}: ${file}: plugin ${plugin}: ${problem}`);
  }, 30_000);
});
