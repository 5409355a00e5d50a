/** In-memory request/response objects with the shape of Node's, for the filter and health tests. */
import {EventEmitter} from 'node:events';

export class FakeRequest extends EventEmitter {
  headers: Record<string, string | string[] | undefined>;
  stream?: {session?: {close(): void}};
  constructor(
    public url: string,
    public method = 'GET',
    headers: Record<string, string> = {},
    public httpVersion = '1.1',
  ) {
    super();
    this.headers = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  }
}

export class FakeResponse extends EventEmitter {
  statusCode = 200;
  headersSent = false;
  writableEnded = false;
  destroyed = false;
  body = '';
  private readonly headerMap = new Map<string, string>();

  setHeader(name: string, value: string | number | readonly string[]): this {
    if (this.headersSent) throw new Error('ERR_HTTP_HEADERS_SENT');
    this.headerMap.set(name.toLowerCase(), String(value));
    return this;
  }
  getHeader(name: string): string | undefined {
    return this.headerMap.get(name.toLowerCase());
  }
  removeHeader(name: string): void {
    this.headerMap.delete(name.toLowerCase());
  }
  get headers(): Record<string, string> {
    return Object.fromEntries(this.headerMap);
  }
  writeHead(code: number): this {
    this.statusCode = code;
    this.headersSent = true;
    return this;
  }
  write(chunk: string): boolean {
    this.headersSent = true;
    this.body += chunk;
    return true;
  }
  end(chunk?: string): this {
    if (this.writableEnded) return this;
    if (chunk) this.body += chunk;
    this.headersSent = true;
    this.writableEnded = true;
    this.emit('finish');
    this.emit('close');
    return this;
  }
  destroy(): this {
    this.destroyed = true;
    this.emit('close');
    return this;
  }
  /** The client went away before the response ended. */
  abort(): void {
    this.emit('close');
  }
}

/** Waits until the response ends (handlers answer asynchronously). */
export async function ended(res: FakeResponse): Promise<FakeResponse> {
  for (let i = 0; i < 100 && !res.writableEnded; i++) await new Promise((r) => setImmediate(r));
  return res;
}
