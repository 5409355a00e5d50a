/**
 * SPDY/3.1 framing, as kubectl's SPDY transport (moby/spdystream, k8s.io/apimachinery's
 * httpstream/spdy) speaks it to the kubelet: the frame layout, the name/value header blocks and
 * their zlib compression with the SPDY/3 dictionary, one compression context per direction of a
 * connection.
 *
 * Hand-written because no maintained npm library fits: node-spdy and its spdy-transport have not
 * been released since 2018 and are bound to old `http` internals, and the part kubectl needs is
 * small (eight frame types, no flow control: spdystream neither sends nor honours WINDOW_UPDATE).
 * Header compression uses pako so that encoding and decoding stay synchronous and pure (Node's
 * zlib keeps a stream's dictionary context only on its asynchronous API).
 *
 * Pure: the encoder and the decoder hold only their zlib context and unparsed bytes.
 */
import {Deflate, Inflate, Z_SYNC_FLUSH} from 'pako';

export const SPDY_VERSION = 3;

export const FrameType = {
  SynStream: 1,
  SynReply: 2,
  RstStream: 3,
  Settings: 4,
  Ping: 6,
  GoAway: 7,
  Headers: 8,
  WindowUpdate: 9,
} as const;

export const FLAG_FIN = 0x01;
export const FLAG_UNIDIRECTIONAL = 0x02;

/** RST_STREAM status codes. */
export const RstStatus = {ProtocolError: 1, InvalidStream: 2, RefusedStream: 3, Cancel: 5, InternalError: 6} as const;

/** Header names are lower case on the wire; a name may carry several values. */
export type SpdyHeaders = Record<string, string[]>;

export type SpdyFrame =
  | {type: 'data'; streamId: number; fin: boolean; data: Buffer}
  | {type: 'synStream'; streamId: number; associatedId: number; priority: number; fin: boolean; unidirectional: boolean; headers: SpdyHeaders}
  | {type: 'synReply'; streamId: number; fin: boolean; headers: SpdyHeaders}
  | {type: 'headers'; streamId: number; fin: boolean; headers: SpdyHeaders}
  | {type: 'rstStream'; streamId: number; status: number}
  | {type: 'settings'; entries: {flags: number; id: number; value: number}[]}
  | {type: 'ping'; id: number}
  | {type: 'goAway'; lastGoodStreamId: number; status: number}
  | {type: 'windowUpdate'; streamId: number; delta: number}
  | {type: 'unknown'; frameType: number};

const WORDS = [
  'options', 'head', 'post', 'put', 'delete', 'trace', 'accept', 'accept-charset', 'accept-encoding', 'accept-language',
  'accept-ranges', 'age', 'allow', 'authorization', 'cache-control', 'connection', 'content-base', 'content-encoding',
  'content-language', 'content-length', 'content-location', 'content-md5', 'content-range', 'content-type', 'date', 'etag',
  'expect', 'expires', 'from', 'host', 'if-match', 'if-modified-since', 'if-none-match', 'if-range', 'if-unmodified-since',
  'last-modified', 'location', 'max-forwards', 'pragma', 'proxy-authenticate', 'proxy-authorization', 'range', 'referer',
  'retry-after', 'server', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'user-agent', 'vary', 'via', 'warning',
  'www-authenticate', 'method', 'get', 'status', '200 OK', 'version', 'HTTP/1.1', 'url', 'public', 'set-cookie', 'keep-alive', 'origin',
];
const TAIL =
  '100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505' +
  '203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 Unauthorized' +
  '403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service Unavailable' +
  'Jan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, Sat, Sun, GMT' +
  'chunked,text/html,image/png,image/jpg,image/gif,application/xml,application/xhtml+xml,text/plain,text/javascript,' +
  'publicprivatemax-age=gzip,deflate,sdchcharset=utf-8charset=iso-8859-1,utf-,*,enq=0.';

/** The SPDY/3 header compression dictionary (draft 3, section 2.6.10.1): length-prefixed words, then a tail. */
export const SPDY3_DICTIONARY: Buffer = Buffer.concat([
  ...WORDS.flatMap((word) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(word.length);
    return [length, Buffer.from(word, 'latin1')];
  }),
  Buffer.from(TAIL, 'latin1'),
]);

/** The uncompressed name/value block: count, then (length, name, length, values joined by NUL). */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const parts: Buffer[] = [];
  const u32 = (n: number) => {
    const b = Buffer.alloc(4);
    b.writeUInt32BE(n);
    return b;
  };
  const entries = Object.entries(headers);
  parts.push(u32(entries.length));
  for (const [name, values] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(values.join('\0'), 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(block: Buffer): SpdyHeaders {
  const headers: SpdyHeaders = {};
  let at = 0;
  const need = (n: number) => {
    if (at + n > block.length) throw new Error('SPDY header block is truncated');
  };
  need(4);
  const count = block.readUInt32BE(at);
  at += 4;
  for (let i = 0; i < count; i++) {
    need(4);
    const nameLength = block.readUInt32BE(at);
    at += 4;
    need(nameLength);
    const name = block.subarray(at, at + nameLength).toString('utf8').toLowerCase();
    at += nameLength;
    need(4);
    const valueLength = block.readUInt32BE(at);
    at += 4;
    need(valueLength);
    const values = block.subarray(at, at + valueLength).toString('utf8').split('\0');
    at += valueLength;
    headers[name] = [...(headers[name] ?? []), ...values];
  }
  return headers;
}

function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16BE(0x8000 | SPDY_VERSION, 0);
  head.writeUInt16BE(type, 2);
  head.writeUInt32BE(payload.length, 4);
  head[4] = flags;
  return Buffer.concat([head, payload]);
}

function u32s(...values: number[]): Buffer {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32BE(v >>> 0, i * 4));
  return b;
}

/** Writes frames; one instance per connection direction (the header compressor is stateful). */
export class SpdyEncoder {
  private readonly deflate = new Deflate({level: 9, dictionary: SPDY3_DICTIONARY});

  private compress(headers: SpdyHeaders): Buffer {
    this.deflate.chunks = [];
    if (!this.deflate.push(encodeHeaderBlock(headers), Z_SYNC_FLUSH)) throw new Error(`SPDY header compression failed: ${this.deflate.msg}`);
    const out = Buffer.concat(this.deflate.chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
    this.deflate.chunks = [];
    return out;
  }

  data(streamId: number, data: Buffer, fin = false): Buffer {
    return Buffer.concat([this.dataHeader(streamId, data.length, fin), data]);
  }

  /** The 8 bytes before a DATA frame's payload. */
  dataHeader(streamId: number, length: number, fin = false): Buffer {
    return this.writeDataHeader(Buffer.alloc(8), streamId, length, fin);
  }

  /** Writes a DATA frame's header into the first 8 bytes of `into` (which then takes the payload). */
  writeDataHeader(into: Buffer, streamId: number, length: number, fin = false): Buffer {
    into.writeUInt32BE(streamId & 0x7fffffff, 0);
    into.writeUInt32BE(length, 4);
    into[4] = fin ? FLAG_FIN : 0;
    return into;
  }

  synStream(streamId: number, headers: SpdyHeaders, options: {fin?: boolean; associatedId?: number; priority?: number} = {}): Buffer {
    const fixed = Buffer.alloc(10);
    fixed.writeUInt32BE(streamId & 0x7fffffff, 0);
    fixed.writeUInt32BE((options.associatedId ?? 0) & 0x7fffffff, 4);
    fixed[8] = ((options.priority ?? 0) & 0x7) << 5;
    return controlFrame(FrameType.SynStream, options.fin ? FLAG_FIN : 0, Buffer.concat([fixed, this.compress(headers)]));
  }

  synReply(streamId: number, headers: SpdyHeaders = {}, fin = false): Buffer {
    return controlFrame(FrameType.SynReply, fin ? FLAG_FIN : 0, Buffer.concat([u32s(streamId & 0x7fffffff), this.compress(headers)]));
  }

  headers(streamId: number, headers: SpdyHeaders, fin = false): Buffer {
    return controlFrame(FrameType.Headers, fin ? FLAG_FIN : 0, Buffer.concat([u32s(streamId & 0x7fffffff), this.compress(headers)]));
  }

  rstStream(streamId: number, status: number): Buffer {
    return controlFrame(FrameType.RstStream, 0, u32s(streamId & 0x7fffffff, status));
  }

  settings(entries: {flags?: number; id: number; value: number}[]): Buffer {
    const body = Buffer.alloc(4 + entries.length * 8);
    body.writeUInt32BE(entries.length, 0);
    entries.forEach((e, i) => {
      body.writeUInt32BE(e.id & 0xffffff, 4 + i * 8);
      body[4 + i * 8] = e.flags ?? 0;
      body.writeUInt32BE(e.value >>> 0, 8 + i * 8);
    });
    return controlFrame(FrameType.Settings, 0, body);
  }

  ping(id: number): Buffer {
    return controlFrame(FrameType.Ping, 0, u32s(id));
  }

  goAway(lastGoodStreamId: number, status = 0): Buffer {
    return controlFrame(FrameType.GoAway, 0, u32s(lastGoodStreamId & 0x7fffffff, status));
  }

  windowUpdate(streamId: number, delta: number): Buffer {
    return controlFrame(FrameType.WindowUpdate, 0, u32s(streamId & 0x7fffffff, delta & 0x7fffffff));
  }
}

/** Largest frame payload accepted (the 24-bit length allows 16 MiB; spdystream sends far less). */
const MAX_FRAME = 1 << 24;

/** Reads frames from bytes that arrive in arbitrary pieces; one instance per connection direction. */
export class SpdyDecoder {
  private readonly inflate = new Inflate({dictionary: SPDY3_DICTIONARY});
  private pending: Buffer = Buffer.alloc(0);

  private decompress(block: Buffer): SpdyHeaders {
    if (block.length === 0) return {};
    this.inflate.chunks = [];
    this.inflate.push(block, Z_SYNC_FLUSH);
    if (this.inflate.err) throw new Error(`SPDY header decompression failed: ${this.inflate.msg}`);
    const out = Buffer.concat(this.inflate.chunks.map((c) => Buffer.from(c.buffer, c.byteOffset, c.byteLength)));
    this.inflate.chunks = [];
    return decodeHeaderBlock(out);
  }

  /** Feeds bytes; returns every frame completed by them. Throws on a protocol error. */
  push(bytes: Buffer): SpdyFrame[] {
    this.pending = this.pending.length ? Buffer.concat([this.pending, bytes]) : bytes;
    const frames: SpdyFrame[] = [];
    while (this.pending.length >= 8) {
      const length = this.pending.readUInt32BE(4) & 0xffffff;
      if (length > MAX_FRAME) throw new Error(`SPDY frame of ${length} bytes is too large`);
      if (this.pending.length < 8 + length) break;
      const head = this.pending.subarray(0, 8);
      const payload = this.pending.subarray(8, 8 + length);
      this.pending = this.pending.subarray(8 + length);
      frames.push(this.parse(head, Buffer.from(payload)));
    }
    return frames;
  }

  private parse(head: Buffer, payload: Buffer): SpdyFrame {
    const flags = head[4];
    const fin = (flags & FLAG_FIN) !== 0;
    if ((head[0] & 0x80) === 0) return {type: 'data', streamId: head.readUInt32BE(0) & 0x7fffffff, fin, data: payload};
    const version = head.readUInt16BE(0) & 0x7fff;
    if (version !== SPDY_VERSION) throw new Error(`unsupported SPDY version ${version}`);
    const type = head.readUInt16BE(2);
    const need = (n: number) => {
      if (payload.length < n) throw new Error(`SPDY control frame ${type} is too short`);
    };
    switch (type) {
      case FrameType.SynStream:
        need(10);
        return {
          type: 'synStream',
          streamId: payload.readUInt32BE(0) & 0x7fffffff,
          associatedId: payload.readUInt32BE(4) & 0x7fffffff,
          priority: payload[8] >> 5,
          fin,
          unidirectional: (flags & FLAG_UNIDIRECTIONAL) !== 0,
          headers: this.decompress(payload.subarray(10)),
        };
      case FrameType.SynReply:
        need(4);
        return {type: 'synReply', streamId: payload.readUInt32BE(0) & 0x7fffffff, fin, headers: this.decompress(payload.subarray(4))};
      case FrameType.Headers:
        need(4);
        return {type: 'headers', streamId: payload.readUInt32BE(0) & 0x7fffffff, fin, headers: this.decompress(payload.subarray(4))};
      case FrameType.RstStream:
        need(8);
        return {type: 'rstStream', streamId: payload.readUInt32BE(0) & 0x7fffffff, status: payload.readUInt32BE(4)};
      case FrameType.Settings: {
        need(4);
        const count = payload.readUInt32BE(0);
        need(4 + count * 8);
        const entries = Array.from({length: count}, (_, i) => ({flags: payload[4 + i * 8], id: payload.readUInt32BE(4 + i * 8) & 0xffffff, value: payload.readUInt32BE(8 + i * 8)}));
        return {type: 'settings', entries};
      }
      case FrameType.Ping:
        need(4);
        return {type: 'ping', id: payload.readUInt32BE(0)};
      case FrameType.GoAway:
        need(4);
        return {type: 'goAway', lastGoodStreamId: payload.readUInt32BE(0) & 0x7fffffff, status: payload.length >= 8 ? payload.readUInt32BE(4) : 0};
      case FrameType.WindowUpdate:
        need(8);
        return {type: 'windowUpdate', streamId: payload.readUInt32BE(0) & 0x7fffffff, delta: payload.readUInt32BE(4) & 0x7fffffff};
      default:
        return {type: 'unknown', frameType: type};
    }
  }
}
