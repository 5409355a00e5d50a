/**
 * The README's two Quick start commands on a fresh clone: the test command is the one `.ci/run`
 * runs (and `.ci/run` installs nothing itself), and its set-up path, run in --check mode in a clean
 * clone of this repository, finds every step it needs (Debian packages from the list, npm ci, build,
 * type-check, jest) without running the suite again.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {execFileSync, spawnSync} from 'node:child_process';
import {appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {repoRoot} from '../helpers/run-orch.js';

/** The commands of the fenced blocks of the README's Quick start, in order. */
function quickStartCommands(readme: string): string[] {
  const section = readme.split(/^## /m).find((s) => /^quick start/i.test(s)) ?? '';
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap((m) => m[1]!.split('\n').filter((l) => l.trim() && !l.startsWith('#')));
}

describe('the README\'s two commands on a fresh clone', () => {
  let clone: string;
  beforeAll(() => {
    clone = join(mkdtempSync(join(tmpdir(), 'orch-clone-')), 'orch');
    execFileSync('git', ['clone', '--quiet', repoRoot, clone]);
  });
  afterAll(() => rmSync(join(clone, '..'), {recursive: true, force: true}));

  it('has exactly two Quick start commands: orch up, then the test command that .ci/run runs and nothing else', () => {
    const commands = quickStartCommands(readFileSync(join(clone, 'README.md'), 'utf8'));
    expect(commands).toHaveLength(2);
    expect(commands[0]).toMatch(/\.\/bin\/run\.js up$/);
    expect(commands[1]).toBe('./scripts/test.sh');
    const ci = readFileSync(join(clone, '.ci/run'), 'utf8');
    const steps = ci.split('\n').filter((l) => l.trim() && !l.startsWith('#') && !/^(set |cd )/.test(l));
    expect(steps).toEqual([commands[1]]);
  });

  it('finds every step of the set-up path in a clean clone (--check runs nothing)', () => {
    const r = spawnSync(join(clone, 'scripts/test.sh'), ['--check'], {encoding: 'utf8', timeout: 60_000});
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const packages = readFileSync(join(clone, 'scripts/test-debian-packages.txt'), 'utf8').split('\n').filter((l) => l.trim() && !l.startsWith('#'));
    expect(packages).toEqual(expect.arrayContaining(['etcd-server', 'tmux']));
    expect(r.stdout).toContain(`Debian packages (scripts/test-debian-packages.txt): ${packages.join(' ')}`);
    for (const step of ['npm ci', 'build: npm run build', 'type-check: npm run typecheck', 'tests: jest']) expect(r.stdout).toContain(`==> ${step}`);
    expect(r.stdout).toContain('every step can run');
    // --check installed and built nothing.
    expect(existsSync(join(clone, 'node_modules'))).toBe(false);
    expect(existsSync(join(clone, 'dist'))).toBe(false);
  }, 60_000);

  it('installs a package added to the list when it is missing (shown by --check)', () => {
    appendFileSync(join(clone, 'scripts/test-debian-packages.txt'), 'orch-test-no-such-package # added by the test\n');
    const r = spawnSync(join(clone, 'scripts/test.sh'), ['--check'], {encoding: 'utf8', timeout: 60_000});
    expect(r.stdout).toContain('missing: orch-test-no-such-package');
    const root = process.getuid?.() === 0;
    if (root) expect(r.stdout).toContain('apt-get update && apt-get install -y orch-test-no-such-package');
    else expect(r.stdout + r.stderr).toMatch(/apt-get install (-y )?orch-test-no-such-package/);
  }, 60_000);

  it('says npm ci would fail when package.json and the lock file disagree', () => {
    const pkgPath = join(clone, 'package.json');
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
    pkg.dependencies['orch-test-not-in-the-lock-file'] = '^1.0.0';
    writeFileSync(pkgPath, JSON.stringify(pkg, null, 2));
    const r = spawnSync(join(clone, 'scripts/test.sh'), ['--check'], {encoding: 'utf8', timeout: 60_000});
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('npm ci would fail: package.json and package-lock.json are not in sync');
  }, 60_000);

  it('refuses an unknown argument, naming the accepted ones', () => {
    const r = spawnSync(join(clone, 'scripts/test.sh'), ['--bogus'], {encoding: 'utf8'});
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('unknown argument --bogus (accepted: --check, -- JEST_ARGS)');
  });
});
