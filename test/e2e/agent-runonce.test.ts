/** `orch agent --runonce`: start the static pods, wait for them, print their status, exit. */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {runOrch} from '../helpers/run-orch.js';

let dir: string;
const pod = (name: string, script: string) =>
  `apiVersion: v1\nkind: Pod\nmetadata: {name: ${name}}\nspec:\n  restartPolicy: Never\n  containers:\n  - name: main\n    image: sh\n    command: ["sh", "-c", ${JSON.stringify(script)}]\n`;
const base = (manifests: string) => ['agent', '--runonce', '--enable-server=false', '--healthz-port=0', '--pod-manifest-path', manifests, '--root-dir', join(dir, 'root'), '--fail-cgroupv1=false', '--fail-swap-on=false', '--hostname-override=runonce'];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'orch-runonce-'));
  mkdirSync(join(dir, 'ok'));
  writeFileSync(join(dir, 'ok', 'a.yaml'), pod('a', 'exit 0'));
  mkdirSync(join(dir, 'bad'));
  writeFileSync(join(dir, 'bad', 'b.yaml'), pod('b', 'exit 3'));
});
afterAll(() => rmSync(dir, {recursive: true, force: true}));

describe('orch agent --runonce', () => {
  it('runs the static pods to completion, prints their status and exits 0', () => {
    const r = runOrch(base(join(dir, 'ok')));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('default/a-runonce\tSucceeded\tmain=exited(0)\n');
  });
  it('exits 1 when a pod fails, with the exit code in the status line', () => {
    const r = runOrch(base(join(dir, 'bad')));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('default/b-runonce\tFailed\tmain=exited(3)\n');
  });
  it('is refused together with an explicitly enabled server', () => {
    const r = runOrch(['agent', '--runonce', '--enable-server=true', '--fail-cgroupv1=false']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/runonce/);
  });
});
