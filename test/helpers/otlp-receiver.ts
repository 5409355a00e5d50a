/**
 * A tiny OTLP/gRPC trace receiver on 127.0.0.1 for tests: it serves the collector's TraceService
 * Export method with @grpc/grpc-js and decodes the protobuf requests itself (only the span fields
 * tests look at), so assertions read real exported spans.
 */
import {Server, ServerCredentials, type ServiceDefinition} from '@grpc/grpc-js';

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{traceId: string; spanId: string}>;
  serviceName?: string;
}

type Field = {no: number; wire: number; value: bigint | Buffer};

/** The fields of one protobuf message (varints, 64/32-bit and length-delimited values). */
function fields(buf: Buffer): Field[] {
  const out: Field[] = [];
  let i = 0;
  const varint = (): bigint => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      const b = buf[i++]!;
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const no = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({no, wire, value: varint()});
    else if (wire === 1) {
      out.push({no, wire, value: buf.subarray(i, i + 8)});
      i += 8;
    } else if (wire === 2) {
      const len = Number(varint());
      out.push({no, wire, value: buf.subarray(i, i + len)});
      i += len;
    } else if (wire === 5) {
      out.push({no, wire, value: buf.subarray(i, i + 4)});
      i += 4;
    } else throw new Error(`unsupported wire type ${wire}`);
  }
  return out;
}

const bytes = (f: Field[], no: number) => f.filter((x) => x.no === no).map((x) => x.value as Buffer);
const hex = (b: Buffer | undefined) => (b ? b.toString('hex') : '');

function anyValue(buf: Buffer): string | number | boolean {
  const f = fields(buf)[0];
  if (!f) return '';
  if (f.no === 1) return (f.value as Buffer).toString('utf8');
  if (f.no === 2) return f.value !== 0n;
  if (f.no === 3) return Number(f.value as bigint);
  if (f.no === 4) return (f.value as Buffer).readDoubleLE(0);
  return '';
}

function attributes(list: Buffer[]): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const kv of list) {
    const f = fields(kv);
    out[bytes(f, 1)[0]?.toString('utf8') ?? ''] = anyValue(bytes(f, 2)[0] ?? Buffer.alloc(0));
  }
  return out;
}

export function decodeExportRequest(buf: Buffer): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of bytes(fields(buf), 1)) {
    const rsf = fields(rs);
    const resource = bytes(rsf, 1)[0];
    const serviceName = resource ? String(attributes(bytes(fields(resource), 1))['service.name'] ?? '') : undefined;
    for (const ss of bytes(rsf, 2)) {
      for (const s of bytes(fields(ss), 2)) {
        const f = fields(s);
        spans.push({
          traceId: hex(bytes(f, 1)[0]),
          spanId: hex(bytes(f, 2)[0]),
          parentSpanId: hex(bytes(f, 4)[0]),
          name: bytes(f, 5)[0]?.toString('utf8') ?? '',
          kind: Number((f.find((x) => x.no === 6)?.value as bigint | undefined) ?? 0n),
          attributes: attributes(bytes(f, 9)),
          links: bytes(f, 13).map((l) => ({traceId: hex(bytes(fields(l), 1)[0]), spanId: hex(bytes(fields(l), 2)[0])})),
          serviceName,
        });
      }
    }
  }
  return spans;
}

export interface OtlpReceiver {
  endpoint: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = new Server();
  const service: ServiceDefinition = {
    Export: {
      path: '/opentelemetry.proto.collector.trace.v1.TraceService/Export',
      requestStream: false,
      responseStream: false,
      requestSerialize: (b: Buffer) => b,
      requestDeserialize: (b: Buffer) => b,
      responseSerialize: () => Buffer.alloc(0),
      responseDeserialize: (b: Buffer) => b,
    },
  };
  server.addService(service, {
    Export: (call: {request: Buffer}, callback: (error: null, response: Buffer) => void) => {
      spans.push(...decodeExportRequest(call.request));
      callback(null, Buffer.alloc(0));
    },
  });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, p) => (error ? reject(error) : resolve(p))));
  return {
    endpoint: `127.0.0.1:${port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.tryShutdown(() => resolve())),
  };
}
