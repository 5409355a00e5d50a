/**
 * kubectl exec, attach, port-forward and cp on `orch up`, through the API server to the agent, with
 * kubectl 1.27 (SPDY/3.1) and kubectl 1.33 (WebSocket: the v5 channel protocol for exec and
 * attach, SPDY tunnelled in WebSocket for port-forward) from the versioned copies beside kubectl.
 * Then bad input, and a stream cut in the middle: kubectl prints upstream's error text, and
 * afterwards no exec process and no agent connection is left while both daemons keep serving.
 */
import {afterAll, beforeAll, describe, expect, it, jest} from '@jest/globals';
import {execFileSync, spawn, type ChildProcess} from 'node:child_process';
import {randomBytes} from 'node:crypto';
import {mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, writeFileSync} from 'node:fs';
import {createServer} from 'node:net';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {orchBin, repoRoot} from '../helpers/run-orch.js';
import {freePort, kubectlEnv} from '../helpers/apiserver.js';
import {waitForBuild} from '../helpers/controller-manager.js';

// Each test runs several kubectl processes against a daemon on a loaded machine: generous bounds.
jest.setTimeout(90_000);

const kubectlDir = dirname(realpathSync(execFileSync('sh', ['-c', 'command -v kubectl']).toString().trim()));
/** Each kubectl and the protocol its 101 answer must name (kubectl -v=8 prints the response headers). */
const VERSIONS = [
  {version: '1.27', protocol: 'SPDY', execHeader: /X-Stream-Protocol-Version: v4\.channel\.k8s\.io/, forwardHeader: /X-Stream-Protocol-Version: portforward\.k8s\.io/},
  {version: '1.33', protocol: 'WebSocket', execHeader: /Sec-Websocket-Protocol: v5\.channel\.k8s\.io/, forwardHeader: /Sec-Websocket-Protocol: SPDY\/3\.1\+portforward\.k8s\.io/},
];

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

let dir: string;
let up: ChildProcess;
let upLog = '';
let orchconfig: string;
let agentPort: number;
let webPort: number;

function run(version: string, args: string[], options: {input?: string | Buffer; timeoutMs?: number} = {}): Promise<Result> {
  return new Promise((resolve) => {
    const child = spawn(join(kubectlDir, `kubectl.${version}`), ['--kubeconfig', orchconfig, ...args], {env: kubectlEnv(orchconfig), stdio: ['pipe', 'pipe', 'pipe']});
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({code: code ?? -1, stdout, stderr});
    });
    child.stdin.end(options.input ?? '');
  });
}

async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Established connections on the agent's port, server side (/proc/net/tcp*, local address column). */
function agentConnections(): number {
  const hex = `:${agentPort.toString(16).toUpperCase().padStart(4, '0')}`;
  let count = 0;
  for (const file of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(file, 'utf8').split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols[1]?.endsWith(hex) && cols[3] === '01') count++;
    }
  }
  return count;
}

/** Processes whose argv is exactly `argv` (the exec'd command, not the kubectl that asked for it). */
function processesRunning(argv: string[]): number {
  const wanted = argv.join('\0') + '\0';
  let count = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'latin1') === wanted) count++;
    } catch {
      // gone meanwhile
    }
  }
  return count;
}

function podYaml(name: string, container: Record<string, unknown>, restartPolicy = 'Always'): string {
  return JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name, labels: {app: name}}, spec: {restartPolicy, containers: [{name: 'main', image: 'none', ...container}]}});
}

/** Creates an object from its JSON (pods mostly). */
async function createPod(manifest: string): Promise<void> {
  const file = join(dir, `pod-${randomBytes(4).toString('hex')}.json`);
  writeFileSync(file, manifest);
  const r = await run('1.33', ['create', '-f', file]);
  expect(r.code).toBe(0);
}

async function waitPhase(name: string, phase: string): Promise<void> {
  await until(`pod ${name} to be ${phase}`, async () => (await run('1.33', ['get', 'pod', name, '-o', 'jsonpath={.status.phase}'])).stdout === phase || undefined);
}

beforeAll(async () => {
  await waitForBuild();
  dir = mkdtempSync(join(tmpdir(), 'orch-streams-'));
  const [api, cm, readOnly, healthz] = [await freePort(), await freePort(), await freePort(), await freePort()];
  agentPort = await freePort();
  webPort = await freePort();
  up = spawn(process.execPath, [
    orchBin, 'up', '--data-dir', join(dir, 'data'),
    '--apiserver-arg', `secure-port=${api}`, '--apiserver-arg', 'bind-address=127.0.0.1',
    '--controller-manager-arg', `secure-port=${cm}`, '--controller-manager-arg', 'bind-address=127.0.0.1',
    '--agent-arg', `port=${agentPort}`, '--agent-arg', `read-only-port=${readOnly}`, '--agent-arg', `healthz-port=${healthz}`,
    '--agent-arg', 'address=127.0.0.1',
  ], {cwd: repoRoot, env: {...process.env, NO_COLOR: '1'}});
  up.stdout?.on('data', (d) => (upLog += d));
  up.stderr?.on('data', (d) => (upLog += d));
  orchconfig = join(dir, 'data', 'apiserver', 'admin.orchconfig');
  await until('orch up', () => upLog.includes('orch is up') || undefined, 60_000);
  await until('the node to be Ready', async () => (await run('1.33', ['get', 'nodes', '-o', 'jsonpath={.items[0].status.conditions[?(@.type=="Ready")].status}'])).stdout === 'True' || undefined);
  await createPod(podYaml('web', {
    command: ['python3', '-m', 'http.server', '--bind', '127.0.0.1', String(webPort)],
    ports: [{name: 'http', containerPort: webPort}],
    workingDir: dir,
    env: [{name: 'GREETING', value: 'hello from web'}],
  }));
  await createPod(podYaml('done', {command: ['true']}, 'Never'));
  await createPod(JSON.stringify({apiVersion: 'v1', kind: 'Service', metadata: {name: 'web'}, spec: {selector: {app: 'web'}, ports: [{port: 80, targetPort: 'http'}]}}));
  // alice may read pods (kubectl exec reads the pod first) but not exec into them.
  const rbac = (await run('1.33', ['api-versions'])).stdout.split('\n').find((v) => v.startsWith('rbac.') && v.endsWith('/v1'));
  await createPod(JSON.stringify({apiVersion: rbac, kind: 'Role', metadata: {name: 'pod-reader', namespace: 'default'}, rules: [{apiGroups: [''], resources: ['pods'], verbs: ['get', 'list']}]}));
  await createPod(JSON.stringify({
    apiVersion: rbac, kind: 'RoleBinding', metadata: {name: 'alice-reads', namespace: 'default'},
    roleRef: {apiGroup: rbac!.split('/')[0], kind: 'Role', name: 'pod-reader'}, subjects: [{apiGroup: rbac!.split('/')[0], kind: 'User', name: 'alice'}],
  }));
  for (const {version} of VERSIONS) {
    await createPod(podYaml(`shell-${version.replace('.', '')}`, {stdin: true, tty: true, command: ['sh']}, 'Never'));
    await createPod(podYaml(`echo-${version.replace('.', '')}`, {stdin: true, stdinOnce: true, command: ['sh', '-c', 'while read l; do echo got:$l; done; echo bye']}, 'Never'));
  }
  writeFileSync(join(dir, 'index.html'), 'served through the forward\n');
  await waitPhase('web', 'Running');
  await waitPhase('done', 'Succeeded');
  await until('the web pod to listen', () => new Promise<true | undefined>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(true));
    probe.listen(webPort, '127.0.0.1', () => probe.close(() => resolve(undefined)));
  }));
}, 120_000);

afterAll(async () => {
  if (up && up.exitCode === null) {
    up.kill('SIGTERM');
    await Promise.race([new Promise((r) => up.once('exit', r)), new Promise((r) => setTimeout(r, 10_000).unref())]);
    if (up.exitCode === null) up.kill('SIGKILL');
  }
  if (dir) rmSync(dir, {recursive: true, force: true});
});

describe.each(VERSIONS)('kubectl $version ($protocol)', ({version, execHeader, forwardHeader}) => {
  it('upgrades with the expected protocol, without falling back', async () => {
    const exec = await run(version, ['exec', 'web', '-v=8', '--', 'true']);
    expect(exec.code).toBe(0);
    const afterUpgrade = (log: string) => log.slice(log.indexOf('101 Switching Protocols'));
    expect(afterUpgrade(exec.stderr)).toMatch(execHeader);
    const forward = spawn(join(kubectlDir, `kubectl.${version}`), ['--kubeconfig', orchconfig, 'port-forward', 'pod/web', `:${webPort}`, '-v=8'], {env: kubectlEnv(orchconfig)});
    let out = '';
    forward.stdout.on('data', (d) => (out += d));
    forward.stderr.on('data', (d) => (out += d));
    try {
      const local = await until('the forward', () => /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out)?.[1], 20_000);
      execFileSync('curl', ['-sS', '--max-time', '10', '-o', '/dev/null', `http://127.0.0.1:${local}/index.html`]);
      await until('the upgrade', () => out.includes('101 Switching Protocols') || undefined, 10_000);
      expect(afterUpgrade(out)).toMatch(forwardHeader);
    } finally {
      forward.kill('SIGTERM');
    }
  }, 90_000);

  it('exec runs the command in the pod\'s context, with stdin, stderr and the exit code', async () => {
    const r = await run(version, ['exec', '-i', 'web', '--', 'sh', '-c', 'wc -l; echo "$GREETING"; pwd; echo oops >&2; exit 3'], {input: 'one\ntwo\n'});
    expect(r.stdout).toBe(`2\nhello from web\n${dir}\n`);
    expect(r.stderr).toContain('oops\n');
    expect(r.stderr).toContain('command terminated with exit code 3');
    expect(r.code).toBe(3);
    const ok = await run(version, ['exec', 'web', '-c', 'main', '--', 'id', '-u']);
    expect(ok).toEqual({code: 0, stdout: `${process.getuid?.()}\n`, stderr: ''});
  });

  it('exec -it gets a pseudo terminal that follows the window size', async () => {
    const session = `orch-streams-${version.replace('.', '')}-${process.pid}`;
    const out = join(dir, `${session}.out`);
    const command = `${join(kubectlDir, `kubectl.${version}`)} --kubeconfig ${orchconfig} exec -it web -- sh; echo "rc=$?" > ${out}; sleep 30`;
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '100', '-y', '30', command]);
    try {
      const pane = () => execFileSync('tmux', ['capture-pane', '-p', '-t', session]).toString();
      // (capture-pane trims the prompt's trailing space)
      await until('the shell prompt', () => /[#$]\s*$/m.test(pane()) || undefined, 20_000);
      execFileSync('tmux', ['send-keys', '-t', session, 'tty; stty size', 'Enter']);
      await until('the terminal and its size', () => (/\n30 100\n/.test(pane()) && /\/dev\/pts\/\d+/.test(pane())) || undefined, 10_000);
      execFileSync('tmux', ['resize-window', '-t', session, '-x', '90', '-y', '20']);
      // The resize travels as a message of its own; give it a moment before asking again.
      await new Promise((r) => setTimeout(r, 500));
      execFileSync('tmux', ['send-keys', '-t', session, 'stty size; exit 7', 'Enter']);
      await until('the second size', () => /\n20 90\n/.test(pane()) || undefined, 10_000);
      const rc = await until('kubectl to end', () => {
        try {
          return readFileSync(out, 'utf8');
        } catch {
          return undefined;
        }
      }, 10_000);
      expect(rc.trim()).toBe('rc=7');
      expect(pane()).toContain('command terminated with exit code 7');
    } finally {
      execFileSync('tmux', ['kill-session', '-t', session]);
    }
  }, 90_000);

  it('attach -it reaches a tty container\'s terminal, which follows the window size', async () => {
    const pod = `shell-${version.replace('.', '')}`;
    await waitPhase(pod, 'Running');
    const session = `orch-attach-${version.replace('.', '')}-${process.pid}`;
    const command = `${join(kubectlDir, `kubectl.${version}`)} --kubeconfig ${orchconfig} attach -it ${pod}; sleep 30`;
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '100', '-y', '30', command]);
    try {
      const pane = () => execFileSync('tmux', ['capture-pane', '-p', '-t', session]).toString();
      await until('kubectl to attach', () => pane().includes('try pressing enter') || undefined, 20_000);
      execFileSync('tmux', ['send-keys', '-t', session, 'echo $((6*7)); tty', 'Enter']);
      await until('the answer and the terminal', () => (/^42$/m.test(pane()) && /\/dev\/pts\/\d+/.test(pane())) || undefined, 10_000);
      execFileSync('tmux', ['resize-window', '-t', session, '-x', '90', '-y', '20']);
      await new Promise((r) => setTimeout(r, 500));
      execFileSync('tmux', ['send-keys', '-t', session, 'stty size', 'Enter']);
      await until('the new size', () => /^20 90$/m.test(pane()) || undefined, 10_000);
    } finally {
      execFileSync('tmux', ['kill-session', '-t', session]);
    }
  }, 90_000);

  it('attach connects to the container\'s stdin and output', async () => {
    const pod = `echo-${version.replace('.', '')}`;
    await waitPhase(pod, 'Running');
    const r = await run(version, ['attach', '-i', pod], {input: `line-${version}\n`});
    expect(r.stdout).toBe(`got:line-${version}\nbye\n`);
    expect(r.code).toBe(0);
  });

  it.each([
    ['pod/web', () => String(webPort)],
    ['svc/web', () => '80'],
  ])('port-forward %s carries HTTP to the pod\'s port (curl through the forward)', async (target, remote) => {
    const forward = spawn(join(kubectlDir, `kubectl.${version}`), ['--kubeconfig', orchconfig, 'port-forward', target, `:${remote()}`], {env: kubectlEnv(orchconfig)});
    let out = '';
    forward.stdout.on('data', (d) => (out += d));
    forward.stderr.on('data', (d) => (out += d));
    try {
      const local = await until('the forward', () => /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out)?.[1], 20_000);
      for (let i = 0; i < 2; i++) {
        const body = execFileSync('curl', ['-sS', '--max-time', '10', `http://127.0.0.1:${local}/index.html`]).toString();
        expect(body).toBe('served through the forward\n');
      }
    } finally {
      forward.kill('SIGTERM');
    }
  }, 90_000);

  it('cp copies a file into the pod and back, byte for byte', async () => {
    const original = randomBytes(256 * 1024 + 17);
    const source = join(dir, `source-${version}.bin`);
    const inPod = join(dir, `in-pod-${version}.bin`);
    const back = join(dir, `back-${version}.bin`);
    writeFileSync(source, original);
    expect((await run(version, ['cp', source, `web:${inPod}`])).code).toBe(0);
    expect(readFileSync(inPod).equals(original)).toBe(true);
    expect((await run(version, ['cp', `web:${inPod}`, back])).code).toBe(0);
    expect(readFileSync(back).equals(original)).toBe(true);
  });

  it('bad input gets upstream\'s error text', async () => {
    expect(await run(version, ['exec', 'nope', '--', 'true'])).toMatchObject({code: 1, stderr: 'Error from server (NotFound): pods "nope" not found\n'});
    expect(await run(version, ['exec', 'web', '-c', 'nope', '--', 'true'])).toMatchObject({code: 1, stderr: expect.stringContaining('container nope is not valid for pod web')});
    expect(await run(version, ['exec', 'done', '--', 'true'])).toMatchObject({code: 1, stderr: 'error: cannot exec into a container in a completed pod; current phase is Succeeded\n'});
    // orch up authorizes with RBAC: exec is `create` on pods/exec (a WebSocket GET needs `get` too).
    const forbidden = await run(version, ['exec', '--as=alice', 'web', '--', 'true']);
    expect(forbidden.code).toBe(1);
    expect(forbidden.stderr).toMatch(/pods "web" is forbidden: User "alice" cannot (create|get) resource "pods\/exec" in API group "" in the namespace "default"/);
    const missing = await run(version, ['exec', 'web', '--', 'no-such-command']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('exec: "no-such-command": executable file not found in $PATH');
  });

  it('port-forward to a port nobody listens on reports the refused connection', async () => {
    const closed = await freePort();
    const forward = spawn(join(kubectlDir, `kubectl.${version}`), ['--kubeconfig', orchconfig, 'port-forward', 'pod/web', `:${closed}`], {env: kubectlEnv(orchconfig)});
    let out = '';
    forward.stdout.on('data', (d) => (out += d));
    forward.stderr.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => forward.once('exit', (code) => resolve(code)));
    try {
      const local = await until('the forward', () => /Forwarding from 127\.0\.0\.1:(\d+) ->/.exec(out)?.[1], 20_000);
      try {
        execFileSync('curl', ['-sS', '--max-time', '5', `http://127.0.0.1:${local}/`], {stdio: 'pipe'});
      } catch {
        // curl fails: the connection is closed without an answer.
      }
      await until('the error', () => out.includes('connection refused') || undefined, 10_000);
      expect(out).toMatch(new RegExp(`an error occurred forwarding \\d+ -> ${closed}: error forwarding port ${closed} to pod web_default, uid [0-9a-f-]+: .*dial tcp4 127\\.0\\.0\\.1:${closed}: connect: connection refused`));
      // kubectl of these versions gives up on the connection after such an error.
      expect(await Promise.race([exited, new Promise((r) => setTimeout(() => r('running'), 15_000))])).toBe(1);
      expect(out).toContain('error: lost connection to pod');
    } finally {
      forward.kill('SIGKILL');
    }
  }, 90_000);

  it('a stream cut in the middle ends the exec process and its connections; both daemons keep serving', async () => {
    const baseline = agentConnections();
    const argv = ['sleep', `${3000 + Number(version.replace('.', ''))}`];
    const exec = spawn(join(kubectlDir, `kubectl.${version}`), ['--kubeconfig', orchconfig, 'exec', 'web', '--', ...argv], {env: kubectlEnv(orchconfig)});
    await until('the exec process', () => processesRunning(argv) === 1 || undefined, 15_000);
    expect(agentConnections()).toBeGreaterThanOrEqual(baseline + 1);
    exec.kill('SIGKILL');
    await until('the exec process to end', () => processesRunning(argv) === 0 || undefined, 15_000);
    await until('the agent connection to close', () => agentConnections() <= baseline || undefined, 15_000);
    const again = await run(version, ['exec', 'web', '--', 'echo', 'still serving']);
    expect(again).toEqual({code: 0, stdout: 'still serving\n', stderr: ''});
  }, 90_000);
});

describe('after every stream', () => {
  it('leaves no agent connection open', async () => {
    await until('no streaming connection to the agent', () => agentConnections() === 0 || undefined, 15_000);
  });
});
