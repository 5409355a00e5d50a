/**
 * Unary gRPC services described by a small proto text, without a proto loader: protobufjs parses the
 * messages, grpc-js carries the calls, and nothing is looked up on disk at run time (the CLI is
 * bundled). Used by the clients of upstream's plugin APIs on unix sockets (external JWT signer, KMS v2)
 * and by the test servers that play those plugins.
 */
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';

export type Message = Record<string, unknown>;

/** `{Name: [RequestType, ResponseType]}` of one service. */
export type UnaryMethods = Record<string, readonly [string, string]>;

/** The grpc-js service definition of `service` (`v1.ExternalJWTSigner`) in package `pkg` of `proto`. */
export function unaryService(proto: string, pkg: string, service: string, methods: UnaryMethods): grpc.ServiceDefinition {
  const root = protobuf.parse(proto, {keepCase: true}).root;
  const type = (name: string) => root.lookupType(`${pkg}.${name}`);
  // longs as numbers, bytes as Buffers, absent fields as their zero values: what callers compare.
  const toObject = (t: protobuf.Type, bytes: Buffer) => t.toObject(t.decode(bytes), {longs: Number, bytes: Buffer, defaults: true}) as Message;
  const definition: Record<string, grpc.MethodDefinition<object, Message>> = {};
  for (const [name, [request, response]] of Object.entries(methods)) {
    const req = type(request);
    const res = type(response);
    definition[name] = {
      path: `/${pkg}.${service}/${name}`,
      requestStream: false,
      responseStream: false,
      requestSerialize: (message: object) => Buffer.from(req.encode(req.fromObject(message)).finish()),
      requestDeserialize: (bytes: Buffer) => toObject(req, bytes),
      responseSerialize: (message: object) => Buffer.from(res.encode(res.fromObject(message)).finish()),
      responseDeserialize: (bytes: Buffer) => toObject(res, bytes),
    } satisfies grpc.MethodDefinition<object, Message>;
  }
  return definition;
}

/** A client of `definition` on a unix socket path, whose calls resolve with the response or reject with the status details. */
export class UnaryClient {
  private readonly client: grpc.Client & Record<string, (request: object, options: grpc.CallOptions, callback: (error: grpc.ServiceError | null, response: Message) => void) => void>;

  constructor(definition: grpc.ServiceDefinition, name: string, socketPath: string) {
    const Client = grpc.makeGenericClientConstructor(definition, name);
    this.client = new Client(`unix:${socketPath}`, grpc.credentials.createInsecure()) as UnaryClient['client'];
  }

  call(method: string, request: object, timeoutMs: number): Promise<Message> {
    return new Promise((resolve, reject) => {
      this.client[method]!(request, {deadline: Date.now() + timeoutMs}, (error, response) => (error ? reject(new Error(error.details || error.message)) : resolve(response)));
    });
  }

  close(): void {
    this.client.close();
  }
}
