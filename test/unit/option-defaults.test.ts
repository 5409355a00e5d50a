/** Every default of every option table must be a value its own parser accepts: a bad default would stop every start. */
import {describe, expect, it} from '@jest/globals';
import {apiserverOptions} from '../../src/options/apiserver.js';
import {controllerManagerOptions} from '../../src/options/controller-manager.js';
import {agentOptions} from '../../src/options/agent.js';
import {patchOptions} from '../../src/options/patch.js';
import {parseOptionValue, formatOptionValue} from '../../src/options/types.js';
import {expandHome, resolveOptions, OptionsError} from '../../src/options/resolve.js';
import type {OptionTable} from '../../src/options/spec.js';
import {setByUpOnly} from '../../src/cmd/up/pass-through.js';

const tables: Array<[string, OptionTable]> = [
  ['apiserver', apiserverOptions],
  ['controller-manager', controllerManagerOptions],
  ['agent', agentOptions],
  ['patch', patchOptions],
];

describe.each(tables)('%s option defaults', (_program, table) => {
  const withDefaults = table.filter((o) => o.default !== undefined && o.name !== 'help');
  it.each(withDefaults.map((o) => [o.name, o] as const))('--%s default parses', (_name, spec) => {
    const value = parseOptionValue(spec, expandHome(spec.default as string));
    expect(value).not.toBeUndefined();
    // Printing the parsed default gives a value that parses to the same thing.
    expect(parseOptionValue(spec, formatOptionValue(spec, value))).toEqual(value);
  });
});

describe('resolveOptions', () => {
  it('fills defaults, types explicit values, and lists options without effect in one warning', () => {
    // Two boolean options still without effect (in table order, as the warning lists them), whichever they are as the table fills in.
    // (Only those valid when set alone: --emulation-forward-compatible, say, needs --emulated-version.)
    const validAlone = (name: string) => {
      try {
        resolveOptions('apiserver', apiserverOptions, {[name]: true});
        return true;
      } catch {
        return false;
      }
    };
    const pending = apiserverOptions.filter((o) => !o.implemented && o.type === 'bool' && !o.deprecated && validAlone(o.name)).slice(0, 2).map((o) => o.name);
    const r = resolveOptions('apiserver', apiserverOptions, {'secure-port': '7443', ...Object.fromEntries(pending.map((n) => [n, true]))});
    expect(r.values['secure-port']).toBe(7443);
    expect(r.values['kvstore-compaction-interval']).toMatchObject({text: '5m0s'});
    expect([...r.explicit].sort()).toEqual([...pending, 'secure-port'].sort());
    expect(r.warnings).toEqual(pending.length ? [`these options are accepted and validated but have no effect yet: ${pending.map((n) => `--${n}`).join(', ')}`] : []);
  });

  it('prints one deprecation warning per deprecated option used', () => {
    const r = resolveOptions('apiserver', apiserverOptions, {'admission-control': ['NamespaceLifecycle']});
    expect(r.warnings.filter((w) => w.includes('deprecated'))).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^Flag --admission-control has been deprecated/);
  });

  it('gives no warning for options the program set itself (orch up for its daemons), and still for the user\'s', () => {
    const defaults = {'fail-swap-on': 'false', 'root-dir': '/tmp/x'};
    const user = ['port=10260'];
    const quiet = setByUpOnly(defaults, user);
    expect([...quiet].sort()).toEqual(['fail-swap-on', 'root-dir']);
    const r = resolveOptions('agent', agentOptions, {'fail-swap-on': 'false', 'root-dir': '/tmp/x', port: '10260'}, quiet);
    expect(r.warnings).toEqual(['Flag --port has been deprecated; set it in the --config file instead']);
    // The user giving the same option again gets the warning.
    expect(setByUpOnly(defaults, ['--fail-swap-on=false']).has('fail-swap-on')).toBe(false);
  });

  it('collects every bad value before stopping, each naming its option', () => {
    try {
      resolveOptions('apiserver', apiserverOptions, {'secure-port': ['x'], 'request-timeout': ['5q']});
      throw new Error('expected an OptionsError');
    } catch (error) {
      expect(error).toBeInstanceOf(OptionsError);
      const problems = (error as OptionsError).problems;
      expect(problems).toHaveLength(2);
      expect(problems[0]).toContain('--secure-port');
      expect(problems[1]).toContain('--request-timeout');
    }
  });

  it('applies the cross-option rules after the values parse', () => {
    expect(() =>
      resolveOptions('controller-manager', controllerManagerOptions, {
        'leader-elect-lease-duration': ['10s'],
        'leader-elect-renew-deadline': ['15s'],
      }),
    ).toThrow(/renew-deadline/);
  });
});
