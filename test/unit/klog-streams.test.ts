/** Where klog lines go with --log-text-split-stream and --log-text-info-buffer-size (upstream's text format rules). */
import {describe, expect, it} from '@jest/globals';
import {BufferedLineWriter, logOutputs} from '../../src/lib/klog-streams.js';

const line = (severity: string, n: number) => `${severity}1126 10:00:00.000000   12345 x.ts:1] "line ${n}"\n`;

describe('log text streams', () => {
  it('writes every line to stderr by default', () => {
    const out: string[] = [];
    const err: string[] = [];
    const o = logOutputs({splitStream: false, infoBufferSize: 0}, (t) => out.push(t), (t) => err.push(t));
    o.out(line('I', 1));
    o.err(line('E', 2));
    expect(out).toEqual([]);
    expect(err).toEqual([line('I', 1), line('E', 2)]);
  });

  it('splits info to stdout and the rest to stderr', () => {
    const out: string[] = [];
    const err: string[] = [];
    const o = logOutputs({splitStream: true, infoBufferSize: 0}, (t) => out.push(t), (t) => err.push(t));
    o.out(line('I', 1));
    o.err(line('W', 2));
    expect(out).toEqual([line('I', 1)]);
    expect(err).toEqual([line('W', 2)]);
  });

  it('buffers info lines up to the size, flushing whole lines only; errors go at once', () => {
    const out: string[] = [];
    const err: string[] = [];
    const size = line('I', 1).length * 2;
    const o = logOutputs({splitStream: true, infoBufferSize: size}, (t) => out.push(t), (t) => err.push(t));
    o.out(line('I', 1));
    o.out(line('I', 2));
    o.err(line('E', 3));
    expect(out).toEqual([]);
    expect(err).toEqual([line('E', 3)]);
    o.out(line('I', 4)); // does not fit: the two buffered lines leave in one write first
    expect(out).toEqual([line('I', 1) + line('I', 2)]);
    o.flush();
    expect(out).toEqual([line('I', 1) + line('I', 2), line('I', 4)]);
    o.flush();
    expect(out).toHaveLength(2);
  });

  it('writes a line larger than the buffer directly, after what is buffered', () => {
    const out: string[] = [];
    const w = new BufferedLineWriter((t) => out.push(t), 10);
    w.write('abc\n');
    w.write('x'.repeat(20));
    expect(out).toEqual(['abc\n', 'x'.repeat(20)]);
    expect(w.buffered).toBe(0);
  });
});
