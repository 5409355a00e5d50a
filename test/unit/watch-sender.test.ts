/** The watch stream's outbound queue: order, backpressure, the bound on a slow client, and the end. */
import {EventEmitter} from 'node:events';
import {describe, expect, it} from '@jest/globals';
import {WatchSender} from '../../src/daemons/apiserver/rest/watch-sender.js';

/** A response whose write() reports backpressure after `capacity` lines until drain() is called. */
class FakeResponse extends EventEmitter {
  written: string[] = [];
  writableEnded = false;
  private buffered = 0;
  constructor(private readonly capacity: number) {
    super();
  }
  write(line: string): boolean {
    this.written.push(line);
    this.buffered++;
    return this.buffered < this.capacity;
  }
  end(): void {
    this.writableEnded = true;
  }
  drain(): void {
    this.buffered = 0;
    this.emit('drain');
  }
}

describe('WatchSender', () => {
  it('writes at once while the client keeps up', () => {
    const res = new FakeResponse(100);
    const sender = new WatchSender(res, {maxQueuedBytes: 1000, onOverflow: () => undefined});
    sender.send(() => 'a\n', 2);
    sender.send(() => 'b\n', 2);
    expect(res.written).toEqual(['a\n', 'b\n']);
    expect(sender.pending).toBe(0);
  });

  it('holds lines while the response is backed up, and writes them in order on drain', () => {
    const res = new FakeResponse(2);
    const sender = new WatchSender(res, {maxQueuedBytes: 1000, onOverflow: () => undefined});
    for (const line of ['1', '2', '3', '4', '5']) sender.send(() => line, 1);
    expect(res.written).toEqual(['1', '2']);
    expect(sender.pending).toBe(3);
    res.drain();
    expect(res.written).toEqual(['1', '2', '3', '4']);
    res.drain();
    expect(res.written).toEqual(['1', '2', '3', '4', '5']);
  });

  it('writes on past the high-water mark until the response holds writeAheadBytes unsent', () => {
    // A response over its high-water mark from the first line (write() says false), that tells how much it holds.
    let sent = 0;
    const res = new FakeResponse(0);
    Object.defineProperty(res, 'writableLength', {get: () => res.written.join('').length - sent});
    const sender = new WatchSender(res, {maxQueuedBytes: 1000, onOverflow: () => undefined, writeAheadBytes: 10});
    for (const line of ['aaaa', 'bbbb', 'cccc', 'dddd']) sender.send(() => line, 4);
    // 4, 8, then 12 bytes held: the third line reaches the write-ahead, the fourth waits.
    expect(res.written).toEqual(['aaaa', 'bbbb', 'cccc']);
    expect(sender.pending).toBe(1);
    sent = 12;
    res.drain();
    expect(res.written).toEqual(['aaaa', 'bbbb', 'cccc', 'dddd']);
  });

  it('makes a line only when its turn comes', () => {
    const res = new FakeResponse(1);
    const sender = new WatchSender(res, {maxQueuedBytes: 1000, onOverflow: () => undefined});
    const made: string[] = [];
    for (const line of ['x', 'y']) sender.send(() => (made.push(line), line), 0);
    expect(made).toEqual(['x']);
    res.drain();
    expect(made).toEqual(['x', 'y']);
  });

  it('ends the watch when a slow client lets more than maxQueuedBytes wait', () => {
    const res = new FakeResponse(1);
    let overflowed = 0;
    const sender = new WatchSender(res, {maxQueuedBytes: 10, onOverflow: () => overflowed++});
    sender.send(() => 'first', 5);
    for (let i = 0; i < 5; i++) sender.send(() => 'more', 4);
    expect(overflowed).toBe(1);
    sender.end();
    // Nothing that waited is written after the overflow; the stream ends at once.
    expect(res.written).toEqual(['first']);
    expect(res.writableEnded).toBe(true);
  });

  it('ends the response only after what is queued has been written', () => {
    const res = new FakeResponse(1);
    const sender = new WatchSender(res, {maxQueuedBytes: 1000, onOverflow: () => undefined});
    sender.send(() => 'a', 1);
    sender.send(() => 'ERROR', 5);
    sender.end();
    expect(res.writableEnded).toBe(false);
    res.drain();
    expect(res.written).toEqual(['a', 'ERROR']);
    expect(res.writableEnded).toBe(true);
  });

  it('drops everything once the client has gone', () => {
    const res = new FakeResponse(1);
    const sender = new WatchSender(res, {maxQueuedBytes: 1000, onOverflow: () => undefined});
    sender.send(() => 'a', 1);
    sender.send(() => 'b', 1);
    res.emit('close');
    res.drain();
    sender.send(() => 'c', 1);
    expect(res.written).toEqual(['a']);
  });
});
