/**
 * Container log files in the CRI format the kubelet and `kubectl logs` read:
 *
 *   2024-05-01T10:00:00.123000000Z stdout F hello
 *
 * one line per line of output (`P` marks a chunk of a line longer than 16 KiB, continued by the
 * next record), rotated by size: the full file is renamed `<n>.log.<YYYYMMDD-hhmmss>` and at most
 * `maxFiles` files (the live one included) are kept per container instance.
 * Hand-written: rotation must follow the kubelet's naming and count rules, which no logging library does.
 */
import fs from 'node:fs';
import path from 'node:path';

export type StreamName = 'stdout' | 'stderr';

export interface LogWriterOptions {
  maxSize: number;
  maxFiles: number;
  now: () => number;
}

/** Longest line payload per record, as containerd's CRI plugin splits long lines. */
export const MAX_RECORD = 16 * 1024;

/** RFC3339 with a fixed nine-digit fraction, as CRI log timestamps are written. */
export function criTimestamp(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2024-05-01T10:00:00.123Z
  return `${iso.slice(0, 19)}.${iso.slice(20, 23)}000000Z`;
}

export function formatRecord(ms: number, stream: StreamName, tag: 'F' | 'P', text: string): string {
  return `${criTimestamp(ms)} ${stream} ${tag} ${text}\n`;
}

function rotationSuffix(ms: number): string {
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}`;
}

export class RotatingLogWriter {
  private fd: number;
  private size: number;
  private readonly pending: Record<StreamName, string> = {stdout: '', stderr: ''};

  constructor(readonly file: string, private readonly options: LogWriterOptions) {
    fs.mkdirSync(path.dirname(file), {recursive: true});
    this.fd = fs.openSync(file, 'a');
    this.size = fs.fstatSync(this.fd).size;
  }

  /** Appends a chunk of a stream's output; complete lines are written at once, the rest waits for its newline. */
  write(stream: StreamName, chunk: string): void {
    const text = this.pending[stream] + chunk;
    const lines = text.split('\n');
    this.pending[stream] = lines.pop() ?? '';
    for (const line of lines) this.writeLine(stream, line);
    while (this.pending[stream].length > MAX_RECORD) {
      this.append(formatRecord(this.options.now(), stream, 'P', this.pending[stream].slice(0, MAX_RECORD)));
      this.pending[stream] = this.pending[stream].slice(MAX_RECORD);
    }
  }

  private writeLine(stream: StreamName, line: string): void {
    let rest = line;
    while (rest.length > MAX_RECORD) {
      this.append(formatRecord(this.options.now(), stream, 'P', rest.slice(0, MAX_RECORD)));
      rest = rest.slice(MAX_RECORD);
    }
    this.append(formatRecord(this.options.now(), stream, 'F', rest));
  }

  /** Writes what is left of a stream without a final newline (the stream ended). */
  end(stream: StreamName): void {
    if (this.pending[stream] !== '') this.writeLine(stream, this.pending[stream]);
    this.pending[stream] = '';
  }

  close(): void {
    this.end('stdout');
    this.end('stderr');
    fs.closeSync(this.fd);
  }

  private append(record: string): void {
    const bytes = Buffer.byteLength(record);
    if (this.size > 0 && this.size + bytes > this.options.maxSize) this.rotate();
    fs.writeSync(this.fd, record);
    this.size += bytes;
  }

  private rotate(): void {
    fs.closeSync(this.fd);
    let target = `${this.file}.${rotationSuffix(this.options.now())}`;
    // Several rotations within one second: keep every file distinct and in order.
    for (let n = 1; fs.existsSync(target); n++) target = `${this.file}.${rotationSuffix(this.options.now())}.${n}`;
    fs.renameSync(this.file, target);
    this.fd = fs.openSync(this.file, 'a');
    this.size = 0;
    this.pruneRotated();
  }

  /** The rotated files of this log, oldest first. */
  rotatedFiles(): string[] {
    const dir = path.dirname(this.file);
    const prefix = `${path.basename(this.file)}.`;
    return fs.readdirSync(dir)
      .filter((name) => name.startsWith(prefix))
      .sort(compareRotated)
      .map((name) => path.join(dir, name));
  }

  private pruneRotated(): void {
    const rotated = this.rotatedFiles();
    const keep = Math.max(0, this.options.maxFiles - 1);
    for (const file of rotated.slice(0, Math.max(0, rotated.length - keep))) fs.rmSync(file, {force: true});
  }
}

/** Orders `0.log.20240501-100000` before `0.log.20240501-100000.1` before `0.log.20240501-100001`. */
function compareRotated(a: string, b: string): number {
  const key = (name: string): [string, number] => {
    const m = /^(.*?\.log\.\d{8}-\d{6})(?:\.(\d+))?$/.exec(name);
    return m ? [m[1], Number(m[2] ?? 0)] : [name, 0];
  };
  const [ka, na] = key(a);
  const [kb, nb] = key(b);
  return ka < kb ? -1 : ka > kb ? 1 : na - nb;
}
