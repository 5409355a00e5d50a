/**
 * `orch up` as a process for end-to-end tests: free ports for its three daemons, its command line,
 * bounded polling, and `orch status -o json` against it.
 */
import {spawn} from 'node:child_process';
import {orchBin} from './run-orch.js';
import {freePort} from './apiserver.js';

export interface Ports {
  api: number;
  cm: number;
  agent: number;
  readOnly: number;
  healthz: number;
}

export async function ports(): Promise<Ports> {
  return {api: await freePort(), cm: await freePort(), agent: await freePort(), readOnly: await freePort(), healthz: await freePort()};
}

export function upArgs(dataDir: string, p: Ports): string[] {
  return [
    'up', '--data-dir', dataDir,
    '--apiserver-arg', `secure-port=${p.api}`, '--apiserver-arg', 'bind-address=127.0.0.1',
    '--controller-manager-arg', `secure-port=${p.cm}`, '--controller-manager-arg', 'bind-address=127.0.0.1',
    '--controller-manager-arg', 'leader-elect-lease-duration=4s', '--controller-manager-arg', 'leader-elect-renew-deadline=3s',
    '--controller-manager-arg', 'leader-elect-retry-period=1s',
    '--agent-arg', `port=${p.agent}`, '--agent-arg', `read-only-port=${p.readOnly}`, '--agent-arg', `healthz-port=${p.healthz}`,
    '--agent-arg', 'address=127.0.0.1', '--agent-arg', 'node-status-update-frequency=2s',
  ];
}

export async function until<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export function status(orchconfig: string, p: Ports): Promise<{code: number; json: any}> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [orchBin, 'status', '-o', 'json', '--orchconfig', orchconfig, '--controller-manager-url', `https://127.0.0.1:${p.cm}`, '--agent-url', `https://127.0.0.1:${p.agent}`]);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(out);
      } catch {
        json = undefined;
      }
      resolve({code: code ?? -1, json});
    });
  });
}
