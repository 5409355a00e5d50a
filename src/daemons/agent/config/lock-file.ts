/**
 * --lock-file and --exit-on-lock-contention.
 *
 * Upstream holds a flock(2) and watches the file with inotify. Node has neither flock nor inotify's
 * IN_OPEN, so the lock is a file created with O_EXCL holding the owner's pid: it exists while an agent
 * owns it, and a file whose pid is dead is stale and taken over. A process that wants a held lock
 * (another agent started with --exit-on-lock-contention) says so by writing its pid to
 * `<lock>.contend`; the owner's watcher sees that (or the lock file gone or rewritten) and reports
 * contention, upon which the owner releases the lock and exits.
 */
import { constants, closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';

export interface LockFileDeps {
  pid: number;
  /** Creates the file only if it does not exist (O_EXCL) and writes the text; throws EEXIST otherwise. */
  createExclusive(path: string, text: string): void;
  /** The file's text, or undefined when it does not exist. */
  read(path: string): string | undefined;
  write(path: string, text: string): void;
  /** Removes the file; no error when it is already gone. */
  remove(path: string): void;
  isProcessAlive(pid: number): boolean;
}

export type LockAttempt =
  | { acquired: true; release(): void }
  | { acquired: false; holderPid: number; message: string };

export const contentionPath = (lockPath: string) => `${lockPath}.contend`;

function pidIn(text: string | undefined): number | undefined {
  const pid = text === undefined ? NaN : Number.parseInt(text.trim(), 10);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export function nodeLockDeps(): LockFileDeps {
  return {
    pid: process.pid,
    createExclusive(path, text) {
      const fd = openSync(path, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o644);
      try {
        writeSync(fd, text);
      } finally {
        closeSync(fd);
      }
    },
    read(path) {
      try {
        return readFileSync(path, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    write(path, text) {
      const fd = openSync(path, 'w', 0o644);
      try {
        writeSync(fd, text);
      } finally {
        closeSync(fd);
      }
    },
    remove(path) {
      try {
        unlinkSync(path);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    },
    isProcessAlive(pid) {
      try {
        process.kill(pid, 0);
        return true;
      } catch (error) {
        // EPERM: the process exists but belongs to someone else.
        return (error as NodeJS.ErrnoException).code === 'EPERM';
      }
    },
  };
}

/** Takes the lock, or says who holds it. A lock left by a dead process is taken over. */
export function acquireLockFile(path: string, deps: LockFileDeps = nodeLockDeps()): LockAttempt {
  const content = `${deps.pid}\n`;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      deps.createExclusive(path, content);
      return {
        acquired: true,
        release: () => {
          // Only remove a lock that is still ours.
          if (pidIn(deps.read(path)) === deps.pid) deps.remove(path);
        },
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const holder = pidIn(deps.read(path));
    if (holder !== undefined && holder !== deps.pid && deps.isProcessAlive(holder)) {
      return {
        acquired: false,
        holderPid: holder,
        message: `unable to acquire file lock on "${path}": it is held by running process ${holder}; stop that agent, or use another --lock-file (with --exit-on-lock-contention the holder exits when asked)`,
      };
    }
    // Stale (dead pid, unreadable, or our own pid from an earlier life): remove it and try once more.
    deps.remove(path);
  }
  const holder = pidIn(deps.read(path)) ?? 0;
  return { acquired: false, holderPid: holder, message: `unable to acquire file lock on "${path}": it keeps being recreated by another process` };
}

/**
 * Why the owner of a lock must give it up, or undefined. Pure: the caller reads the two files.
 * Contention is a live process asking for the lock, or the lock no longer being ours.
 */
export function lockContention(
  ownPid: number,
  lockText: string | undefined,
  requestText: string | undefined,
  isProcessAlive: (pid: number) => boolean,
): string | undefined {
  const requester = pidIn(requestText);
  if (requester !== undefined && requester !== ownPid && isProcessAlive(requester)) {
    return `process ${requester} asked for the lock file`;
  }
  if (lockText === undefined) return 'the lock file was removed';
  const holder = pidIn(lockText);
  if (holder !== ownPid) return `the lock file now belongs to ${holder === undefined ? 'another process' : `process ${holder}`}`;
  return undefined;
}

export interface LockWatcher {
  stop(): void;
}

/** --exit-on-lock-contention: polls for contention and calls back once. */
export function watchLockContention(
  path: string,
  onContention: (reason: string) => void,
  options: { intervalMs?: number; deps?: LockFileDeps } = {},
): LockWatcher {
  const deps = options.deps ?? nodeLockDeps();
  const timer = setInterval(() => {
    const reason = lockContention(deps.pid, deps.read(path), deps.read(contentionPath(path)), deps.isProcessAlive);
    if (reason === undefined) return;
    clearInterval(timer);
    onContention(reason);
  }, options.intervalMs ?? 1000);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/**
 * For an agent started with --exit-on-lock-contention while another holds the lock: ask the holder to
 * go, then wait until the lock is ours. Resolves with the acquired lock; rejects when `signal` aborts.
 */
export async function waitForLockFile(
  path: string,
  options: { intervalMs?: number; deps?: LockFileDeps; signal?: AbortSignal } = {},
): Promise<Extract<LockAttempt, { acquired: true }>> {
  const deps = options.deps ?? nodeLockDeps();
  const request = contentionPath(path);
  for (;;) {
    const attempt = acquireLockFile(path, deps);
    if (attempt.acquired) {
      if (pidIn(deps.read(request)) === deps.pid) deps.remove(request);
      return attempt;
    }
    if (pidIn(deps.read(request)) !== deps.pid) deps.write(request, `${deps.pid}\n`);
    options.signal?.throwIfAborted();
    await new Promise((done) => setTimeout(done, options.intervalMs ?? 200));
  }
}
