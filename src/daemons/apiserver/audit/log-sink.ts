/**
 * The audit log file (`--audit-log-path`, `-` for standard output): one encoded event a line.
 * Rotation by size, with count limit and gzip, is rotating-file-stream's; it has no age limit, so
 * `--audit-log-maxage` is applied here after each rotation (upstream's lumberjack removes backups older
 * than maxage days). Rotated files are named as lumberjack names them: `<name>-<UTC time><ext>`.
 *
 * Without rotation (`--audit-log-maxsize 0`, the default) each group of lines is appended with one
 * synchronous write, as upstream's backend writes its file from the request's goroutine: a write
 * to the page cache takes microseconds, while an asynchronous one (thread pool hand-off, completion
 * callback, promise) cost more CPU than the bytes and held every response a turn longer.
 */
import {closeSync, mkdirSync, openSync, writeSync} from 'node:fs';
import {readdir, stat, unlink} from 'node:fs/promises';
import {basename, dirname, extname, join} from 'node:path';
import type {Writable} from 'node:stream';
import {createStream} from 'rotating-file-stream';
import {encodeEvent, type AuditEvent, type LogFormat} from './event.js';
import {GroupCommitWriter} from './group-commit.js';
import type {AuditSink} from './backend.js';

export interface LogSinkOptions {
  path: string;
  format: LogFormat;
  apiVersion: string;
  /** Megabytes; 0 never rotates. */
  maxSizeMb: number;
  /** Days; 0 keeps backups regardless of age. */
  maxAgeDays: number;
  /** Backups kept; 0 keeps all. */
  maxBackups: number;
  compress: boolean;
  onError?: (error: unknown) => void;
}

/** lumberjack's backup time format, 2006-01-02T15-04-05.000, in UTC. */
function backupStamp(time: Date): string {
  return time.toISOString().slice(0, 23).replace(/:/g, '-');
}

export function logSink(options: LogSinkOptions, stdout: Writable = process.stdout): AuditSink {
  const {path} = options;
  let stream: Writable | undefined;
  let fd: number | undefined;
  let ownStream = true;
  if (path === '-') {
    stream = stdout;
    ownStream = false;
  } else {
    mkdirSync(dirname(path), {recursive: true, mode: 0o700});
    if (options.maxSizeMb > 0) {
      const ext = extname(path);
      const stem = basename(path, ext);
      const rotating = createStream(
        (time: Date | number | null, index?: number) => {
          if (!time) return basename(path);
          const t = time instanceof Date ? time : new Date();
          // A custom name gets no `.gz` from the library: compressed backups say so themselves.
          return `${stem}-${backupStamp(t)}${index && index > 1 ? `-${index}` : ''}${ext}${options.compress ? '.gz' : ''}`;
        },
        {
          path: dirname(path),
          size: `${options.maxSizeMb}M`,
          ...(options.maxBackups > 0 ? {maxFiles: options.maxBackups, history: `.${basename(path)}.history`} : {}),
          ...(options.compress ? {compress: 'gzip' as const} : {}),
          mode: 0o600,
        },
      );
      if (options.maxAgeDays > 0) rotating.on('rotated', () => void removeOld(path, options.maxAgeDays).catch((e) => options.onError?.(e)));
      rotating.on('warning', (w) => options.onError?.(w));
      stream = rotating;
    } else {
      fd = openSync(path, 'a', 0o600);
    }
    stream?.on('error', (e) => options.onError?.(e));
  }
  const writer = new GroupCommitWriter(fd !== undefined ? appendTo(fd, options.onError) : (text, done) => void stream!.write(text, done));
  const line = (ev: AuditEvent) => `${encodeEvent(ev.apiVersion === options.apiVersion ? ev : {...ev, apiVersion: options.apiVersion}, options.format)}\n`;
  return {
    write(events) {
      if (events.length === 0) return Promise.resolve();
      return writer.append(events.length === 1 ? line(events[0]!) : events.map(line).join(''));
    },
    async close() {
      // What was gathered goes out first.
      await writer.drained();
      if (fd !== undefined) {
        closeSync(fd);
        fd = undefined;
        return;
      }
      if (!ownStream) return;
      return new Promise<void>((resolve) => {
        stream!.once('error', () => resolve());
        stream!.end(() => resolve());
      });
    },
  };
}

/** Appends each chunk to the file with synchronous writes (a short write is continued), then calls back. */
function appendTo(fd: number, onError?: (error: unknown) => void): (text: string, done: (error?: Error | null) => void) => void {
  return (text, done) => {
    let error: Error | null = null;
    try {
      const bytes = Buffer.from(text, 'utf8');
      for (let offset = 0; offset < bytes.length; ) offset += writeSync(fd, bytes, offset, bytes.length - offset);
    } catch (e) {
      error = e as Error;
      onError?.(error);
    }
    done(error);
  };
}

async function removeOld(path: string, maxAgeDays: number): Promise<void> {
  const dir = dirname(path);
  const ext = extname(path);
  const prefix = `${basename(path, ext)}-`;
  const cutoff = Date.now() - maxAgeDays * 24 * 3600 * 1000;
  for (const entry of await readdir(dir)) {
    if (!entry.startsWith(prefix)) continue;
    const file = join(dir, entry);
    if ((await stat(file)).mtimeMs < cutoff) await unlink(file);
  }
}
