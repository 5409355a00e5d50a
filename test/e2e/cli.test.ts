/** The CLI as a process: version, options listing, daemon commands' validation and exit codes. */
import {describe, expect, it} from '@jest/globals';
import {readFileSync} from 'node:fs';
import {join} from 'node:path';
import {repoRoot, runOrch} from '../helpers/run-orch.js';

const version = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version;

describe('orch --version', () => {
  it('prints the package version', () => {
    const r = runOrch(['--version']);
    expect(r).toMatchObject({code: 0, stdout: `orch v${version}\n`});
  });
  it('prints the full record with --version=raw', () => {
    expect(runOrch(['--version=raw']).stdout).toContain(`GitVersion:"v${version}"`);
  });
  it('reports a version set with --version=vX.Y.Z', () => {
    expect(runOrch(['--version=v9.8.7']).stdout).toBe('orch v9.8.7\n');
  });
  it('refuses another value', () => {
    const r = runOrch(['--version=banana']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('"banana"');
  });
  it('works on each daemon command and exits 0 without starting it', () => {
    for (const program of ['apiserver', 'controller-manager', 'agent']) {
      expect(runOrch([program, '--version'])).toMatchObject({code: 0, stdout: `orch v${version}\n`});
    }
  });
});

describe('orch options', () => {
  it('lists every option of a program as JSON with implemented/total counts', () => {
    const r = runOrch(['options', 'apiserver', '-o', 'json']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.program).toBe('apiserver');
    expect(report.total).toBe(report.options.length);
    expect(report.implemented).toBe(report.options.filter((o: {implemented: boolean}) => o.implemented).length);
    const port = report.options.find((o: {name: string}) => o.name === 'secure-port');
    expect(port).toMatchObject({type: 'int', default: '6443', seedDefault: '6443', implemented: true});
    expect(report.options.find((o: {name: string}) => o.name === 'enable-priority-and-fairness')).toMatchObject({type: 'bool', default: 'true', implemented: true});
  });
  it('prints a table with the count last', () => {
    const r = runOrch(['options', 'patch']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^OPTION\s+TYPE\s+DEFAULT\s+SECTION\s+IMPLEMENTED/);
    expect(r.stdout).toMatch(/\n\d+\/\d+ options implemented\n$/);
  });
  it('says which name set is in effect and how to choose', () => {
    expect(runOrch(['options', 'apiserver']).stdout).toContain('\nnames in effect: orch (choose with --names orch|kubernetes)\n');
    expect(runOrch(['options', 'agent']).stdout).toContain('\nnames in effect: the API server\'s, learned from its discovery (choose with --names orch|kubernetes)\n');
    const report = JSON.parse(runOrch(['options', 'controller-manager', '-o', 'json']).stdout);
    expect(report.names).toEqual({default: null, accepted: ['orch', 'kubernetes'], choose: '--names orch|kubernetes'});
    expect(report.options.find((o: {name: string}) => o.name === 'names')).toMatchObject({orchOnly: true, implemented: true, section: 'orch'});
  });
  it('refuses a bad --names before starting, naming the option and the accepted values', () => {
    for (const program of ['apiserver', 'controller-manager', 'agent', 'up']) {
      const r = runOrch([program, '--names', 'k8s']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('invalid value "k8s" for --names: not one of the accepted values; expected one of orch, kubernetes');
    }
  });
  it('refuses an unknown program, naming the accepted ones', () => {
    const r = runOrch(['options', 'scheduler']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('error: unknown program "scheduler": expected one of apiserver, controller-manager, agent, patch\n');
  });
});

describe('daemon commands validate their options before anything else', () => {
  it.each([
    [['apiserver', '--secure-port=abc'], /--secure-port.*"abc"|"abc".*--secure-port/],
    [['apiserver', '--request-timeout=5q'], /--request-timeout/],
    [['apiserver', '--secure-port=0'], /secure-port/],
    [['apiserver', '--goaway-chance=0.5'], /goaway-chance/],
    [['controller-manager', '--leader-elect-lease-duration=10s', '--leader-elect-renew-deadline=15s'], /renew-deadline/],
    [['agent', '--runonce', '--enable-server=true'], /runonce/],
    [['agent', '--image-gc-low-threshold=90', '--image-gc-high-threshold=80'], /image-gc-low-threshold/],
    [['agent', '--register-with-taints=a=b:Sometimes'], /register-with-taints/],
    [['agent', '--eviction-hard=memory.available>1Gi'], /eviction-hard/],
    [['apiserver', '--logging-format=json'], /logging-format/],
    [['apiserver', '--no-such-option'], /no-such-option/],
    [['agent', '--fail-swap-on=maybe'], /fail-swap-on/],
  ])('%j exits 1 naming the option', (args, pattern) => {
    const r = runOrch(args);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: /);
    expect(r.stderr).toMatch(pattern);
    expect(r.stdout).toBe('');
  });

  it('lists the options that take no effect yet in one warning line, after validating them', () => {
    const r = runOrch(['agent', '--print-config', '--image-gc-high-threshold=90', '--serialize-image-pulls=false']);
    expect(r.code).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => l.includes('no effect yet'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('--serialize-image-pulls');
    expect(lines[0]).toContain('--image-gc-high-threshold');
    expect(r.stdout).toContain('kind: AgentConfiguration');
  });

  it('warns once per deprecated option used', () => {
    const r = runOrch(['agent', '--print-config', '--max-pods=10', '--port=10251']);
    expect(r.stderr.match(/Flag --max-pods has been deprecated/g)).toHaveLength(1);
    expect(r.stderr.match(/Flag --port has been deprecated/g)).toHaveLength(1);
  });
});

describe('help', () => {
  it('groups options by the seed sections and shows type and default', () => {
    const r = runOrch(['apiserver', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/STORAGE AND CACHING FLAGS/i);
    expect(r.stdout).toMatch(/--kvstore-prefix=string.*\(default \/registry\)/s);
  });
  it('lists the commands', () => {
    const r = runOrch(['--help']);
    for (const c of ['patch', 'apiserver', 'controller-manager', 'agent', 'options']) expect(r.stdout).toContain(c);
  });
});
