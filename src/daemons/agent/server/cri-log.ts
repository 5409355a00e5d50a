/**
 * Turning a container log file into what `kubectl logs` prints, as upstream's ReadLogs
 * (pkg/kubelet/kuberuntime/logs): CRI records (`<RFC3339Nano> <stdout|stderr> <F|P> <text>`) lose
 * their prefix, `P` records join the next one, `timestamps` puts the record's time back in front,
 * `sinceMs` drops older records, `tailLines` counts lines from the end of the file and `limitBytes`
 * cuts the output. Pure; works on the bytes of the file so that limits count bytes, not characters.
 *
 * Hand-written: the format is the CRI's, and no library reads it.
 */
import type {ContainerLogOptions} from './log-options.js';

const NEWLINE = 0x0a;
const SPACE = 0x20;

export interface CriRecord {
  /** As written in the file (RFC3339 with up to nine fraction digits). */
  timestamp: string;
  stream: 'stdout' | 'stderr';
  /** `P`: a piece of a longer line, continued by the next record. */
  partial: boolean;
  content: Buffer;
}

/** One line of a CRI log file, without its newline; undefined when it is not a CRI record. */
export function parseCriLine(line: Buffer): CriRecord | undefined {
  const first = line.indexOf(SPACE);
  if (first <= 0) return undefined;
  const timestamp = line.subarray(0, first).toString('latin1');
  if (Number.isNaN(Date.parse(timestamp))) return undefined;
  const second = line.indexOf(SPACE, first + 1);
  if (second < 0) return undefined;
  const stream = line.subarray(first + 1, second).toString('latin1');
  if (stream !== 'stdout' && stream !== 'stderr') return undefined;
  const third = line.indexOf(SPACE, second + 1);
  const tags = line.subarray(second + 1, third < 0 ? line.length : third).toString('latin1');
  // Tags are `:`-separated; the first says whether the line is complete.
  const partial = tags.split(':')[0] === 'P';
  return {timestamp, stream, partial, content: third < 0 ? Buffer.alloc(0) : line.subarray(third + 1)};
}

/** Go's RFC3339Nano output: trailing zeros of the fraction dropped, and the dot with them. */
export function formatTimestamp(timestamp: string): string {
  return timestamp.replace(/\.(\d*?)0+(?=Z|[+-]\d{2}:\d{2}$)/, (_match, digits: string) => (digits ? `.${digits}` : ''));
}

/** Where the last `lines` lines of the data start (a final newline does not start another line). */
export function tailStart(data: Buffer, lines: number): number {
  if (lines === 0) return data.length;
  let end = data.length > 0 && data[data.length - 1] === NEWLINE ? data.length - 1 : data.length;
  for (let seen = 0; end > 0; ) {
    const newline = data.lastIndexOf(NEWLINE, end - 1);
    if (newline < 0) return 0;
    if (++seen === lines) return newline + 1;
    end = newline;
  }
  return 0;
}

function splitLines(data: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  let start = 0;
  while (start < data.length) {
    const newline = data.indexOf(NEWLINE, start);
    const end = newline < 0 ? data.length : newline;
    lines.push(data.subarray(start, end));
    start = end + 1;
  }
  return lines;
}

/** Collects output up to a byte limit, cutting the piece that crosses it. */
class LimitedOutput {
  private readonly pieces: Buffer[] = [];
  private size = 0;

  constructor(private readonly limit: number) {}

  get full(): boolean {
    return this.size >= this.limit;
  }

  push(piece: Buffer): void {
    const room = this.limit - this.size;
    if (room <= 0) return;
    const kept = piece.length > room ? piece.subarray(0, room) : piece;
    this.pieces.push(kept);
    this.size += kept.length;
  }

  result(): Buffer {
    return Buffer.concat(this.pieces);
  }
}

export type RenderOptions = Partial<Pick<ContainerLogOptions, 'tailLines' | 'limitBytes' | 'timestamps' | 'sinceMs'>>;

/**
 * The output for a log file's contents. A file whose first line is not a CRI record is served as
 * plain text (upstream refuses it; plain files are what a hand-made log path gives, and their
 * lines are the best answer there is): tail and limit apply, timestamps and since cannot.
 */
export function renderContainerLog(data: Buffer, options: RenderOptions): Buffer {
  const start = options.tailLines === undefined ? 0 : tailStart(data, options.tailLines);
  const lines = splitLines(data.subarray(start));
  const output = new LimitedOutput(options.limitBytes ?? Infinity);
  const firstLine = lines.find((line) => line.length > 0);
  if (firstLine !== undefined && parseCriLine(firstLine) === undefined) {
    for (const line of lines) output.push(Buffer.concat([line, Buffer.from('\n')]));
    return output.result();
  }
  for (const line of lines) {
    if (output.full) break;
    const record = parseCriLine(line);
    if (!record) continue; // upstream logs and skips a line it cannot parse
    if (options.sinceMs !== undefined && Date.parse(record.timestamp) < options.sinceMs) continue;
    if (options.timestamps) output.push(Buffer.from(`${formatTimestamp(record.timestamp)} `));
    output.push(record.content);
    if (!record.partial) output.push(Buffer.from('\n'));
  }
  return output.result();
}
