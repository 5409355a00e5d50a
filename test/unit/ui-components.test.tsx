import {describe, expect, it} from '@jest/globals';
import {render} from 'ink-testing-library';
import {Text} from 'ink';
import {LogBuffer} from '../../src/ui/components/log-buffer.js';
import {LogPane} from '../../src/ui/components/log-pane.js';
import {CheckList} from '../../src/ui/components/check-list.js';
import {sparkline, useHistory} from '../../src/ui/components/sparkline.js';
import {formatMs, formatRate, topEntries} from '../../src/ui/components/format.js';

const tick = () => new Promise((r) => setTimeout(r, 30));

describe('sparkline', () => {
  it.each<[number[], string]>([
    [[], ''],
    [[0, 0, 0], '▁▁▁'],
    [[1, 2, 4], '▃▅█'],
    [[0, 0.01, 100], '▁▂█'],
    [[5, 5], '██'],
  ])('%j -> %s', (values, expected) => {
    expect(sparkline(values)).toBe(expected);
  });

  function History({sample, value}: {sample: object; value: number}) {
    return <Text>{useHistory(sample, value, 3).join(',')}</Text>;
  }

  it('keeps one point per new sample, the last few only', () => {
    const first = {};
    const {lastFrame, rerender, unmount} = render(<History sample={first} value={1} />);
    rerender(<History sample={first} value={1} />);
    expect(lastFrame()).toBe('1');
    for (const v of [2, 3, 4]) rerender(<History sample={{}} value={v} />);
    expect(lastFrame()).toBe('2,3,4');
    unmount();
  });
});

describe('formatting', () => {
  it.each<[number, string]>([
    [0, '0.0'],
    [2.46, '2.5'],
    [9.94, '9.9'],
    [12.5, '13'],
    [1234.4, '1234'],
  ])('rate %d -> %s', (rate, expected) => expect(formatRate(rate)).toBe(expected));

  it.each<[number, string]>([
    [0.421, '0.42 ms'],
    [3.14, '3.1 ms'],
    [120.4, '120 ms'],
    [2500, '2.5 s'],
  ])('latency %d -> %s', (ms, expected) => expect(formatMs(ms)).toBe(expected));

  it('ranks the largest counts first, ties by name, and counts the rest', () => {
    expect(topEntries({b: 2, a: 2, c: 9, d: 1}, 3)).toEqual({top: [['c', 9], ['a', 2], ['b', 2]], others: 1});
    expect(topEntries({}, 3)).toEqual({top: [], others: 0});
  });
});

describe('LogBuffer', () => {
  it('splits chunks into lines and hands out only what is new since a cursor', () => {
    const buffer = new LogBuffer();
    buffer.append('one\n');
    buffer.append('two\nthree\n');
    expect(buffer.read(0)).toEqual({lines: ['one', 'two', 'three'], next: 3});
    buffer.append('four');
    expect(buffer.read(3)).toEqual({lines: ['four'], next: 4});
    expect(buffer.read(4)).toEqual({lines: [], next: 4});
  });

  it('keeps only the newest lines, skipping a cursor past what was dropped', () => {
    const buffer = new LogBuffer(2);
    for (const line of ['a', 'b', 'c', 'd']) buffer.append(line);
    expect(buffer.read(0)).toEqual({lines: ['c', 'd'], next: 4});
    expect(buffer.read(3)).toEqual({lines: ['d'], next: 4});
  });

  it('tells subscribers about each append until they unsubscribe', () => {
    const buffer = new LogBuffer();
    let calls = 0;
    const stop = buffer.subscribe(() => calls++);
    buffer.append('x');
    stop();
    buffer.append('y');
    expect(calls).toBe(1);
  });
});

describe('LogPane', () => {
  it('prints every line exactly once and in order, also across batch roll-overs', async () => {
    const buffer = new LogBuffer();
    const {lastFrame, unmount} = render(<LogPane buffer={buffer} maxBatch={3} />);
    for (let i = 0; i < 10; i++) {
      buffer.append(`line-${i}\n`);
      if (i % 4 === 0) await tick(); // both single appends and bursts between renders
    }
    await tick();
    const lines = (lastFrame() ?? '').split('\n').filter((l) => l.startsWith('line-'));
    expect(lines).toEqual(Array.from({length: 10}, (_, i) => `line-${i}`));
    unmount();
  });
});

describe('CheckList', () => {
  it('marks each check and dims the reason of failing ones only', () => {
    const {lastFrame, unmount} = render(
      <CheckList
        title="livez"
        checks={[
          {name: 'ping', ok: true, reason: 'stale reason'},
          {name: 'kvstore', ok: false, reason: 'context deadline exceeded'},
        ]}
      />,
    );
    expect(lastFrame()).toBe('livez 1 failing\n✓ ping\n✗ kvstore context deadline exceeded');
    unmount();
  });
});
