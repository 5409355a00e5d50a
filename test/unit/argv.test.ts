import {describe, expect, it} from '@jest/globals';
import {normalizeArgv, ArgvError, parseGoBool} from '../../src/options/argv.js';
import type {OptionSpec} from '../../src/options/spec.js';

const spec = (name: string, type: OptionSpec['type'], short?: string): OptionSpec => ({
  name,
  short,
  type,
  seedType: type,
  seedDefault: 'none',
  help: name,
  section: 'test',
  implemented: true,
});
const table = [spec('local', 'bool'), spec('dry-run', 'dryRun'), spec('version', 'version'), spec('v', 'int', 'v'), spec('recursive', 'bool', 'R')];

describe('normalizeArgv: Go flag forms become oclif forms', () => {
  it.each([
    [['--local=true'], ['--local']],
    [['--local=false'], ['--no-local']],
    [['--local=0'], ['--no-local']],
    [['--local'], ['--local']],
    [['-R'], ['--recursive']],
    [['-R=false'], ['--no-recursive']],
    [['--dry-run'], ['--dry-run=unchanged']],
    [['--dry-run', 'server'], ['--dry-run=unchanged', 'server']],
    [['--dry-run=client'], ['--dry-run=client']],
    [['--version'], ['--version=true']],
    [['--version=raw'], ['--version=raw']],
    [['-v', '3'], ['-v', '3']],
    [['pod', 'web', '--', '--local=false'], ['pod', 'web', '--', '--local=false']],
    [['--unknown=1'], ['--unknown=1']],
  ])('%j -> %j', (input, expected) => {
    expect(normalizeArgv(table, input)).toEqual(expected);
  });

  it('refuses a boolean with a value that is not a boolean, naming the option and the accepted forms', () => {
    expect(() => normalizeArgv(table, ['--local=maybe'])).toThrow(ArgvError);
    expect(() => normalizeArgv(table, ['--local=maybe'])).toThrow(/"maybe" for --local.*--local=true or --local=false/);
  });

  it.each([
    ['true', true],
    ['T', true],
    ['1', true],
    ['False', false],
    ['0', false],
    ['yes', undefined],
    ['', undefined],
  ])('parseGoBool(%j) = %j', (text, expected) => {
    expect(parseGoBool(text)).toBe(expected);
  });
});
