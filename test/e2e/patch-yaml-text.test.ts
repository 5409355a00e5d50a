/**
 * Patches written in YAML, as kubectl reads them (through its YAML-to-JSON converter, for every
 * --type; text starting with `{` is JSON only): `orch patch --local` gives what `kubectl patch
 * --local` gives, a JSON patch in flow style included.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {spawnSync} from 'node:child_process';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {runOrch} from '../helpers/run-orch.js';
import {waitForBuild} from '../helpers/controller-manager.js';
import {parsePatch} from '../../src/cmd/patch/run.js';

let dir: string;
let file: string;
beforeAll(async () => {
  await waitForBuild();
  dir = mkdtempSync(join(tmpdir(), 'orch-patch-yaml-'));
  file = join(dir, 'deploy.yaml');
  writeFileSync(file, 'apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, labels: {app: web}}\nspec:\n  replicas: 2\n  paused: true\n  template:\n    spec:\n      containers: [{name: app, image: nginx}]\n');
});
afterAll(() => rmSync(dir, {recursive: true, force: true}));

const kubectlPatch = (args: string[]) => spawnSync('kubectl', ['patch', '--local', '-f', file, '-o', 'json', ...args], {encoding: 'utf8'});

describe('YAML patch text', () => {
  it.each([
    ['json, flow style', ['--type', 'json', '-p', '[{op: remove, path: /spec/paused}, {op: replace, path: /spec/replicas, value: 3}]']],
    ['json, block style', ['--type', 'json', '-p', '- op: add\n  path: /metadata/labels/tier\n  value: front\n']],
    ['merge, block style', ['--type', 'merge', '-p', 'spec: {replicas: 5}']],
    ['strategic, block style', ['-p', 'spec:\n  template: {spec: {containers: [{name: app, image: "nginx:2"}]}}\n']],
  ])('%s: the result kubectl patch --local gives', (_name, args) => {
    const orch = runOrch(['patch', '--local', '-f', file, '-o', 'json', ...args]);
    const kubectl = kubectlPatch(args);
    expect(kubectl.status).toBe(0);
    expect(orch).toMatchObject({code: 0, stderr: ''});
    expect(JSON.parse(orch.stdout)).toEqual(JSON.parse(kubectl.stdout));
  });

  it('refuses a flow-style mapping as kubectl does: text starting with { must be JSON', () => {
    const args = ['--type', 'merge', '-p', '{spec: {replicas: 5}}'];
    expect(kubectlPatch(args).status).not.toBe(0);
    const orch = runOrch(['patch', '--local', '-f', file, '-o', 'json', ...args]);
    expect(orch.code).toBe(1);
    expect(orch.stderr).toContain('error: invalid JSON document in the patch: ');
  });

  it('reports YAML that is not valid as a YAML error, and more than one document', async () => {
    await expect(parsePatch('{"op": "remove",')).rejects.toThrow('invalid JSON document in the patch: ');
    await expect(parsePatch('op: [remove')).rejects.toThrow('the patch is neither valid JSON nor valid YAML: ');
    await expect(parsePatch('a: 1\n---\nb: 2\n')).rejects.toThrow('the patch must be a single JSON or YAML document, got 2');
    expect(await parsePatch('[{op: test, path: /a, value: "1"}]')).toEqual([{op: 'test', path: '/a', value: '1'}]);
  });
});
