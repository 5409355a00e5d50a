/**
 * A real etcd for tests: a single member on 127.0.0.1 with free ports and a temporary data directory.
 * Debian's `etcd-server` package provides /usr/bin/etcd (CI installs it).
 */
import {type ChildProcess, spawn} from 'node:child_process';
import {accessSync, constants, mkdtempSync, rmSync} from 'node:fs';
import {createServer} from 'node:net';
import {tmpdir} from 'node:os';
import {delimiter, join} from 'node:path';

export interface EtcdServer {
  /** The client URL, `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  readonly dataDir: string;
  /** Kills the process (SIGKILL) but keeps the data, for restart(). */
  kill(): Promise<void>;
  /** Sends a signal to the running process (e.g. SIGSTOP and SIGCONT, to freeze it). */
  signal(signal: NodeJS.Signals): void;
  /** Starts it again on the same ports and data; resolves once it answers. */
  restart(): Promise<void>;
  /** Kills it and removes its data directory. */
  stop(): Promise<void>;
}

const START_TIMEOUT_MS = 15_000;

export function etcdBinary(): string {
  for (const dir of (process.env.PATH ?? '/usr/bin').split(delimiter).concat('/usr/bin')) {
    const candidate = join(dir, 'etcd');
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  throw new Error('etcd is not installed: these tests need a real etcd server (apt-get install etcd-server)');
}

/** `extraArgs`: more etcd flags (the scale bench raises `--quota-backend-bytes` for its 150,000 pods). */
export async function startEtcd(extraArgs: string[] = []): Promise<EtcdServer> {
  const binary = etcdBinary();
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-etcd-'));
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name', 'default',
    '--data-dir', dataDir,
    '--listen-client-urls', endpoint,
    '--advertise-client-urls', endpoint,
    '--listen-peer-urls', peer,
    '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `default=${peer}`,
    '--log-level', 'error',
    ...extraArgs,
  ];
  let child: ChildProcess | undefined;

  const launch = async () => {
    const proc = spawn(binary, args, {stdio: ['ignore', 'ignore', 'pipe']});
    child = proc;
    let stderr = '';
    proc.stderr!.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    const exited = new Promise<never>((_, reject) =>
      proc.once('exit', (code) => reject(new Error(`etcd exited (code ${code}) before answering:\n${stderr}`))),
    );
    exited.catch(() => undefined);
    await Promise.race([waitHealthy(endpoint), exited]);
  };
  const kill = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await gone;
  };

  try {
    await launch();
  } catch (error) {
    await kill();
    rmSync(dataDir, {recursive: true, force: true});
    throw error;
  }
  return {
    endpoint,
    dataDir,
    kill,
    signal: (signal) => {
      if (child && child.exitCode === null) child.kill(signal);
    },
    restart: launch,
    stop: async () => {
      await kill();
      rmSync(dataDir, {recursive: true, force: true});
    },
  };
}

async function waitHealthy(endpoint: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      const response = await fetch(`${endpoint}/health`, {signal: AbortSignal.timeout(1000)});
      if (response.ok && ((await response.json()) as {health?: string}).health === 'true') return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`etcd at ${endpoint} did not become healthy within ${START_TIMEOUT_MS}ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface EtcdMember {
  readonly name: string;
  /** Its client URL. */
  readonly endpoint: string;
  /** SIGKILL; the data stays so restart() rejoins the cluster. */
  kill(): Promise<void>;
  /** Starts it again on the same ports and data (it rejoins as an existing member). */
  restart(): Promise<void>;
  readonly running: boolean;
}

export interface EtcdCluster {
  readonly members: EtcdMember[];
  /** Every member's client URL (for --kvstore-servers). */
  readonly endpoints: string[];
  /** The member that is the raft leader now (asked through etcd's JSON gateway). */
  leader(): Promise<EtcdMember>;
  /** Kills every member and removes the data directories. */
  stop(): Promise<void>;
}

/**
 * A real etcd cluster of `size` members (3 by default) on 127.0.0.1 with free ports, each with its
 * own temporary data directory; resolves once every member reports healthy (a quorum formed).
 */
export async function startEtcdCluster(size = 3): Promise<EtcdCluster> {
  const binary = etcdBinary();
  const token = `orch-test-${process.pid}-${Date.now()}`;
  const specs: {name: string; dataDir: string; client: string; peer: string}[] = [];
  for (let i = 0; i < size; i++) {
    specs.push({
      name: `m${i}`,
      dataDir: mkdtempSync(join(tmpdir(), `orch-etcd-m${i}-`)),
      client: `http://127.0.0.1:${await freePort()}`,
      peer: `http://127.0.0.1:${await freePort()}`,
    });
  }
  const initialCluster = specs.map((s) => `${s.name}=${s.peer}`).join(',');
  const children = new Map<string, ChildProcess>();

  const launch = (spec: (typeof specs)[number]) => {
    const proc = spawn(binary, [
      '--name', spec.name,
      '--data-dir', spec.dataDir,
      '--listen-client-urls', spec.client,
      '--advertise-client-urls', spec.client,
      '--listen-peer-urls', spec.peer,
      '--initial-advertise-peer-urls', spec.peer,
      '--initial-cluster', initialCluster,
      '--initial-cluster-token', token,
      // Ignored once the member has data (a restart rejoins the existing cluster).
      '--initial-cluster-state', 'new',
      // Short heartbeats: a killed leader is replaced within about a second.
      '--heartbeat-interval', '100',
      '--election-timeout', '1000',
      '--log-level', 'error',
    ], {stdio: ['ignore', 'ignore', 'pipe']});
    proc.stderr!.resume();
    children.set(spec.name, proc);
  };
  const kill = async (name: string) => {
    const proc = children.get(name);
    children.delete(name);
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await gone;
  };
  const stop = async () => {
    for (const spec of specs) await kill(spec.name);
    for (const spec of specs) rmSync(spec.dataDir, {recursive: true, force: true});
  };

  try {
    specs.forEach(launch);
    await Promise.all(specs.map((s) => waitHealthy(s.client)));
  } catch (error) {
    await stop();
    throw error;
  }
  const members: EtcdMember[] = specs.map((spec) => ({
      name: spec.name,
      endpoint: spec.client,
      kill: () => kill(spec.name),
      restart: async () => {
        launch(spec);
        await waitHealthy(spec.client);
      },
      get running() {
        return children.has(spec.name);
      },
    }));
  const status = async (endpoint: string) => {
    const response = await fetch(`${endpoint}/v3/maintenance/status`, {method: 'POST', body: '{}', signal: AbortSignal.timeout(2000)});
    return (await response.json()) as {leader: string; header: {member_id: string}};
  };
  return {
    endpoints: specs.map((s) => s.client),
    members,
    leader: async () => {
      const live = members.filter((m) => m.running);
      const ids = await Promise.all(live.map(async (m) => ({m, s: await status(m.endpoint)})));
      const found = ids.find(({s}) => s.header.member_id === s.leader);
      if (!found) throw new Error('no etcd member reports itself as the leader');
      return found.m;
    },
    stop,
  };
}
