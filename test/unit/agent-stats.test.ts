/**
 * The agent's CPU and memory statistics: /proc parsing, rates from two samples, the summary a
 * collector builds on a recorded /proc (fake clock), and the /metrics/resource exposition.
 */
import {describe, expect, it} from '@jest/globals';
import {CpuRates, StatsCollector, parseMachineCpu, parseProcessStat, usageByGroup, resourceMetrics} from '../../src/daemons/agent/stats/index.js';
import {goFloat} from '../../src/daemons/agent/stats/resource-metrics.js';

/** A /proc/<pid>/stat line: pid, name, pgrp, utime, stime, cutime, cstime, rss pages. */
function statLine(pid: number, name: string, pgrp: number, utime: number, stime: number, cutime = 0, cstime = 0, rss = 100): string {
  const fields = ['S', '1', String(pgrp), String(pgrp), '0', '-1', '4194304', '101', '0', '0', '0', String(utime), String(stime), String(cutime), String(cstime), '20', '0', '1', '0', '149973', '3133440', String(rss)];
  return `${pid} (${name}) ${fields.join(' ')} 18446744073709551615 0 0 0\n`;
}

describe('/proc parsing', () => {
  it('reads a process stat line, names with spaces and parentheses included', () => {
    expect(parseProcessStat(statLine(42, 'my (odd) name', 40, 150, 50, 7, 3, 256))).toEqual({pid: 42, pgrp: 40, cpuTicks: 210, rssBytes: 256 * 4096});
    expect(parseProcessStat('garbage')).toBeUndefined();
  });

  it('sums the members of each process group asked for, and only those', () => {
    const stats = [statLine(10, 'sh', 10, 100, 0), statLine(11, 'yes', 10, 300, 100), statLine(20, 'other', 20, 999, 0)].map((l) => parseProcessStat(l)!);
    const usage = usageByGroup(stats, new Set([10]));
    expect([...usage.keys()]).toEqual([10]);
    expect(usage.get(10)).toEqual({cpuNanos: 500 * 1e7, rssBytes: 2 * 100 * 4096, processes: 2});
  });

  it('counts the machine\'s busy time: every state but idle and iowait', () => {
    // user nice system idle iowait irq softirq steal
    expect(parseMachineCpu('cpu  100 10 50 9999 77 5 3 2 0 0\ncpu0 1 2 3 4\n')).toBe((100 + 10 + 50 + 5 + 3 + 2) * 1e7);
    expect(() => parseMachineCpu('intr 1 2 3\n')).toThrow('/proc/stat has no aggregate cpu line');
  });
});

describe('CPU rates', () => {
  it('gives no rate for a first sample, then the change per second since the baseline', () => {
    const rates = new CpuRates({windowMs: 10_000, minSpanMs: 200});
    expect(rates.observe('a', {nanos: 0, at: 0})).toBeUndefined();
    expect(rates.ready('a', 100)).toBe(false);
    expect(rates.observe('a', {nanos: 1e8, at: 100})).toBeUndefined(); // too short a span
    // half a core for 2 s
    expect(rates.observe('a', {nanos: 1e9, at: 2000})).toEqual({usageNanoCores: 5e8, windowMs: 2000});
  });

  it('moves the baseline once it is older than the window, so the rate follows recent use', () => {
    const rates = new CpuRates({windowMs: 10_000});
    rates.observe('a', {nanos: 0, at: 0});
    expect(rates.observe('a', {nanos: 10e9, at: 10_000})?.usageNanoCores).toBe(1e9); // busy: 1 core
    expect(rates.observe('a', {nanos: 10e9, at: 15_000})).toEqual({usageNanoCores: 0, windowMs: 5000}); // idle since
  });

  it('restarts a series whose counter went back, and forgets series no longer live', () => {
    const rates = new CpuRates();
    rates.observe('a', {nanos: 5e9, at: 0});
    expect(rates.observe('a', {nanos: 1e9, at: 1000})).toBeUndefined();
    expect(rates.observe('a', {nanos: 2e9, at: 2000})?.usageNanoCores).toBe(1e9);
    rates.retain(new Set());
    expect(rates.ready('a', 10_000)).toBe(false);
  });
});

describe('the stats collector', () => {
  /** A fake /proc whose CPU counters advance as the fake clock does. */
  function fakeProc() {
    let now = 1_700_000_000_000;
    const ticks = {busy: 0, machine: 0};
    const advance = (ms: number) => {
      now += ms;
      ticks.busy += ms / 10; // one core: 100 ticks a second
      ticks.machine += ms / 10 + ms / 40;
    };
    const files: Record<string, () => string> = {
      '/proc/stat': () => `cpu  ${ticks.machine} 0 0 1000 0 0 0 0 0 0\n`,
      '/proc/100/stat': () => statLine(100, 'sh', 100, ticks.busy, 0, 0, 0, 300),
      '/proc/101/stat': () => statLine(101, 'sleep', 101, 1, 1, 0, 0, 50),
      '/proc/7/stat': () => statLine(7, 'unrelated', 7, 5000, 0),
    };
    return {
      now: () => now,
      sleep: async (ms: number) => advance(ms),
      advance,
      proc: {
        procDir: '/proc',
        readdir: async () => ['7', '100', '101', 'self', 'stat'],
        readFile: async (file: string) => {
          const read = files[file];
          if (!read) throw new Error(`ENOENT: ${file}`);
          return read();
        },
      },
    };
  }

  const pods = () => [
    {uid: 'u1', name: 'busy', namespace: 'default', startTime: '2024-01-01T00:00:00Z', containers: [{name: 'spin', pid: 100}, {name: 'done'}]},
    {uid: 'u2', name: 'idle', namespace: 'other', containers: [{name: 'nap', pid: 101}]},
  ];

  it('samples twice on the first request, then once, and reports each pod\'s, container\'s and the node\'s usage', async () => {
    const f = fakeProc();
    const sleeps: number[] = [];
    const collector = new StatsCollector({
      nodeName: 'n1',
      startTime: '2024-01-01T00:00:00Z',
      pods,
      signals: async () => ({time: f.now(), memory: {available: 6e9, capacity: 8e9}}),
      proc: f.proc,
      now: f.now,
      sleep: async (ms) => {
        sleeps.push(ms);
        await f.sleep(ms);
      },
    });
    const first = await collector.summary();
    expect(sleeps).toEqual([500]);
    const busy = first.pods.find((p) => p.podRef.name === 'busy')!;
    expect(busy.cpu?.usageNanoCores).toBe(1e9);
    expect(busy.containers[0]).toMatchObject({name: 'spin', cpu: {usageNanoCores: 1e9}, memory: {workingSetBytes: 300 * 4096}});
    expect(busy.containers[1]).toEqual({name: 'done', startTime: '2024-01-01T00:00:00Z'}); // no process: no usage
    expect(first.pods.find((p) => p.podRef.name === 'idle')?.cpu?.usageNanoCores).toBe(0);
    expect(first.node).toMatchObject({nodeName: 'n1', cpu: {usageNanoCores: 1.25e9}, memory: {availableBytes: 6e9, workingSetBytes: 2e9}});

    f.advance(3000);
    const second = await collector.summary();
    expect(sleeps).toEqual([500]); // the kept baseline gives the rate
    expect(second.pods[0]!.cpu?.usageNanoCores).toBe(1e9);
    expect(second.pods[0]!.cpu?.usageCoreNanoSeconds).toBe(3.5e9);
  });
});

describe('/metrics/resource', () => {
  it('writes numbers as Go\'s strconv g does', () => {
    expect([0, 2.91, 1462272, 1e6, 615.8, 0.00001, 1795629034.5].map(goFloat)).toEqual(['0', '2.91', '1.462272e+06', '1e+06', '615.8', '1e-05', '1.7956290345e+09']);
  });

  it('exposes upstream\'s families in name order, with timestamps, from a summary', () => {
    const time = '2024-01-01T00:00:10Z';
    const text = resourceMetrics({
      node: {nodeName: 'n1', startTime: time, cpu: {time, usageCoreNanoSeconds: 5e9}, memory: {time, workingSetBytes: 1048576}},
      pods: [{podRef: {name: 'p', namespace: 'ns', uid: 'u'}, startTime: time, cpu: {time, usageCoreNanoSeconds: 2.5e9}, memory: {time, workingSetBytes: 4096},
        containers: [{name: 'c', startTime: '2024-01-01T00:00:00Z', cpu: {time, usageCoreNanoSeconds: 2.5e9}, memory: {time, workingSetBytes: 4096}}]}],
    });
    const at = Date.parse(time);
    expect(text.split('\n').filter((l) => !l.startsWith('#'))).toEqual([
      `container_cpu_usage_seconds_total{container="c",namespace="ns",pod="p"} 2.5 ${at}`,
      `container_memory_working_set_bytes{container="c",namespace="ns",pod="p"} 4096 ${at}`,
      'container_start_time_seconds{container="c",namespace="ns",pod="p"} 1.7040672e+09',
      `node_cpu_usage_seconds_total 5 ${at}`,
      `node_memory_working_set_bytes 1.048576e+06 ${at}`,
      `pod_cpu_usage_seconds_total{namespace="ns",pod="p"} 2.5 ${at}`,
      `pod_memory_working_set_bytes{namespace="ns",pod="p"} 4096 ${at}`,
      'resource_scrape_error 0',
      '',
    ]);
    expect(text).toContain('# HELP node_cpu_usage_seconds_total [STABLE] Cumulative cpu time consumed by the node in core-seconds\n# TYPE node_cpu_usage_seconds_total counter\n');
  });

  it('reports a failed collection as resource_scrape_error 1', () => {
    expect(resourceMetrics(undefined)).toMatch(/\nresource_scrape_error 1\n$/);
  });
});
