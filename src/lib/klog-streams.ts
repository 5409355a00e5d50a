/**
 * Where klog lines go, as upstream's text format decides (component-base/logs/api/v1/text.go):
 * by default every line to stderr; with `--log-text-split-stream`, info lines (first byte `I`) to
 * stdout and the rest (warnings, errors) to stderr; with `--log-text-info-buffer-size` as well, info
 * lines are gathered in a buffer of that size and written when it is full, every
 * `--log-flush-frequency` and when the process exits, so a chatty server makes fewer writes.
 * Errors are never buffered. The options' rules (gate LoggingAlphaOptions, the buffer only with split
 * streams) are checked with the other option rules (src/options/rules.ts).
 */
import {writeSync} from 'node:fs';

export interface LogStreamOptions {
  splitStream: boolean;
  /** Bytes; 0 writes each info line at once. */
  infoBufferSize: number;
}

type Write = (text: string) => void;

/**
 * A buffer in front of a writer (upstream's bufferedWriter): a line that does not fit flushes what is
 * buffered first, and one larger than the whole buffer bypasses it; lines are never split.
 */
export class BufferedLineWriter {
  private chunks: string[] = [];
  private bytes = 0;
  private readonly size: number;

  constructor(private readonly out: Write, size: number) {
    // Upstream caps the buffer at 2 GiB against overflow.
    this.size = Math.min(size, 2 * 1024 ** 3);
  }

  readonly write: Write = (text) => {
    const n = Buffer.byteLength(text);
    if (n > this.size - this.bytes && this.bytes > 0) this.flush();
    if (n > this.size) return this.out(text);
    this.chunks.push(text);
    this.bytes += n;
  };

  flush(): void {
    if (this.bytes === 0) return;
    const text = this.chunks.join('');
    this.chunks = [];
    this.bytes = 0;
    this.out(text);
  }

  get buffered(): number {
    return this.bytes;
  }
}

export interface LogOutputs {
  out: Write;
  err: Write;
  /** Writes what the info buffer holds (no-op without one). */
  flush(): void;
}

/** The klog outputs for the options, on the given stdout and stderr writers. */
export function logOutputs(o: LogStreamOptions, stdout: Write, stderr: Write): LogOutputs {
  if (!o.splitStream) return {out: stderr, err: stderr, flush: () => undefined};
  if (o.infoBufferSize <= 0) return {out: stdout, err: stderr, flush: () => undefined};
  const buffer = new BufferedLineWriter(stdout, o.infoBufferSize);
  return {out: buffer.write, err: stderr, flush: () => buffer.flush()};
}

/**
 * Installs the outputs for this process: the periodic flush (unref'd: it never keeps the process
 * alive) and a last flush at exit, written synchronously because nothing asynchronous runs then.
 */
export function processLogOutputs(o: LogStreamOptions, flushEveryMs: number): LogOutputs {
  let exiting = false;
  const stdout: Write = (text) => (exiting ? writeSync(1, text) : process.stdout.write(text));
  const outputs = logOutputs(o, stdout, (text) => process.stderr.write(text));
  if (o.splitStream && o.infoBufferSize > 0) {
    if (flushEveryMs > 0) setInterval(outputs.flush, flushEveryMs).unref();
    process.once('exit', () => {
      exiting = true;
      outputs.flush();
    });
  }
  return outputs;
}
