/**
 * An orch daemon as a child process, for tests: its stderr lines with the time each arrived, a wait
 * for a line matching a pattern (failing early when the process exits), and its exit. Shared by the
 * controller manager and agent helpers.
 */
import {spawn, type ChildProcess} from 'node:child_process';
import {repoRoot} from './run-orch.js';

export interface LogLine {
  /** Date.now() when the line arrived in this process. */
  at: number;
  text: string;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Date.now() when this process saw the child exit. */
  at: number;
}

export interface DaemonProcess {
  child: ChildProcess;
  lines: LogLine[];
  exited: Promise<Exit>;
  exit(): Exit | undefined;
  /** Everything it printed so far, for failure messages. */
  output(): string;
  waitForLine(pattern: RegExp, timeoutMs?: number, since?: number): Promise<LogLine>;
}

export function spawnDaemon(name: string, args: readonly string[]): DaemonProcess {
  const child: ChildProcess = spawn(process.execPath, args, {cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, NO_COLOR: '1'}});
  const lines: LogLine[] = [];
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());
  let partial = '';
  let stdout = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    const at = Date.now();
    partial += chunk;
    let newline: number;
    while ((newline = partial.indexOf('\n')) >= 0) {
      lines.push({at, text: partial.slice(0, newline)});
      partial = partial.slice(newline + 1);
    }
    notify();
  });
  child.stdout!.on('data', (chunk: Buffer) => (stdout = (stdout + chunk.toString()).slice(-10_000)));
  let exitInfo: Exit | undefined;
  const exited = new Promise<Exit>((resolve) => {
    child.once('exit', (code, signal) => {
      exitInfo = {code, signal, at: Date.now()};
      notify();
      resolve(exitInfo);
    });
  });
  const output = () => lines.map((l) => l.text).join('\n') + (partial ? `\n${partial}` : '') + (stdout ? `\n[stdout]\n${stdout}` : '');
  const waitForLine = (pattern: RegExp, timeoutMs = 10_000, since = 0): Promise<LogLine> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = lines.find((l) => l.at >= since && pattern.test(l.text));
        if (found) finish(() => resolve(found));
        else if (exitInfo) finish(() => reject(new Error(`${name} exited (${exitInfo!.code ?? exitInfo!.signal}) before logging ${pattern}:\n${output()}`)));
      };
      const timer = setTimeout(() => finish(() => reject(new Error(`${name} logged no ${pattern} within ${timeoutMs}ms:\n${output()}`))), timeoutMs);
      // Waits raced against others (the first of several standbys to lead) stay pending; they must not keep the test process alive.
      timer.unref();
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        waiters.delete(check);
        settle();
      };
      waiters.add(check);
      check();
    });
  return {child, lines, exited, exit: () => exitInfo, output, waitForLine};
}
