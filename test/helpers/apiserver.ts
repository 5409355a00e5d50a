/**
 * The API server for integration tests, two ways:
 * - in-process (`startApiServer`): a `new ApiServer(config)` on 127.0.0.1, port 0, in a temporary data
 *   directory, on SQLite or on an etcd from ./etcd.ts; fast, and its store is at hand.
 * - as the user runs it (`startApiServerProcess`): `bin/run.js apiserver` as a child process, so a test
 *   can `kill -9` it and start it again on the same data directory (build first: `npm run build`).
 * Both give an `ApiClient` that speaks HTTPS with the admin client certificate of the generated
 * orchconfig, and clients talk to the server only asynchronously: a synchronous child process call
 * would block the event loop that serves the in-process server, and deadlock.
 */
import {type ChildProcess, spawn} from 'node:child_process';
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {Agent, request as httpsRequest} from 'node:https';
import type {IncomingHttpHeaders} from 'node:http';
import {createServer} from 'node:net';
import {tmpdir} from 'node:os';
import {dirname, join} from 'node:path';
import {parse as parseYaml} from 'yaml';
import {ApiServer, type ApiServerConfig} from '../../src/daemons/apiserver/server.js';
import {apiServerConfig, compatibilityConfig} from '../../src/daemons/apiserver/config.js';
import {versionInfo} from '../../src/lib/version.js';
import {configureKlog} from '../../src/lib/klog.js';
import {orchBin, repoRoot} from './run-orch.js';
import {emptyOrchConfig, serializeOrchConfig} from '../../src/client/orchconfig.js';

export type Engine = 'sqlite' | 'etcd';

const START_TIMEOUT_MS = 20_000;

// ---------------------------------------------------------------------------------------------
// Credentials and an HTTPS client

export interface AdminCredentials {
  server: string;
  caPem: string;
  certPem: string;
  keyPem: string;
}

/** The server URL and the admin's client certificate, from the generated orchconfig's embedded data. */
export function readAdminOrchconfig(path: string): AdminCredentials {
  const config = parseYaml(readFileSync(path, 'utf8')) as {
    clusters: {cluster: {server: string; 'certificate-authority-data': string}}[];
    users: {user: {'client-certificate-data': string; 'client-key-data': string}}[];
  };
  const b64 = (s: string) => Buffer.from(s, 'base64').toString('utf8');
  return {
    server: config.clusters[0].cluster.server,
    caPem: b64(config.clusters[0].cluster['certificate-authority-data']),
    certPem: b64(config.users[0].user['client-certificate-data']),
    keyPem: b64(config.users[0].user['client-key-data']),
  };
}

export interface ApiResponse<T = any> {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The parsed body (undefined when it is not JSON). */
  body: T;
}

export interface RequestOptions {
  /** An object is sent as JSON; a string or Buffer as is. */
  body?: unknown;
  contentType?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export interface WatchStream {
  /** Every event received so far, in order. */
  readonly events: Array<{type: string; object: any}>;
  /** The HTTP status of the watch response. */
  readonly status: Promise<number>;
  /** Resolves with the first event (already received or to come) that matches, or rejects after timeoutMs. */
  next(match: (event: {type: string; object: any}) => boolean, timeoutMs?: number): Promise<{type: string; object: any}>;
  close(): void;
}

export interface ClientIdentity {
  /** Send the admin client certificate (default true). */
  clientCert?: boolean;
  /** A bearer token. */
  token?: string;
}

/** HTTPS with keep-alive (HTTP/1.1) to the API server, as the admin (client certificate) or as a token user. */
export class ApiClient {
  readonly agent: Agent;

  constructor(
    readonly credentials: AdminCredentials,
    private readonly identity: ClientIdentity = {},
  ) {
    const withCert = identity.clientCert ?? true;
    this.agent = new Agent({
      keepAlive: true,
      ca: credentials.caPem,
      ...(withCert ? {cert: credentials.certPem, key: credentials.keyPem} : {}),
    });
  }

  /** The same server with another identity. */
  as(identity: ClientIdentity): ApiClient {
    return new ApiClient(this.credentials, identity);
  }

  request<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
    const payload =
      options.body === undefined ? undefined : typeof options.body === 'string' || Buffer.isBuffer(options.body) ? options.body : JSON.stringify(options.body);
    const headers: Record<string, string> = {accept: 'application/json', ...options.headers};
    if (payload !== undefined) headers['content-type'] = options.contentType ?? 'application/json';
    if (this.identity.token) headers.authorization = `Bearer ${this.identity.token}`;
    return this.send<T>(method, path, headers, payload, options, true);
  }

  /**
   * One try; a request that meets a kept-alive socket the server closed as idle just before it was
   * sent (`reusedSocket` and a reset or hang-up: the server saw nothing) is sent once more on a new
   * socket, as Node's documentation advises and as Go's transport does for such a socket.
   */
  private send<T>(method: string, path: string, headers: Record<string, string>, payload: string | Buffer | undefined, options: RequestOptions, retry: boolean): Promise<ApiResponse<T>> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        new URL(path, this.credentials.server),
        {method, headers, agent: this.agent, timeout: options.timeoutMs ?? 10_000},
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            let body: any;
            try {
              body = JSON.parse(text);
            } catch {
              body = undefined;
            }
            resolve({status: res.statusCode ?? 0, headers: res.headers, text, body});
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`${method} ${path} timed out`)));
      req.on('error', (error: NodeJS.ErrnoException) => {
        const closedIdle = req.reusedSocket && (error.code === 'ECONNRESET' || error.message === 'socket hang up');
        if (retry && closedIdle) this.send<T>(method, path, headers, payload, options, false).then(resolve, reject);
        else reject(error);
      });
      req.end(payload);
    });
  }

  get = <T = any>(path: string, options?: RequestOptions) => this.request<T>('GET', path, options);
  post = <T = any>(path: string, body: unknown, options?: RequestOptions) => this.request<T>('POST', path, {...options, body});
  put = <T = any>(path: string, body: unknown, options?: RequestOptions) => this.request<T>('PUT', path, {...options, body});
  delete = <T = any>(path: string, options?: RequestOptions) => this.request<T>('DELETE', path, options);
  patch = <T = any>(path: string, body: unknown, contentType: string, options?: RequestOptions) =>
    this.request<T>('PATCH', path, {...options, body, contentType});

  /** Opens `path` (which should carry `watch=1`) and collects its newline-delimited events. */
  watch(path: string): WatchStream {
    const events: Array<{type: string; object: any}> = [];
    const waiters = new Set<() => void>();
    const notify = () => waiters.forEach((w) => w());
    let ended = false;
    let resolveStatus!: (s: number) => void;
    const status = new Promise<number>((r) => (resolveStatus = r));
    const headers: Record<string, string> = {accept: 'application/json'};
    if (this.identity.token) headers.authorization = `Bearer ${this.identity.token}`;
    // Its own connection: a long-running response must not hold a keep-alive socket the other requests need.
    const req = httpsRequest(new URL(path, this.credentials.server), {method: 'GET', headers, agent: new Agent({...this.agent.options, keepAlive: false})}, (res) => {
      resolveStatus(res.statusCode ?? 0);
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let newline: number;
        while ((newline = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, newline).trim();
          buffer = buffer.slice(newline + 1);
          if (line) events.push(JSON.parse(line));
        }
        notify();
      });
      res.on('end', () => {
        ended = true;
        if (buffer.trim() && (res.statusCode ?? 0) >= 300) events.push({type: 'HTTP', object: JSON.parse(buffer)});
        notify();
      });
      res.on('error', () => undefined);
    });
    req.on('error', () => {
      ended = true;
      resolveStatus(0);
      notify();
    });
    req.end();
    return {
      events,
      status,
      next(match, timeoutMs = 10_000) {
        return new Promise((resolve, reject) => {
          const check = () => {
            const found = events.find(match);
            if (found) {
              done();
              resolve(found);
            } else if (ended) {
              done();
              reject(new Error(`watch ${path} ended without the expected event; got ${JSON.stringify(events.map((e) => e.type))}`));
            }
          };
          const timer = setTimeout(() => {
            done();
            reject(new Error(`no matching event on ${path} within ${timeoutMs}ms; got ${JSON.stringify(events.map((e) => e.type))}`));
          }, timeoutMs);
          const done = () => {
            clearTimeout(timer);
            waiters.delete(check);
          };
          waiters.add(check);
          check();
        });
      },
      close() {
        req.destroy();
      },
    };
  }

  /** Polls until `check` resolves to true (bounded). */
  async waitFor(check: () => Promise<boolean>, what: string, timeoutMs = START_TIMEOUT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        if (await check()) return;
      } catch {
        // not answering yet
      }
      if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs}ms waiting for ${what}`);
      await sleep(100);
    }
  }

  /** Until /readyz answers 200. */
  waitReady(timeoutMs = START_TIMEOUT_MS): Promise<void> {
    return this.waitFor(async () => (await this.get('/readyz', {timeoutMs: 2000})).status === 200, `${this.credentials.server}/readyz`, timeoutMs);
  }

  close(): void {
    this.agent.destroy();
  }
}

// ---------------------------------------------------------------------------------------------
// In-process server

export interface InProcessServer {
  server: ApiServer;
  dataDir: string;
  orchconfigPath: string;
  client: ApiClient;
  /** Stops the server (the shutdown sequence) and removes the data directory. */
  stop(): Promise<void>;
}

/** A server configuration with orch's defaults, on 127.0.0.1 and a free port, in `dataDir`. */
export function testConfig(dataDir: string, engine: Engine, etcdEndpoint?: string, overrides: Partial<ApiServerConfig> = {}): ApiServerConfig {
  if (engine === 'etcd' && !etcdEndpoint) throw new Error('the etcd engine needs an etcd endpoint');
  const base = apiServerConfig(
    {
      'data-dir': dataDir,
      'bind-address': '127.0.0.1',
      'secure-port': 0,
      ...(engine === 'etcd' ? {'kvstore-servers': [etcdEndpoint], 'kvstore-prefix': `/registry-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`} : {}),
    },
    versionInfo(),
  );
  return {
    ...base, ...overrides, storage: {...base.storage, ...overrides.storage},
    admission: {...base.admission, disable: [...TEST_SERVER_DISABLED_ADMISSION], ...overrides.admission},
  };
}

/**
 * The beta APIs orch carries (LeaseCandidate, ClusterTrustBundle, MutatingAdmissionPolicy) are off
 * by default, as upstream: a test that uses them turns them on as a user would, with
 * --runtime-config=api/beta=true and their feature gates.
 */
export function betaApisConfig(): Partial<ApiServerConfig> {
  return compatibilityConfig({
    'runtime-config': {'api/beta': 'true'},
    'feature-gates': {CoordinatedLeaderElection: true, ClusterTrustBundle: true, MutatingAdmissionPolicy: true},
  });
}

/**
 * The admission plugins test servers leave out, as upstream's integration servers do: no controller
 * manager runs beside them, so no namespace gets its `default` service account (ServiceAccount would
 * refuse every pod) and no node loses its not-ready taint (TaintNodesByCondition). A test that wants
 * them passes an `admission` override with its own `disable` list (or `--disable-admission-plugins`).
 */
export const TEST_SERVER_DISABLED_ADMISSION = ['ServiceAccount', 'TaintNodesByCondition'];

/**
 * Starts an ApiServer in this process and waits until /readyz passes. On etcd, each server gets its
 * own key prefix, so several can share one etcd.
 */
export async function startApiServer(options: {engine: Engine; etcdEndpoint?: string; config?: Partial<ApiServerConfig>}): Promise<InProcessServer> {
  // Info lines would drown the test report; warnings and errors still show.
  configureKlog({out: () => undefined});
  const dataDir = mkdtempSync(join(tmpdir(), 'orch-apiserver-'));
  const config = testConfig(dataDir, options.engine, options.etcdEndpoint, options.config);
  const server = new ApiServer(config);
  try {
    await server.start();
  } catch (error) {
    await server.stop().catch(() => undefined);
    rmSync(dataDir, {recursive: true, force: true});
    throw error;
  }
  const client = new ApiClient(readAdminOrchconfig(config.orchconfigPath));
  const stop = async () => {
    client.close();
    await server.stop();
    rmSync(dataDir, {recursive: true, force: true});
  };
  try {
    await client.waitReady();
  } catch (error) {
    await stop();
    throw error;
  }
  return {server, dataDir, orchconfigPath: config.orchconfigPath, client, stop};
}

// ---------------------------------------------------------------------------------------------
// The CLI as a child process

export interface ServerProcess {
  readonly dataDir: string;
  readonly orchconfigPath: string;
  readonly port: number;
  /** The process id of the running server (undefined between kill9() and restart()). */
  readonly pid: number | undefined;
  /** The client for the running server (a new one after restart()). */
  readonly client: ApiClient;
  /** Its output so far (klog lines), for failure messages. */
  output(): string;
  /** SIGKILL, no shutdown sequence; the data directory stays. */
  kill9(): Promise<void>;
  /** Starts it again on the same data directory, port and store; resolves once /readyz passes. */
  restart(): Promise<void>;
  /** SIGTERM (graceful), SIGKILL if it does not exit in time, then removes the data directory. */
  stop(): Promise<void>;
}

/** `orch apiserver` as a user runs it; `args` are extra flags. Resolves once /readyz passes. */
export async function startApiServerProcess(options: {
  engine: Engine;
  etcdEndpoint?: string;
  args?: string[];
  dataDir?: string;
  /** A command the server runs under, e.g. ['prlimit', '--fsize=1000000', '--']; the node binary and its arguments follow. */
  wrapper?: string[];
  /** Several servers of one cluster: the address and port to serve on (default 127.0.0.1 and a free port). */
  bindAddress?: string;
  port?: number;
  /** The kvstore prefix on etcd (default one of its own, `/registry-<port>`); servers of one cluster share it. */
  kvstorePrefix?: string;
  /** Extra environment variables of the process. */
  env?: Record<string, string>;
}): Promise<ServerProcess> {
  await waitForBuild();
  if (options.engine === 'etcd' && !options.etcdEndpoint) throw new Error('the etcd engine needs an etcd endpoint');
  // A given data directory (e.g. on a small file system the test mounted) is used as is.
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'orch-apiserver-cli-'));
  const orchconfigPath = join(dataDir, 'admin.orchconfig');
  const port = options.port ?? (await freePort());
  const args = [
    orchBin, 'apiserver',
    '--data-dir', dataDir,
    '--secure-port', String(port),
    '--bind-address', options.bindAddress ?? '127.0.0.1',
    ...(options.engine === 'etcd' ? ['--kvstore-servers', options.etcdEndpoint as string, '--kvstore-prefix', options.kvstorePrefix ?? `/registry-${port}`] : []),
    ...(options.args?.some((a) => /^--(disable-admission-plugins|admission-control)(=|$)/.test(a)) ? [] : ['--disable-admission-plugins', TEST_SERVER_DISABLED_ADMISSION.join(',')]),
    ...(options.args ?? []),
  ];
  let child: ChildProcess | undefined;
  let output = '';
  let client: ApiClient | undefined;

  const launch = async () => {
    await waitForBuild();
    rmSync(orchconfigPath, {force: true});
    const [command, ...commandArgs] = [...(options.wrapper ?? []), process.execPath, ...args];
    const proc = spawn(command!, commandArgs, {cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, NO_COLOR: '1', ...options.env}});
    child = proc;
    const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-20_000));
    proc.stdout!.on('data', keep);
    proc.stderr!.on('data', keep);
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!existsSync(orchconfigPath)) {
      if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`orch apiserver exited (${proc.exitCode ?? proc.signalCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`orch apiserver wrote no orchconfig within ${START_TIMEOUT_MS}ms:\n${output}`);
      await sleep(50);
    }
    client?.close();
    client = new ApiClient(readAdminOrchconfig(orchconfigPath));
    await client.waitReady(Math.max(1000, deadline - Date.now())).catch((error: Error) => {
      throw new Error(`${error.message}\n${output}`);
    });
  };
  const kill9 = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const gone = new Promise((resolve) => proc.once('exit', resolve));
    proc.kill('SIGKILL');
    await gone;
  };
  const stop = async () => {
    client?.close();
    const proc = child;
    if (proc && proc.exitCode === null && proc.signalCode === null) {
      const gone = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await gone;
      clearTimeout(timer);
    }
    child = undefined;
    rmSync(dataDir, {recursive: true, force: true});
  };

  try {
    await launch();
  } catch (error) {
    await kill9();
    rmSync(dataDir, {recursive: true, force: true});
    throw error;
  }
  return {
    dataDir,
    orchconfigPath,
    port,
    get pid() {
      return child?.pid;
    },
    get client() {
      return client as ApiClient;
    },
    output: () => output,
    kill9,
    restart: launch,
    stop,
  };
}

/** The built CLI; waits a little, as a concurrent `npm run build` empties dist/ for a moment. */
async function waitForBuild(timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(join(repoRoot, 'dist', 'main.js')) || !existsSync(join(repoRoot, 'oclif.manifest.json'))) {
    if (Date.now() > deadline) throw new Error('build the CLI first: npm run build');
    await sleep(200);
  }
}

// ---------------------------------------------------------------------------------------------
// Small shared pieces

/**
 * Writes a client-configuration file (orchconfig/kubeconfig format) for one identity: a bearer token,
 * a client certificate, or none (a webhook's client configuration); returns the path.
 */
export function writeClientOrchconfig(
  file: string,
  o: {server: string; caPem: string; token?: string; cert?: {certPem: string; keyPem: string}; namespace?: string},
): string {
  const b64 = (pem: string) => Buffer.from(pem).toString('base64');
  const config = emptyOrchConfig();
  config.clusters.set('c', {server: o.server, 'certificate-authority-data': b64(o.caPem)});
  config.users.set('u', {
    ...(o.token ? {token: o.token} : {}),
    ...(o.cert ? {'client-certificate-data': b64(o.cert.certPem), 'client-key-data': b64(o.cert.keyPem)} : {}),
  });
  config.contexts.set('c', {cluster: 'c', user: 'u', ...(o.namespace ? {namespace: o.namespace} : {})});
  config.currentContext = 'c';
  writeFileSync(file, serializeOrchConfig(config));
  return file;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (address && typeof address === 'object' ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A ConfigMap manifest. */
export function configMap(name: string, data: Record<string, string> = {}, labels?: Record<string, string>): Record<string, unknown> {
  return {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, ...(labels ? {labels} : {})}, data};
}

/** A Pod manifest with one container. */
export function pod(name: string, labels?: Record<string, string>): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {name, ...(labels ? {labels} : {})},
    spec: {containers: [{name: 'app', image: 'nginx:1.27'}]},
  };
}

// ---------------------------------------------------------------------------------------------
// kubectl

export interface KubectlResult {
  stdout: string;
  stderr: string;
  code: number;
}

/** Runs kubectl asynchronously with `--kubeconfig`, killed after timeoutMs; `input` goes to its stdin. */
/**
 * kubectl's environment for one server: its own discovery cache beside the kubeconfig. kubectl keys
 * the shared cache (~/.kube/cache, six hours) by host and port only, so a later server on a reused
 * port, with other names (`--names kubernetes` after orch's) or other groups, would be read through
 * the earlier server's discovery and asked for paths it does not serve.
 */
export function kubectlEnv(kubeconfig: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return {...process.env, KUBECACHEDIR: join(dirname(kubeconfig), '.kubectl-cache'), ...extra};
}

export function kubectl(kubeconfig: string, args: string[], options: {input?: string; timeoutMs?: number} = {}): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn('kubectl', ['--kubeconfig', kubeconfig, '--request-timeout=10s', ...args], {env: kubectlEnv(kubeconfig), stdio: ['pipe', 'pipe', 'pipe']});
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), options.timeoutMs ?? 20_000);
    proc.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({stdout, stderr, code: code ?? (signal ? -1 : 0)});
    });
    proc.stdin.end(options.input ?? '');
  });
}

/** A long-running kubectl (such as `get -w`): its output as it comes, and a way to stop it. */
export interface KubectlStream {
  output(): string;
  /** Resolves once the output matches, rejects after timeoutMs. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
  stop(): Promise<void>;
}

export function kubectlStream(kubeconfig: string, args: string[]): KubectlStream {
  const proc = spawn('kubectl', ['--kubeconfig', kubeconfig, ...args], {env: kubectlEnv(kubeconfig), stdio: ['ignore', 'pipe', 'pipe']});
  let out = '';
  proc.stdout.on('data', (c: Buffer) => (out += c.toString()));
  proc.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<void>((resolve) => proc.once('close', () => resolve()));
  return {
    output: () => out,
    async waitFor(pattern, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(out)) {
        if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`kubectl ${args.join(' ')} exited before printing ${pattern}:\n${out}`);
        if (Date.now() > deadline) throw new Error(`kubectl ${args.join(' ')} did not print ${pattern} within ${timeoutMs}ms:\n${out}`);
        await sleep(50);
      }
      return out;
    },
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}
