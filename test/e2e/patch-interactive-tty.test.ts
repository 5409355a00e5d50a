/**
 * `orch patch -i` on a real terminal: tmux runs the CLI in a pseudo-terminal, the test answers the
 * Ink prompt with send-keys and reads the screen with capture-pane. Fails with a message naming the
 * package when tmux is not installed (./scripts/test.sh installs it).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {execFileSync, spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {orchBin} from '../helpers/run-orch.js';
import {requireTool} from '../helpers/tools.js';


let dir: string;
const sockets: string[] = [];
const tmuxOn = (socket: string) => (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], {encoding: 'utf8'});

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'orch-tty-'));
  writeFileSync(join(dir, 'pod.json'), JSON.stringify({apiVersion: 'v1', kind: 'Pod', metadata: {name: 'web', labels: {app: 'web'}}, spec: {containers: [{name: 'web', image: 'nginx'}]}}));
});
afterAll(() => {
  for (const socket of sockets) spawnSync('tmux', ['-L', socket, 'kill-server']);
  rmSync(dir, {recursive: true, force: true});
});

async function screenAfter(keys: string, waitFor: RegExp): Promise<string> {
  // CI set as on a CI runner: on a terminal the question is drawn all the same.
  const cmd = `CI=true ${process.execPath} ${orchBin} patch --local -f ${join(dir, 'pod.json')} --type merge -p '{"metadata":{"labels":{"app":"api"}}}' -i; echo EXIT=$?; sleep 30`;
  // A tmux server of its own per run, so runs never race on one server's start and stop.
  const socket = `orch-test-${process.pid}-${sockets.length}`;
  sockets.push(socket);
  const tmux = tmuxOn(socket);
  tmux('new-session', '-d', '-x', '120', '-y', '40', '-s', 'main', cmd);
  const capture = () => tmux('capture-pane', '-p', '-t', 'main');
  const deadline = Date.now() + 15_000;
  while (!/Apply this patch/.test(capture())) {
    if (Date.now() > deadline) throw new Error(`no prompt on screen:\n${capture()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  tmux('send-keys', '-t', 'main', keys);
  while (!waitFor.test(capture())) {
    if (Date.now() > deadline) throw new Error(`screen never matched ${waitFor}:\n${capture()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return capture();
}

describe('orch patch -i on a terminal', () => {
  beforeAll(() => requireTool('tmux', 'tmux'));
  it('shows the diff, and prints the result after y', async () => {
    const screen = await screenAfter('y', /EXIT=\d/);
    expect(screen).toContain('-    app: web');
    expect(screen).toContain('+    app: api');
    expect(screen).toContain('pod/web patched');
    expect(screen).toContain('EXIT=0');
  }, 30_000);

  it('applies nothing after n', async () => {
    const screen = await screenAfter('n', /EXIT=\d/);
    expect(screen).toContain('pod/web not patched');
    expect(screen).not.toContain('pod/web patched');
  }, 30_000);
});
