import {describe, expect, it} from '@jest/globals';
import {loadForTerminal} from '../../src/lib/load-for-terminal.js';

describe('loadForTerminal', () => {
  it('hides CI and CONTINUOUS_INTEGRATION while the module loads, and puts them back', async () => {
    const env: NodeJS.ProcessEnv = {CI: 'true', CONTINUOUS_INTEGRATION: '1', HOME: '/home/op'};
    const seen = await loadForTerminal(async () => ({...env}), env);
    expect(seen).toEqual({HOME: '/home/op'});
    expect(env).toEqual({CI: 'true', CONTINUOUS_INTEGRATION: '1', HOME: '/home/op'});
  });

  it('puts them back when loading fails', async () => {
    const env: NodeJS.ProcessEnv = {CI: 'true'};
    await expect(loadForTerminal(() => Promise.reject(new Error('no module')), env)).rejects.toThrow('no module');
    expect(env).toEqual({CI: 'true'});
  });

  it('makes Ink draw as on a terminal although CI is set', async () => {
    const before = process.env.CI;
    process.env.CI = 'true';
    try {
      const {default: isInCi} = await loadForTerminal(() => import('is-in-ci'));
      expect(isInCi).toBe(false);
      expect(process.env.CI).toBe('true');
    } finally {
      if (before === undefined) delete process.env.CI;
      else process.env.CI = before;
    }
  });
});
