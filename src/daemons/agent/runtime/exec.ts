/**
 * A command run in a pod's context for `kubectl exec` (upstream's ExecSync/Exec of the CRI): a new
 * process with the container's environment, working directory, user and group, in its own process
 * group so that ending the exec ends everything it started. With a TTY it runs on a pseudo
 * terminal from node-pty (the maintained pty binding; it builds here with node-gyp), which also
 * makes it a session leader with that terminal as its controlling terminal, as `kubectl exec -it`
 * expects (job control, SIGWINCH on resize).
 */
import {createRequire} from 'node:module';
import {PassThrough, Writable, type Readable} from 'node:stream';
import type {SpawnFn, ProcessExit} from './process.js';
import type {ExecEnvironment} from './probe-handlers.js';

export interface ExecProcess {
  readonly pid?: number;
  /** Null unless stdin was asked for. */
  readonly stdin: Writable | null;
  readonly stdout: Readable;
  /** Null with a TTY: the terminal carries both outputs. */
  readonly stderr: Readable | null;
  resize(columns: number, rows: number): void;
  /** Resolves when the process ended, or at once with a startError when it could not start. */
  readonly exited: Promise<ProcessExit>;
  /** SIGKILL to the whole process group (a cut stream, a pod being killed). */
  kill(): void;
}

export interface ExecRequest {
  command: string[];
  tty: boolean;
  stdin: boolean;
  columns?: number;
  rows?: number;
}

const SIGNALS: Record<string, number> = {SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGPIPE: 13, SIGTERM: 15};

function killGroup(pid: number | undefined, signal: NodeJS.Signals): void {
  if (!pid) return;
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: gone already.
  }
}

function notFound(command: string, message: string): string {
  return message.includes('ENOENT') ? `exec: "${command}": executable file not found in $PATH` : message;
}

export function spawnExec(spawn: SpawnFn, context: ExecEnvironment, request: ExecRequest): ExecProcess {
  return request.tty ? spawnOnTerminal(context, request) : spawnWithPipes(spawn, context, request);
}

function spawnWithPipes(spawn: SpawnFn, context: ExecEnvironment, request: ExecRequest): ExecProcess {
  const child = spawn(request.command[0], request.command.slice(1), {
    env: context.env, cwd: context.cwd, uid: context.uid, gid: context.gid,
    detached: true, stdio: [request.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  // A client that goes away mid-write must not crash the agent.
  child.stdin?.on('error', () => {});
  let leaderGone = false;
  const exited = new Promise<ProcessExit>((resolve) => {
    child.once('error', (err) => {
      if (child.pid === undefined) {
        leaderGone = true;
        resolve({exitCode: 126, startError: notFound(request.command[0], err.message)});
      }
    });
    child.once('exit', (code, signal) => {
      resolve(signal ? {exitCode: 128 + (SIGNALS[signal] ?? 0), signal} : {exitCode: code ?? 0});
    });
  });
  void exited.then(() => {
    // Whatever the command left running in its group goes with it, as when a container's exec ends.
    if (!leaderGone) killGroup(child.pid, 'SIGKILL');
    leaderGone = true;
  });
  return {
    pid: child.pid,
    stdin: child.stdin,
    stdout: child.stdout as Readable,
    stderr: child.stderr,
    resize: () => {},
    exited,
    kill: () => {
      if (!leaderGone) killGroup(child.pid, 'SIGKILL');
    },
  };
}

interface Pty {
  pid: number;
  write(data: string | Buffer): void;
  resize(columns: number, rows: number): void;
  kill(signal?: string): void;
  onData(listener: (data: string) => void): {dispose(): void};
  onExit(listener: (e: {exitCode: number; signal?: number}) => void): {dispose(): void};
}
type PtyModule = {spawn(file: string, args: string[], options: Record<string, unknown>): Pty};

let ptyModule: PtyModule | undefined;
function loadPty(): PtyModule {
  // A native module: loaded only when a TTY exec comes, so that the agent starts without it.
  ptyModule ??= createRequire(import.meta.url)('node-pty') as PtyModule;
  return ptyModule;
}

function spawnOnTerminal(context: ExecEnvironment, request: ExecRequest): ExecProcess {
  const stdout = new PassThrough();
  let pty: Pty;
  try {
    pty = loadPty().spawn(request.command[0], request.command.slice(1), {
      name: context.env.TERM ?? 'xterm',
      cols: request.columns || 80,
      rows: request.rows || 24,
      cwd: context.cwd ?? '/',
      env: context.env,
      uid: context.uid,
      gid: context.gid,
      encoding: null,
    });
  } catch (err) {
    stdout.end();
    return {stdin: null, stdout, stderr: null, resize: () => {}, exited: Promise.resolve({exitCode: 126, startError: notFound(request.command[0], (err as Error).message)}), kill: () => {}};
  }
  let ended = false;
  pty.onData((data) => {
    if (!ended) stdout.write(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  });
  const exited = new Promise<ProcessExit>((resolve) => {
    pty.onExit(({exitCode, signal}) => {
      ended = true;
      stdout.end();
      killGroup(pty.pid, 'SIGKILL');
      // node-pty reports an exec failure of the child as exit code 1 with no output; nothing better is known.
      resolve(signal ? {exitCode: 128 + signal, signal: Object.keys(SIGNALS).find((k) => SIGNALS[k] === signal) as NodeJS.Signals} : {exitCode});
    });
  });
  const stdin = request.stdin
    ? new Writable({
        write(chunk: Buffer, _encoding, callback) {
          if (!ended) pty.write(chunk);
          callback();
        },
        final(callback) {
          // End of input on a terminal is its EOF character, as a user typing ^D.
          if (!ended) pty.write('\x04');
          callback();
        },
      })
    : null;
  return {
    pid: pty.pid,
    stdin,
    stdout,
    stderr: null,
    resize: (columns, rows) => {
      if (!ended && columns > 0 && rows > 0) pty.resize(columns, rows);
    },
    exited,
    kill: () => {
      if (!ended) killGroup(pty.pid, 'SIGKILL');
    },
  };
}
