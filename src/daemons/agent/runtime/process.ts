/**
 * One container as one local process: spawned detached, so it leads its own process group and a
 * signal to the group reaches every process it started. Only groups this module spawned are ever
 * signalled, and only while their leader's exit has not been observed plus the one sweep right
 * after it (a group outlives its leader only while members remain, so its id cannot be reused then).
 */
import {spawn as nodeSpawn, type ChildProcess, type SpawnOptions} from 'node:child_process';
import type {Readable, Writable} from 'node:stream';
import {spawnExec, type ExecProcess} from './exec.js';

export type SpawnFn = (command: string, args: readonly string[], options: SpawnOptions) => ChildProcess;

export const defaultSpawn: SpawnFn = (command, args, options) => nodeSpawn(command, args, options);

export interface ProcessExit {
  /** The exit code; for a process killed by a signal, 128 + the signal number, as container runtimes report it. */
  exitCode: number;
  signal?: NodeJS.Signals;
  /** Set when the process never started (executable not found, permission denied). */
  startError?: string;
}

export interface StartRequest {
  command: string[];
  env: Record<string, string>;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** Keep the process's stdin open as a pipe (a container with `stdin: true`, for `kubectl attach`). */
  stdin?: boolean;
  /** Run on a pseudo terminal (a container with `tty: true`). */
  tty?: boolean;
}

const SIGNAL_NUMBERS: Partial<Record<NodeJS.Signals, number>> = {SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGABRT: 6, SIGKILL: 9, SIGSEGV: 11, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15};

export class ContainerProcess {
  readonly pid: number | undefined;
  readonly exited: Promise<ProcessExit>;
  private leaderExited = false;
  private readonly child?: ChildProcess;
  /** A `tty: true` container runs on a pseudo terminal (node-pty), as `kubectl attach -it` expects. */
  private readonly terminal?: ExecProcess;

  constructor(spawn: SpawnFn, request: StartRequest) {
    if (request.tty) {
      const terminal = spawnExec(spawn, {env: request.env, cwd: request.cwd, uid: request.uid, gid: request.gid}, {command: request.command, tty: true, stdin: request.stdin === true});
      this.terminal = terminal;
      this.pid = terminal.pid;
      terminal.stdin?.on('error', () => {});
      this.exited = terminal.exited.then((exit) => {
        this.leaderExited = true;
        return exit;
      });
      return;
    }
    const child = spawn(request.command[0], request.command.slice(1), {
      env: request.env,
      cwd: request.cwd,
      uid: request.uid,
      gid: request.gid,
      detached: true,
      stdio: [request.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.pid = child.pid;
    // An attached client that goes away mid-write must not crash the agent.
    child.stdin?.on('error', () => {});
    this.exited = new Promise((resolve) => {
      child.once('error', (err) => {
        // 'error' without a pid: the process never ran; with one, a later 'exit' still comes.
        if (child.pid === undefined) {
          this.leaderExited = true;
          resolve({exitCode: 128, startError: err.message});
        }
      });
      child.once('exit', (code, signal) => {
        this.leaderExited = true;
        // What a container runtime does when the main process ends: nothing else of it survives.
        this.signalGroup('SIGKILL', true);
        resolve(signal ? {exitCode: 128 + (SIGNAL_NUMBERS[signal] ?? 0), signal} : {exitCode: code ?? 0});
      });
    });
  }

  get stdin(): Writable | null {
    return this.terminal ? this.terminal.stdin : this.child?.stdin ?? null;
  }

  /** A terminal's new window size (attach -it); nothing for a process without one. */
  resize(columns: number, rows: number): void {
    this.terminal?.resize(columns, rows);
  }

  get stdout(): Readable | null {
    return this.terminal ? this.terminal.stdout : this.child?.stdout ?? null;
  }

  get stderr(): Readable | null {
    return this.terminal ? null : this.child?.stderr ?? null;
  }

  get running(): boolean {
    return !this.leaderExited;
  }

  /** Signals the whole process group; `afterExit` allows the single sweep right after the leader exited. */
  signalGroup(signal: NodeJS.Signals, afterExit = false): void {
    if (this.pid === undefined || (this.leaderExited && !afterExit)) return;
    try {
      process.kill(-this.pid, signal);
    } catch {
      // ESRCH: the group is already gone.
    }
  }
}
