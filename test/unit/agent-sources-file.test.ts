/**
 * The static pod file source on a real temporary directory, with the PodConfig merger behind it:
 * a new manifest shows up within a second through file-system events (the periodic check is set
 * to a minute so it cannot be what finds it), edits replace the pod, deletions remove it,
 * dotfiles and subdirectories are ignored, bad files are reported and skipped.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, mkdir, rm, unlink, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../src/lib/klog.js';
import { configHashAnnotation, configSourceAnnotation, FileSource, PodConfig, type PodUpdate, type SourceProblem } from '../../src/daemons/agent/sources/index.js';

const quiet: Logger = { info() {}, warning() {}, error() {}, v: () => ({ enabled: false, info() {} }) };
const manifest = (name: string, command = 'sleep') =>
  `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\nspec:\n  containers:\n  - name: main\n    image: none\n    command: [${command}, "100"]\n`;

// The file checks run every 60 s in these tests (startSource), so a change seen within the 10 s
// bounds below came through the file-system watch; the margin is for loaded CI machines.
async function eventually<T>(check: () => T | undefined | false, timeoutMs = 3000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs}ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

let dir: string;
let updates: PodUpdate[];
let problems: SourceProblem[];
let source: FileSource | undefined;
let config: PodConfig;

function startSource(path: string, checkFrequencyMs = 60_000): FileSource {
  source = new FileSource({ path, nodeName: 'node-1', checkFrequencyMs, push: (s, pods) => config.set(s, pods), onProblem: (p) => problems.push(p), logger: quiet });
  source.start();
  return source;
}

const seen = (op: PodUpdate['op'], name: string) => updates.find((u) => u.op === op && u.pods.some((p) => p.metadata.name === name));
const names = () => config.pods('file').map((p) => p.metadata.name).sort();

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-static-'));
  updates = [];
  problems = [];
  config = new PodConfig({ listener: (u) => updates.push(u), logger: quiet });
});
afterEach(async () => {
  await source?.stop();
  source = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('file source', () => {
  it('sees a new manifest within a second through a file-system event, not the periodic check', async () => {
    const file = startSource(dir);
    await eventually(() => updates.length > 0); // the first read: an empty set, the source is ready
    expect(updates[0]).toEqual({ op: 'ADD', source: 'file', pods: [] });
    await eventually(() => file.watching);
    const written = Date.now();
    await writeFile(join(dir, 'web.yaml'), manifest('web'));
    const added = await eventually(() => seen('ADD', 'web-node-1'));
    expect(Date.now() - written).toBeLessThan(1000);
    const pod = added.pods[0]!;
    expect(pod.metadata.annotations).toMatchObject({ [configSourceAnnotation()]: 'file', [configHashAnnotation()]: pod.metadata.uid });
    expect(pod.spec.nodeName).toBe('node-1');
  });

  it('replaces the pod when its file is edited (new UID and hash) and removes it when the file is deleted', async () => {
    await writeFile(join(dir, 'web.yaml'), manifest('web'));
    startSource(dir);
    const first = (await eventually(() => seen('ADD', 'web-node-1'))).pods[0]!;
    updates = [];

    await writeFile(join(dir, 'web.yaml'), manifest('web', 'sleep2'));
    const readded = (await eventually(() => seen('ADD', 'web-node-1'))).pods[0]!;
    expect(seen('REMOVE', 'web-node-1')!.pods[0]!.metadata.uid).toBe(first.metadata.uid);
    expect(readded.metadata.uid).not.toBe(first.metadata.uid);
    expect(readded.metadata.annotations![configHashAnnotation()]).toBe(readded.metadata.uid);
    expect((readded.spec.containers as { command: string[] }[])[0]!.command).toEqual(['sleep2', '100']);
    // The removal comes first, so the old process stops before the new one starts.
    expect(updates.map((u) => u.op)).toEqual(['REMOVE', 'ADD']);
    updates = [];

    await unlink(join(dir, 'web.yaml'));
    const removed = await eventually(() => seen('REMOVE', 'web-node-1'));
    expect(removed.pods[0]!.metadata.uid).toBe(readded.metadata.uid);
    expect(names()).toEqual([]);
  });

  it('gives an UPDATE when a manifest that sets its own UID is edited', async () => {
    const withUid = (label: string) => manifest('fixed').replace('  name: fixed\n', `  name: fixed\n  uid: u-1\n  labels: {v: "${label}"}\n`);
    await writeFile(join(dir, 'fixed.yaml'), withUid('1'));
    startSource(dir);
    await eventually(() => seen('ADD', 'fixed-node-1'));
    await writeFile(join(dir, 'fixed.yaml'), withUid('2'));
    const updated = await eventually(() => seen('UPDATE', 'fixed-node-1'));
    expect(updated.pods[0]!.metadata.labels).toEqual({ v: '2' });
  });

  it('ignores dotfiles and subdirectories, and reports and skips files it cannot use', async () => {
    await writeFile(join(dir, '.hidden.yaml'), manifest('hidden'));
    await writeFile(join(dir, '.web.yaml.swp'), 'garbage: [');
    await mkdir(join(dir, 'sub'));
    await writeFile(join(dir, 'sub', 'nested.yaml'), manifest('nested'));
    await writeFile(join(dir, 'bad.yaml'), 'apiVersion: v1\nkind: Pod\nmetadata: {name: [\n');
    await writeFile(join(dir, 'list.json'), JSON.stringify({ apiVersion: 'v1', kind: 'PodList', items: [] }));
    await writeFile(join(dir, 'good.yaml'), manifest('good'));
    startSource(dir);
    await eventually(() => seen('ADD', 'good-node-1'));
    expect(names()).toEqual(['good-node-1']);
    expect(problems.map((p) => [p.origin.replace(dir, 'DIR'), p.message.split(':')[0]])).toEqual([
      ['DIR/bad.yaml', 'error converting YAML to JSON'],
      ['DIR/list.json', 'invalid pod'],
    ]);

    // A bad file fixed later is picked up; the good one is untouched (no update for it).
    updates = [];
    await writeFile(join(dir, 'bad.yaml'), manifest('fixed'));
    await eventually(() => seen('ADD', 'fixed-node-1'));
    expect(updates.map((u) => u.op)).toEqual(['ADD']);
    expect(problems).toHaveLength(2);
  });

  it('watches a single manifest file, also when an editor replaces it by a rename', async () => {
    const file = join(dir, 'only.yaml');
    await writeFile(file, manifest('only'));
    await writeFile(join(dir, 'other.yaml'), manifest('other'));
    startSource(file);
    await eventually(() => seen('ADD', 'only-node-1'));
    await writeFile(join(dir, '.only.tmp'), manifest('renamed'));
    await rename(join(dir, '.only.tmp'), file);
    await eventually(() => seen('ADD', 'renamed-node-1'), 10_000);
    expect(names()).toEqual(['renamed-node-1']);
  });

  it('treats a missing directory as empty, and sees it appear through a watch on its parent', async () => {
    const later = join(dir, 'later');
    startSource(later);
    await eventually(() => updates.length > 0);
    expect(updates[0]).toEqual({ op: 'ADD', source: 'file', pods: [] });
    await mkdir(later);
    await writeFile(join(later, 'late.yaml'), manifest('late'));
    await eventually(() => seen('ADD', 'late-node-1'), 10_000);
    await writeFile(join(later, 'later.yaml'), manifest('later'));
    await eventually(() => seen('ADD', 'later-node-1'), 10_000);

    // Removing the directory removes its pods.
    await rm(later, { recursive: true });
    await eventually(() => seen('REMOVE', 'late-node-1'), 10_000);
  });

  it('falls back to the periodic check when nothing can be watched', async () => {
    const deep = join(dir, 'a', 'b');
    const file = startSource(deep, 100);
    await eventually(() => updates.length > 0);
    expect(file.watching).toBe(false);
    await mkdir(deep, { recursive: true });
    await writeFile(join(deep, 'late.yaml'), manifest('late'));
    await eventually(() => seen('ADD', 'late-node-1'));
    await eventually(() => file.watching);
  });
});
