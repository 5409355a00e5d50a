import {afterEach, describe, expect, it} from '@jest/globals';
import {configureKlog, formatKlogLine, klog, klogHeader, resetKlog, verbosityFor} from '../../src/lib/klog.js';

afterEach(() => resetKlog());

describe('klog text format', () => {
  const at = new Date(2026, 10, 22, 10, 0, 0, 123);

  it('writes the header as klog does: severity, month-day, time with microseconds, padded pid, file:line', () => {
    expect(klogHeader('I', at, 12345, 'server.ts:12')).toBe('I1122 10:00:00.123000   12345 server.ts:12] ');
    expect(klogHeader('E', new Date(2026, 0, 2, 3, 4, 5, 6), 7, 'a.ts:1')).toBe('E0102 03:04:05.006000       7 a.ts:1] ');
  });

  it('quotes the message and string values, and prints other values bare', () => {
    const line = formatKlogLine('W', at, 1, 'x.ts:3', 'Serving securely', ['address', '127.0.0.1:6443', 'port', 6443, 'ok', true]);
    expect(line).toBe('W1122 10:00:00.123000       1 x.ts:3] "Serving securely" address="127.0.0.1:6443" port=6443 ok=true\n');
  });

  it('writes info only up to the verbosity, and --vmodule raises it per module', () => {
    const out: string[] = [];
    configureKlog({verbosity: 1, vmodule: [{pattern: 'lease*', level: 4}], out: (l) => out.push(l), err: (l) => out.push(l), now: () => at, pid: 9});
    klog('server.ts').v(2).info('hidden');
    klog('server.ts').v(1).info('shown');
    klog('daemons/leaseelection.ts').v(4).info('shown by vmodule');
    klog('server.ts').error('failed', 'err', new Error('boom'));
    expect(out.map((l) => l.replace(/^.*\] /, ''))).toEqual(['"shown"\n', '"shown by vmodule"\n', '"failed" err="boom"\n']);
    // The location is the real caller: this test file (a module name only labels lines run from its own file).
    expect(out[0]).toMatch(/^I1122 10:00:00\.123000       9 klog\.test\.ts:\d+\] /);
    expect(out[2]).toMatch(/^E1122/);
  });

  it.each([
    ['server.ts', 0, [], 0],
    ['server.ts', 0, [{pattern: 'server', level: 3}], 3],
    ['apiserver/server.ts', 2, [{pattern: 'serv*', level: 5}], 5],
    ['client.ts', 2, [{pattern: 'serv*', level: 5}], 2],
  ])('verbosityFor(%s, -v %d, %j) = %d', (module, v, vmodule, expected) => {
    expect(verbosityFor(module, v, vmodule)).toBe(expected);
  });
});
