/**
 * `orch up --names kubernetes` end to end: all three daemons use upstream's names. The node
 * registers with `kubernetes.io/*` labels and becomes Ready, its heartbeat Lease lives in
 * `kube-node-lease`, the controller manager leads through `kube-system/kube-controller-manager`
 * (and `orch status` finds it there without being told), and a Deployment's pod runs.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn, type ChildProcess} from 'node:child_process';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {orchBin, repoRoot} from '../helpers/run-orch.js';
import {kubectl} from '../helpers/apiserver.js';
import {ports, status, until, upArgs, type Ports} from '../helpers/up.js';
import {waitForBuild} from '../helpers/controller-manager.js';

describe('orch up --names kubernetes', () => {
  let dir: string;
  let child: ChildProcess;
  let log = '';
  let p: Ports;
  let orchconfig: string;
  const k = (...args: string[]) => kubectl(orchconfig, args, {timeoutMs: 40_000});

  beforeAll(async () => {
    await waitForBuild();
    dir = mkdtempSync(join(tmpdir(), 'orch-up-names-'));
    p = await ports();
    child = spawn(process.execPath, [orchBin, ...upArgs(join(dir, 'data'), p), '--names', 'kubernetes'], {cwd: repoRoot, env: {...process.env, NO_COLOR: '1'}});
    child.stderr?.on('data', (d) => (log += d));
    child.stdout?.on('data', (d) => (log += d));
    orchconfig = join(dir, 'data', 'apiserver', 'admin.orchconfig');
    await until('orch up to say it is up', () => log.includes('orch is up') || undefined, 60_000).catch((error: Error) => {
      throw new Error(`${error.message}\n${log}`);
    });
  }, 90_000);

  afterAll(async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([exited, new Promise((resolve) => (timer = setTimeout(resolve, 15_000)))]);
      clearTimeout(timer);
      if (child.exitCode === null) child.kill('SIGKILL');
    }
    rmSync(dir, {recursive: true, force: true});
  }, 30_000);

  it('registers a Ready node with upstream\'s labels and keeps its lease in kube-node-lease', async () => {
    const node = await until('the node to be Ready', async () => {
      const r = await k('get', 'nodes', '-o', 'json');
      const item = r.code === 0 ? JSON.parse(r.stdout).items[0] : undefined;
      return item?.status?.conditions?.some((c: {type: string; status: string}) => c.type === 'Ready' && c.status === 'True') ? item : undefined;
    }, 40_000);
    const name = node.metadata.name;
    expect(node.metadata.labels).toMatchObject({'kubernetes.io/hostname': name, 'kubernetes.io/os': 'linux'});
    expect(Object.keys(node.metadata.labels).filter((key) => key.includes('orch.io'))).toEqual([]);
    // A new node gets the not-ready NoSchedule taint at registration (TaintNodesByCondition); the node
    // lifecycle controller takes it off once the node is Ready (within a monitor period), as upstream.
    const notReadyTaints = async () => {
      const r = await k('get', 'node', name, '-o', 'json');
      return ((r.code === 0 ? JSON.parse(r.stdout).spec.taints : undefined) ?? []).filter((t: {key: string}) => /not-ready|unreachable/.test(t.key));
    };
    await until('the not-ready taint to go', async () => ((await notReadyTaints()).length === 0 ? true : undefined), 20_000);
    expect(await notReadyTaints()).toEqual([]);
    expect(node.status.nodeInfo.kubeletVersion).toMatch(/^v1\.\d+\.0\+orch\./);
    // The agent creates its lease once the node is registered (within a renew interval).
    const holder = await until('the node lease', async () => {
      const r = await k('get', 'lease', name, '-n', 'kube-node-lease', '-o', 'jsonpath={.spec.holderIdentity}');
      return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
    }, 40_000);
    expect(holder).toBe(name);
  }, 60_000);

  it('elects the controller manager through kube-system/kube-controller-manager', async () => {
    const holder = await until('the leader lease', async () => {
      const r = await k('get', 'lease', 'kube-controller-manager', '-n', 'kube-system', '-o', 'jsonpath={.spec.holderIdentity}');
      return r.code === 0 && r.stdout !== '' ? r.stdout : undefined;
    });
    const s = await until('orch status to be ready', async () => {
      const r = await status(orchconfig, p);
      return r.code === 0 ? r : undefined;
    }, 40_000);
    expect(s.json.leader.holder).toBe(holder);
  }, 60_000);

  it('runs a Deployment\'s pod on the node', async () => {
    expect((await k('create', 'deployment', 'web', '--image=busybox', '--', 'sh', '-c', 'sleep 300')).code).toBe(0);
    const rolled = await k('rollout', 'status', 'deployment/web', '--timeout=40s');
    expect(rolled).toMatchObject({code: 0, stdout: expect.stringContaining('successfully rolled out')});
    const pods = await k('get', 'pods', '-l', 'app=web', '-o', 'jsonpath={.items[0].status.phase} {.items[0].spec.nodeName}');
    expect(pods.stdout).toMatch(/^Running \S+$/);
  }, 60_000);
});
