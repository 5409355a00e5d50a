/**
 * The static pod URL source (`--manifest-url`, `--manifest-url-header`, `--http-check-frequency`;
 * upstream pkg/kubelet/config/http.go). Every period the URL is fetched with the configured
 * headers (a name given several values sends them as separate header lines, in order); the body
 * is a Pod or a PodList. A failed fetch or a bad body is reported and the previous set is kept;
 * an empty body empties the set; an unchanged body changes nothing.
 *
 * node:http rather than fetch: fetch folds repeated header names into one comma-joined line,
 * where upstream (Go's http.Header) sends one line per value.
 */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { klog, type Logger } from '../../../lib/klog.js';
import { decodeManifestUrlBody, MAX_MANIFEST_BYTES } from './decode.js';
import type { ProblemReporter, SetPods } from './types.js';

export interface HttpSourceOptions {
  /** `--manifest-url`. */
  url: string;
  /** `--manifest-url-header` (staticPodURLHeader): each name's values in the order given. */
  headers?: Record<string, string[]>;
  nodeName: string;
  /** `--http-check-frequency` in milliseconds. */
  checkFrequencyMs: number;
  push: SetPods;
  onProblem?: ProblemReporter;
  /** Per request (upstream's client timeout: 10 s). */
  timeoutMs?: number;
  logger?: Logger;
}

interface Fetched {
  status: number;
  statusText: string;
  body: Buffer;
}

function fetchBody(url: URL, headers: Record<string, string[]>, timeoutMs: number): Promise<Fetched> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = send(url, { method: 'GET', headers, timeout: timeoutMs }, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // Upstream reads at most 10 MiB and fails beyond that.
        if (size > MAX_MANIFEST_BYTES) req.destroy(new Error(`the read limit of ${MAX_MANIFEST_BYTES} bytes was reached`));
        else chunks.push(chunk);
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, statusText: res.statusMessage ?? '', body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs}ms`)));
    req.on('error', reject);
    req.end();
  });
}

export class HttpSource {
  private readonly log: Logger;
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  /** The last body read, to skip decoding an unchanged one (upstream compares the bytes). */
  private lastBody?: Buffer;

  constructor(private readonly options: HttpSourceOptions) {
    this.log = options.logger ?? klog('http-source.ts');
  }

  start(): void {
    if (this.timer) return;
    this.log.info('Watching URL', 'URL', this.options.url);
    void this.checkNow();
    this.timer = setInterval(() => void this.checkNow(), this.options.checkFrequencyMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** Fetches now (a fetch already under way is shared); failures are reported, never thrown. */
  checkNow(): Promise<void> {
    this.running ??= this.fetchOnce()
      .catch((error: Error) => this.problem(error.message))
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private problem(message: string): void {
    this.log.error('Failed to read pod manifest from URL', 'URL', this.options.url, 'err', message);
    this.options.onProblem?.({ source: 'http', origin: this.options.url, message });
  }

  private async fetchOnce(): Promise<void> {
    const { url, nodeName } = this.options;
    const response = await fetchBody(new URL(url), this.options.headers ?? {}, this.options.timeoutMs ?? 10_000);
    if (response.status !== 200) return this.problem(`${url}: ${response.status} ${response.statusText}`);
    if (response.body.length === 0) {
      this.lastBody = response.body;
      this.options.push('http', []);
      return this.problem(`zero-length data received from ${url}`);
    }
    if (this.lastBody?.equals(response.body)) return;
    this.lastBody = response.body;
    this.options.push('http', decodeManifestUrlBody(response.body.toString('utf8'), url, nodeName));
  }
}
