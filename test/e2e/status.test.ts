/**
 * `orch status` as a user runs it, against a real `orch apiserver` child process, with the
 * controller manager and the agent absent (their URLs point at free ports). Build first:
 * `npm run build`.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawn} from 'node:child_process';
import {copyFileSync, mkdirSync, mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {freePort, startApiServerProcess, type ServerProcess} from '../helpers/apiserver.js';
import {orchBin, repoRoot, type RunResult} from '../helpers/run-orch.js';

/** Runs the CLI without blocking the event loop (the helpers' clients share it). */
function runStatus(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [orchBin, 'status', ...args], {cwd: repoRoot, env: {...env, NO_COLOR: '1'}, stdio: ['ignore', 'pipe', 'pipe']});
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => proc.kill('SIGKILL'), 20_000);
    proc.on('error', reject);
    proc.on('close', (code) => {
      clearTimeout(timer);
      resolve({stdout, stderr, code: code ?? -1});
    });
  });
}

describe('orch status against a running API server', () => {
  let server: ServerProcess;
  let absent: string[];
  let cmPort: number;
  let agentPort: number;

  beforeAll(async () => {
    server = await startApiServerProcess({engine: 'sqlite'});
    cmPort = await freePort();
    agentPort = await freePort();
    absent = ['--controller-manager-url', `https://127.0.0.1:${cmPort}`, '--agent-url', `https://127.0.0.1:${agentPort}`];
  }, 30_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('-o json: the API server ready, the absent components unreachable with their errors, exit code 1', async () => {
    const r = await runStatus(['-o', 'json', '--orchconfig', server.orchconfigPath, ...absent]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const report = JSON.parse(r.stdout);
    expect(Object.keys(report)).toEqual(['components', 'leader', 'ready']);
    expect(report.ready).toBe(false);
    expect(report.leader).toBeNull();
    const [api, cm, agent] = report.components;
    expect(api).toMatchObject({name: 'apiserver', url: `https://127.0.0.1:${server.port}`, reachable: true, ready: true});
    expect(api.livez).toMatchObject({path: '/livez?verbose', httpStatus: 200, ok: true});
    expect(api.readyz).toMatchObject({path: '/readyz?verbose', httpStatus: 200, ok: true});
    // The real server's checks, as it lists them: readyz has the readiness-only ones, last `shutdown`.
    expect(api.livez.checks.map((c: {name: string}) => c.name)).toEqual(expect.arrayContaining(['ping', 'log', 'kvstore']));
    expect(api.readyz.checks.at(-1)).toEqual({name: 'shutdown', ok: true});
    expect(api.readyz.checks.every((c: {ok: boolean}) => c.ok)).toBe(true);
    expect(cm).toEqual({
      name: 'controller-manager', url: `https://127.0.0.1:${cmPort}`, reachable: false, ready: false, livez: null, readyz: null,
      error: `dial tcp 127.0.0.1:${cmPort}: connect: connection refused`,
    });
    expect(agent).toEqual({
      name: 'agent', url: `https://127.0.0.1:${agentPort}`, reachable: false, ready: false, livez: null, readyz: null,
      error: `dial tcp 127.0.0.1:${agentPort}: connect: connection refused`,
    });
  });

  it('--components apiserver: exit code 0', async () => {
    const r = await runStatus(['-o', 'json', '--orchconfig', server.orchconfigPath, '--components', 'apiserver', ...absent]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.ready).toBe(true);
    expect(report.components.map((c: {name: string}) => c.name)).toEqual(['apiserver']);
  });

  it('the table says the same, the leader line says why there is none, exit code 1', async () => {
    const r = await runStatus(['--orchconfig', server.orchconfigPath, ...absent]);
    expect(r.code).toBe(1);
    const lines = r.stdout.split('\n');
    expect(lines[0]).toMatch(/^COMPONENT\s+ENDPOINT\s+LIVEZ\s+READYZ\s+FAILING CHECKS\s+DETAIL$/);
    expect(lines[1]).toMatch(new RegExp(`^apiserver\\s+https://127\\.0\\.0\\.1:${server.port}\\s+ok\\s+ok$`));
    expect(lines[2]).toMatch(new RegExp(`^controller-manager\\s+https://127\\.0\\.0\\.1:${cmPort}\\s+-\\s+-\\s+dial tcp 127\\.0\\.0\\.1:${cmPort}: connect: connection refused$`));
    expect(r.stdout).toContain('Leader: none (lease orch-system/orch-controller-manager not found: no controller manager has won leader election yet)');
    expect(r.stdout).toContain('Ready: no');
  });

  it('without any orchconfig, finds the API server through the admin orchconfig in ~/.orch/apiserver', async () => {
    const home = mkdtempSync(join(tmpdir(), 'orch-status-home-'));
    try {
      mkdirSync(join(home, '.orch', 'apiserver'), {recursive: true});
      copyFileSync(server.orchconfigPath, join(home, '.orch', 'apiserver', 'admin.orchconfig'));
      const env: NodeJS.ProcessEnv = {...process.env, HOME: home};
      delete env.ORCHCONFIG;
      const r = await runStatus(['-o', 'json', '--components', 'apiserver'], env);
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).components[0]).toMatchObject({url: `https://127.0.0.1:${server.port}`, ready: true});
    } finally {
      rmSync(home, {recursive: true, force: true});
    }
  });

  it('refuses --watch without a terminal, before checking anything', async () => {
    const r = await runStatus(['--watch', '--orchconfig', server.orchconfigPath]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: --watch needs a terminal (stdout is not a TTY); run without --watch for a one-shot report\n');
  });
});
