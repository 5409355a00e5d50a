/**
 * The three probe handlers of the process runtime: exec (a command in the container's environment),
 * httpGet (2xx/3xx is success) and tcpSocket (a connection is success). Each resolves, never rejects.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import type {SpawnFn} from './process.js';
import type {Container, Probe} from './types.js';

export interface ProbeOutcome {
  result: 'success' | 'failure';
  /** Why it failed (output of a failed exec, HTTP status, connection error). */
  message?: string;
}

/** What an exec probe inherits from its container. */
export interface ExecEnvironment {
  env: Record<string, string>;
  cwd?: string;
  uid?: number;
  gid?: number;
}

const MAX_OUTPUT = 10 * 1024;

export function execProbe(spawn: SpawnFn, command: string[], environment: ExecEnvironment, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    if (command.length === 0) {
      resolve({result: 'failure', message: 'exec probe has no command'});
      return;
    }
    let output = '';
    const child = spawn(command[0], command.slice(1), {
      env: environment.env, cwd: environment.cwd, uid: environment.uid, gid: environment.gid,
      detached: true, stdio: ['ignore', 'pipe', 'pipe'],
    });
    const collect = (chunk: Buffer): void => {
      if (output.length < MAX_OUTPUT) output += chunk.toString('utf8');
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const timer = setTimeout(() => {
      // The probe's own process group: a probe that started children leaves none behind.
      if (child.pid) try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ }
      resolve({result: 'failure', message: `command timed out after ${timeoutMs / 1000}s`});
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      resolve({result: 'failure', message: err.message});
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({result: 'success'});
      else resolve({result: 'failure', message: output.trim() || `command exited with ${code ?? signal}`});
    });
  });
}

/** A named port resolves through the container's ports, as upstream does. */
export function resolvePort(port: number | string, container: Container): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return container.ports?.find((p) => p.name === port)?.containerPort;
}

export function httpGetProbe(spec: NonNullable<Probe['httpGet']>, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const https_ = spec.scheme === 'HTTPS';
    const headers: Record<string, string> = {'User-Agent': 'orch-probe/1.0', Accept: '*/*'};
    for (const h of spec.httpHeaders ?? []) headers[h.name] = h.value;
    const request = (https_ ? https : http).get({
      // Pods share the host's network here, so the default target is loopback rather than a pod IP.
      host: spec.host || '127.0.0.1',
      port,
      path: spec.path || '/',
      headers,
      timeout: timeoutMs,
      // Upstream does not verify the certificate of an HTTPS probe.
      ...(https_ ? {rejectUnauthorized: false} : {}),
    }, (response) => {
      response.resume();
      const status = response.statusCode ?? 0;
      if (status >= 200 && status < 400) resolve({result: 'success'});
      else resolve({result: 'failure', message: `HTTP probe failed with statuscode: ${status}`});
    });
    request.on('timeout', () => {
      request.destroy();
      resolve({result: 'failure', message: `Get "${https_ ? 'https' : 'http'}://${spec.host || '127.0.0.1'}:${port}${spec.path || '/'}": context deadline exceeded`});
    });
    request.on('error', (err) => resolve({result: 'failure', message: err.message}));
  });
}

export function tcpSocketProbe(host: string, port: number, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect({host, port});
    const done = (outcome: ProbeOutcome): void => {
      socket.destroy();
      resolve(outcome);
    };
    socket.setTimeout(timeoutMs, () => done({result: 'failure', message: `dial tcp ${host}:${port}: i/o timeout`}));
    socket.once('connect', () => done({result: 'success'}));
    socket.once('error', (err) => done({result: 'failure', message: `dial tcp ${host}:${port}: ${err.message}`}));
  });
}

/** Runs `probe` once against a container; grpc is not supported by the process runtime. */
export async function runProbe(
  probe: Probe, container: Container, exec: ExecEnvironment, spawn: SpawnFn, timeoutMs: number,
): Promise<ProbeOutcome | undefined> {
  if (probe.exec) return execProbe(spawn, probe.exec.command ?? [], exec, timeoutMs);
  if (probe.httpGet) {
    const port = resolvePort(probe.httpGet.port, container);
    if (port === undefined) return {result: 'failure', message: `port "${probe.httpGet.port}" not found in the container's ports`};
    return httpGetProbe(probe.httpGet, port, timeoutMs);
  }
  if (probe.tcpSocket) {
    const port = resolvePort(probe.tcpSocket.port, container);
    if (port === undefined) return {result: 'failure', message: `port "${probe.tcpSocket.port}" not found in the container's ports`};
    return tcpSocketProbe(probe.tcpSocket.host || '127.0.0.1', port, timeoutMs);
  }
  // Unknown handler (grpc): like upstream's probe errors, no verdict and no action.
  return undefined;
}
