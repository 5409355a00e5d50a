/**
 * The static pod file source (`--pod-manifest-path`; upstream pkg/kubelet/config/file.go and
 * file_linux.go). The path is a manifest file or a directory of them: names starting with a dot
 * are ignored, subdirectories are not entered, and a file that cannot be read or decoded is
 * reported and skipped while the others still load. The path is read every
 * `--file-check-frequency` and, after a short debounce, on any file-system event (fs.watch on the
 * directory; on the parent directory when the path is one file, so editors that replace the file
 * are still seen). When watching fails (no such directory yet, no inotify) the periodic check
 * carries on alone and tries to watch again each time.
 */
import { watch, type FSWatcher, type Stats } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { klog, type Logger } from '../../../lib/klog.js';
import { decodeManifestFile, MAX_MANIFEST_BYTES } from './decode.js';
import type { ProblemReporter, SetPods, SourcePod } from './types.js';

export interface FileSourceOptions {
  /** `--pod-manifest-path`: a manifest file or a directory of manifests. */
  path: string;
  nodeName: string;
  /** `--file-check-frequency` in milliseconds. */
  checkFrequencyMs: number;
  push: SetPods;
  onProblem?: ProblemReporter;
  /** How long a burst of file-system events is gathered before one check (default 25 ms). */
  debounceMs?: number;
  logger?: Logger;
}

/** Directory entries that are manifests: upstream's glob `[^.]*`, in name order. Pure. */
export function manifestNames(names: readonly string[]): string[] {
  return names.filter((name) => !name.startsWith('.')).sort();
}

interface Decoded {
  data: string;
  pod?: SourcePod;
}

export class FileSource {
  private readonly log: Logger;
  private timer?: NodeJS.Timeout;
  private debounce?: NodeJS.Timeout;
  private watcher?: FSWatcher;
  private watchKey?: string;
  private running?: Promise<void>;
  private again = false;
  private stopped = true;
  /** The last content of each file with its pod, so unchanged files are neither decoded nor reported again. */
  private readonly cache = new Map<string, Decoded>();

  constructor(private readonly options: FileSourceOptions) {
    this.log = options.logger ?? klog('file-source.ts');
  }

  /** Reads the path at once, then on every event and every check period. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.log.info('Watching path', 'path', this.options.path);
    this.ensureWatch();
    void this.checkNow();
    this.timer = setInterval(() => {
      this.ensureWatch();
      void this.checkNow();
    }, this.options.checkFrequencyMs);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.debounce);
    this.closeWatch();
    await this.running;
  }

  /** True while a file-system watch is in place (false: periodic checks only). */
  get watching(): boolean {
    return this.watcher !== undefined;
  }

  /** Reads the path now; concurrent calls share one read, and a call during a read causes one more. */
  checkNow(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.listOnce();
      } while (this.again && !this.stopped);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Watches the path's directory (or, for a file or a missing path, its parent); moves the watch when that changes. */
  private ensureWatch(): void {
    if (this.stopped) return;
    void this.watchTarget().then((target) => {
      if (this.stopped) return;
      const key = target && `${target.dir}\0${target.file ?? ''}`;
      if (this.watcher && this.watchKey === key) return;
      this.closeWatch();
      if (!target) return;
      try {
        const watcher = watch(target.dir, { persistent: false }, (_event, name) => {
          if (target.file && name && name !== target.file) return;
          this.scheduleCheck();
        });
        watcher.on('error', (error) => {
          this.log.warning('File watch failed, falling back to periodic checks', 'path', this.options.path, 'err', String(error));
          this.closeWatch();
          this.scheduleCheck();
        });
        this.watcher = watcher;
        this.watchKey = key;
      } catch (error) {
        this.log.v(2).info('Cannot watch path, checking periodically', 'path', this.options.path, 'err', String(error));
      }
    });
  }

  /** The directory to watch and, for a single-file path, the name to filter events on. */
  private async watchTarget(): Promise<{ dir: string; file?: string } | undefined> {
    const info = await stat(this.options.path).catch(() => undefined);
    if (info?.isDirectory()) return { dir: this.options.path };
    const parent = await stat(dirname(this.options.path)).catch(() => undefined);
    return parent?.isDirectory() ? { dir: dirname(this.options.path), file: basename(this.options.path) } : undefined;
  }

  private closeWatch(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.watchKey = undefined;
  }

  private scheduleCheck(): void {
    if (this.stopped) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      // The path may have appeared, gone or changed kind: the watch may have to move.
      this.ensureWatch();
      void this.checkNow();
    }, this.options.debounceMs ?? 25);
  }

  private problem(origin: string, message: string): void {
    this.log.error('Could not process manifest file', 'path', origin, 'err', message);
    this.options.onProblem?.({ source: 'file', origin, message });
  }

  /** One read of the path (upstream listConfig), pushing the resulting set unless the read failed. */
  private async listOnce(): Promise<void> {
    const { path } = this.options;
    let info: Stats;
    try {
      info = await stat(path);
    } catch (error) {
      const { code, message } = error as NodeJS.ErrnoException;
      if (code !== 'ENOENT') return this.problem(path, message);
      // An empty set, so the source counts as seen and pods of a removed directory stop.
      this.cache.clear();
      this.log.v(2).info('Path does not exist, ignoring', 'path', path);
      return this.options.push('file', []);
    }
    if (info.isDirectory()) {
      const pods = await this.readDirectory(path).catch((error: Error) => this.problem(path, `unable to read config path: ${error.message}`));
      // An unreadable directory keeps the previous set rather than stopping every static pod.
      return pods && this.options.push('file', pods);
    }
    if (!info.isFile()) return this.problem(path, 'path is not a directory or file');
    const pod = await this.readManifest(path);
    // A single manifest that fails keeps the previous set, as upstream does.
    if (pod) this.options.push('file', [pod]);
  }

  private async readDirectory(dir: string): Promise<SourcePod[]> {
    const names = manifestNames(await readdir(dir));
    const pods: SourcePod[] = [];
    const present = new Set<string>();
    for (const name of names) {
      const file = join(dir, name);
      const info = await stat(file).catch(() => undefined);
      if (!info) continue;
      if (info.isDirectory()) {
        this.log.error('Not recursing into manifest path', 'path', file);
        continue;
      }
      if (!info.isFile()) continue;
      present.add(file);
      const pod = await this.readManifest(file);
      if (pod) pods.push(pod);
    }
    for (const file of this.cache.keys()) if (!present.has(file)) this.cache.delete(file);
    return pods;
  }

  /** One manifest, decoded only when its content changed; undefined when it cannot be used. */
  private async readManifest(file: string): Promise<SourcePod | undefined> {
    let data: string;
    try {
      const info = await stat(file);
      if (info.size > MAX_MANIFEST_BYTES) throw new Error(`file larger than ${MAX_MANIFEST_BYTES} bytes`);
      data = await readFile(file, 'utf8');
    } catch (error) {
      this.cache.delete(file);
      this.problem(file, `failed to read file: ${(error as Error).message}`);
      return undefined;
    }
    const cached = this.cache.get(file);
    if (cached?.data === data) return cached.pod;
    try {
      const pod = decodeManifestFile(data, file, this.options.nodeName);
      this.cache.set(file, { data, pod });
      return pod;
    } catch (error) {
      this.cache.set(file, { data });
      this.problem(file, (error as Error).message);
      return undefined;
    }
  }
}
