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

export async function startEtcd(): Promise<EtcdServer> {
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
