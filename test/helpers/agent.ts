/**
 * `orch agent` as a user runs it, for integration tests and the bench: the built CLI as a child
 * process, standalone or pointed at an API server's admin orchconfig, with its own root, certificate
 * and (optionally) static pod directories under one temporary directory, free ports, and its klog
 * lines kept with their arrival times. Its read-only port serves `/pods` (plain HTTP), which is how
 * the tests see what the agent runs; a container's pid is in its containerID (`process://<pid>`).
 *
 * This machine runs cgroup v1, and may have swap on: the start checks for both are turned off.
 * Build first (`npm run build`).
 */
import {mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync} from 'node:fs';
import {request as httpRequest} from 'node:http';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {stringify as toYaml} from 'yaml';
import {freePort, sleep} from './apiserver.js';
import {waitForBuild} from './controller-manager.js';
import {spawnDaemon, type Exit, type LogLine} from './daemon-process.js';
import {orchBin} from './run-orch.js';

const START_TIMEOUT_MS = 20_000;

export interface AgentProcess {
  readonly pid: number;
  /** The temporary directory holding root/, certs/ and manifests/ (unless another manifest dir was given). */
  readonly dir: string;
  /** The static pod directory (--pod-manifest-path), when one was asked for. */
  readonly manifestDir?: string;
  readonly nodeName: string;
  /** http://127.0.0.1:<read-only port> */
  readonly readOnlyUrl: string;
  readonly lines: readonly LogLine[];
  output(): string;
  exit(): Exit | undefined;
  /** The first line at or after `since` matching `pattern`; rejects after timeoutMs or when the agent exits first. */
  waitForLine(pattern: RegExp, timeoutMs?: number, since?: number): Promise<LogLine>;
  /** The pods the agent knows, from its read-only `/pods`. */
  pods(): Promise<any[]>;
  /** SIGTERM (the agent stops its pods), SIGKILL after timeoutMs; then any container process it left is killed. */
  stop(timeoutMs?: number): Promise<Exit>;
  /** stop(), then removes the temporary directory (keeps a manifest dir that was passed in). */
  dispose(): Promise<void>;
}

export interface StartAgentOptions {
  /** API server mode with this orchconfig; standalone without. */
  orchconfigPath?: string;
  nodeName: string;
  /** Make a manifests/ directory and pass it as --pod-manifest-path (true), or pass this directory. */
  manifests?: boolean | string;
  /** Extra flags. */
  args?: string[];
  /** Reuse a directory (a second run of "the same" agent); made fresh otherwise. */
  dir?: string;
}

/** Starts the CLI and resolves once it logged "Agent started" and its read-only /pods answers. */
export async function startAgent(options: StartAgentOptions): Promise<AgentProcess> {
  await waitForBuild();
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'orch-agent-'));
  const rootDir = join(dir, 'root');
  mkdirSync(rootDir, {recursive: true});
  const manifestDir = typeof options.manifests === 'string' ? options.manifests : options.manifests ? join(dir, 'manifests') : undefined;
  if (manifestDir) mkdirSync(manifestDir, {recursive: true});
  const [port, readOnlyPort, healthzPort] = [await freePort(), await freePort(), await freePort()];
  const args = [
    orchBin, 'agent',
    ...(options.orchconfigPath ? ['--orchconfig', options.orchconfigPath] : []),
    '--fail-cgroupv1=false',
    '--fail-swap-on=false',
    '--root-dir', rootDir,
    '--cert-dir', join(dir, 'certs'),
    '--hostname-override', options.nodeName,
    '--address', '127.0.0.1',
    '--port', String(port),
    '--read-only-port', String(readOnlyPort),
    '--healthz-port', String(healthzPort),
    ...(manifestDir ? ['--pod-manifest-path', manifestDir] : []),
    ...(options.args ?? []),
  ];
  const {child, lines, exited, exit, output, waitForLine} = spawnDaemon('agent', args);
  const readOnlyUrl = `http://127.0.0.1:${readOnlyPort}`;

  // Every container pid the agent reported, so a killed agent leaves no process behind.
  const seenPids = new Set<number>();
  const pods = async (): Promise<any[]> => {
    // An empty list is `"items":null`, as upstream encodes it.
    const items = (JSON.parse(await httpGet(`${readOnlyUrl}/pods`)).items ?? []) as any[];
    for (const pid of items.flatMap(containerPids)) seenPids.add(pid);
    return items;
  };

  const stop = async (timeoutMs = 15_000): Promise<Exit> => {
    if (!exit()) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      await exited;
      clearTimeout(timer);
    }
    for (const pid of seenPids) killGroupIfLeader(pid);
    return exit()!;
  };

  try {
    await waitForLine(/"Agent started"/, START_TIMEOUT_MS);
    await pods();
  } catch (error) {
    await stop(1000);
    if (!options.dir) rmSync(dir, {recursive: true, force: true});
    throw error;
  }
  return {
    pid: child.pid!,
    dir,
    manifestDir,
    nodeName: options.nodeName,
    readOnlyUrl,
    lines,
    output,
    exit,
    waitForLine,
    pods,
    stop,
    async dispose() {
      await stop();
      if (!options.dir) rmSync(dir, {recursive: true, force: true});
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Pods and processes

/** The pids of a pod's containers, from their `process://<pid>` containerIDs. */
export function containerPids(pod: any): number[] {
  const statuses = [...(pod?.status?.initContainerStatuses ?? []), ...(pod?.status?.containerStatuses ?? [])];
  return statuses.flatMap((s: any) => {
    const match = /^process:\/\/(\d+)$/.exec(s?.containerID ?? '');
    return match ? [Number(match[1])] : [];
  });
}

/** The running container's pid, once the container is running. */
export function runningPid(pod: any, container?: string): number | undefined {
  const status = (pod?.status?.containerStatuses ?? []).find((s: any) => container === undefined || s.name === container);
  if (!status?.state?.running) return undefined;
  return containerPids({status: {containerStatuses: [status]}})[0];
}

/** Whether a process with this pid exists (and is not a zombie). */
export function processAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.replace(/^.*\) /s, '')[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * SIGKILL the process group a container ran in, if its leader is still there: the runtime makes each
 * container process a group leader, so a live leader with that pid is (barring pid reuse within a
 * test's seconds) the container a killed agent left behind.
 */
export function killGroupIfLeader(pid: number): void {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /s, '').split(' ');
    if (Number(fields[2]) !== pid || pid === process.pid) return;
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Polls `check` until it returns a value other than undefined/false (bounded), and returns it. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 10_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}

/** A pod manifest whose one container runs `sh -c script`. */
export function shellPod(name: string, script: string, spec: Record<string, unknown> = {}, container: Record<string, unknown> = {}): Record<string, any> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name},
    spec: {...spec, containers: [{name: 'main', image: 'busybox', command: ['sh', '-c', script], ...container}]},
  };
}

/** Writes a manifest as YAML, atomically (a rename), so the agent never reads half a file. */
export function writeManifest(dir: string, fileName: string, manifest: unknown): string {
  const path = join(dir, fileName);
  const temp = join(dir, `.${fileName}.tmp`);
  // A dot file is not a manifest to the file source (upstream ignores them too).
  writeFileSync(temp, toYaml(manifest));
  renameSync(temp, path);
  return path;
}

export function httpGet(url: string, timeoutMs = 5000): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, {method: 'GET', timeout: timeoutMs}, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => ((res.statusCode ?? 0) < 300 ? resolve(text) : reject(new Error(`GET ${url}: HTTP ${res.statusCode} ${text}`))));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
