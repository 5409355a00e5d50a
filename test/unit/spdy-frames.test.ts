/**
 * The SPDY/3.1 codec kubectl's SPDY transport needs: frames round-trip through the encoder and the
 * decoder whatever the piece boundaries, header blocks are compressed with the SPDY/3 dictionary
 * as real zlib reads them (Node's zlib is the independent oracle), and the compression context
 * carries over from one header block to the next as in Go's framer.
 */
import {describe, expect, it} from '@jest/globals';
import zlib from 'node:zlib';
import {SPDY3_DICTIONARY, SpdyDecoder, SpdyEncoder, decodeHeaderBlock, encodeHeaderBlock} from '../../src/daemons/agent/streaming/spdy-frames.js';

describe('SPDY/3 dictionary', () => {
  it('has the 1423 bytes of the draft, from the options entry to enq=0.', () => {
    expect(SPDY3_DICTIONARY.length).toBe(1423);
    expect([...SPDY3_DICTIONARY.subarray(0, 11)]).toEqual([0, 0, 0, 7, ...Buffer.from('options')]);
    expect(SPDY3_DICTIONARY.subarray(-6).toString()).toBe('enq=0.');
  });
});

describe('header blocks', () => {
  it('round-trip names (lower-cased) and multiple values', () => {
    const block = encodeHeaderBlock({StreamType: ['data'], port: ['80', '443']});
    expect(decodeHeaderBlock(block)).toEqual({streamtype: ['data'], port: ['80', '443']});
  });
  it('refuse a truncated block', () => {
    expect(() => decodeHeaderBlock(encodeHeaderBlock({a: ['b']}).subarray(0, 9))).toThrow('truncated');
  });
  it('are compressed so that zlib with the SPDY dictionary reads them, block after block', () => {
    const e = new SpdyEncoder();
    const first = e.synStream(1, {streamtype: ['error']});
    const second = e.synStream(3, {streamtype: ['stdout']});
    const inflate = zlib.createInflate({dictionary: SPDY3_DICTIONARY});
    const out: Buffer[] = [];
    inflate.on('data', (c: Buffer) => out.push(c));
    return new Promise<void>((resolve) => {
      inflate.write(Buffer.concat([first.subarray(18), second.subarray(18)]), () => {
        inflate.flush(zlib.constants.Z_SYNC_FLUSH, () => {
          const raw = Buffer.concat(out);
          const firstBlock = encodeHeaderBlock({streamtype: ['error']});
          expect(decodeHeaderBlock(raw.subarray(0, firstBlock.length))).toEqual({streamtype: ['error']});
          expect(decodeHeaderBlock(raw.subarray(firstBlock.length))).toEqual({streamtype: ['stdout']});
          inflate.close();
          resolve();
        });
      });
    });
  });
});

describe('frames', () => {
  const e = new SpdyEncoder();
  const bytes = Buffer.concat([
    e.synStream(1, {streamtype: ['error'], port: ['8080'], requestid: ['0']}, {priority: 2}),
    e.synReply(1),
    e.data(1, Buffer.from('hello')),
    e.data(1, Buffer.alloc(0), true),
    e.headers(1, {x: ['y']}),
    e.rstStream(3, 5),
    e.settings([{id: 7, value: 65536}]),
    e.ping(2),
    e.goAway(1, 0),
    e.windowUpdate(1, 1000),
  ]);
  const expected = [
    {type: 'synStream', streamId: 1, associatedId: 0, priority: 2, fin: false, unidirectional: false, headers: {streamtype: ['error'], port: ['8080'], requestid: ['0']}},
    {type: 'synReply', streamId: 1, fin: false, headers: {}},
    {type: 'data', streamId: 1, fin: false, data: Buffer.from('hello')},
    {type: 'data', streamId: 1, fin: true, data: Buffer.alloc(0)},
    {type: 'headers', streamId: 1, fin: false, headers: {x: ['y']}},
    {type: 'rstStream', streamId: 3, status: 5},
    {type: 'settings', entries: [{flags: 0, id: 7, value: 65536}]},
    {type: 'ping', id: 2},
    {type: 'goAway', lastGoodStreamId: 1, status: 0},
    {type: 'windowUpdate', streamId: 1, delta: 1000},
  ];
  it('decode as encoded, in one piece', () => {
    expect(new SpdyDecoder().push(bytes)).toEqual(expected);
  });
  it('decode as encoded, three bytes at a time', () => {
    const d = new SpdyDecoder();
    const frames = [];
    for (let i = 0; i < bytes.length; i += 3) frames.push(...d.push(bytes.subarray(i, i + 3)));
    expect(frames).toEqual(expected);
  });
  it('refuse another SPDY version', () => {
    const frame = e.ping(1);
    frame.writeUInt16BE(0x8002, 0);
    expect(() => new SpdyDecoder().push(frame)).toThrow('unsupported SPDY version 2');
  });
});
