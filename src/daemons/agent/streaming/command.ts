/**
 * Connects an exec process or an attached container to the client's streams, and ends the
 * exchange as the kubelet does: the outcome on the error stream once all output is written. A
 * client that goes away first ends an exec process (its whole process group), so that a cut stream
 * leaves nothing running; an attached container keeps running.
 */
import type {Readable, Writable} from 'node:stream';
import type {AttachTarget} from '../runtime/runtime.js';
import type {ExecProcess} from '../runtime/exec.js';
import type {CommandOutcome, CommandStreams} from './remote-command.js';

/** How long output still in the pipes may take after the process ended (children holding them open). */
const OUTPUT_DRAIN_MS = 2000;

function forward(from: Readable | null, to: Writable | null): Promise<void> {
  if (!from) return Promise.resolve();
  if (!to) {
    from.resume();
    return new Promise((resolve) => from.once('close', resolve).once('end', resolve));
  }
  return new Promise((resolve) => {
    from.on('data', (chunk: Buffer) => {
      if (!to.destroyed && !to.write(chunk)) {
        from.pause();
        to.once('drain', () => from.resume());
      }
    });
    from.once('end', resolve);
    from.once('close', resolve);
    to.once('close', () => from.resume());
  });
}

export async function runExec(proc: ExecProcess, streams: CommandStreams, command: string[]): Promise<void> {
  let finished = false;
  void streams.closed.then(() => {
    if (!finished) proc.kill();
  });
  if (streams.stdin && proc.stdin) streams.stdin.pipe(proc.stdin);
  else streams.stdin?.resume();
  streams.onResize(({width, height}) => proc.resize(width, height));
  const output = Promise.all([forward(proc.stdout, streams.stdout), forward(proc.stderr, streams.stderr)]);
  const exit = await proc.exited;
  await Promise.race([output, new Promise((resolve) => setTimeout(resolve, OUTPUT_DRAIN_MS).unref())]);
  finished = true;
  const outcome: CommandOutcome = exit.startError
    ? {kind: 'error', message: `error executing command in container: ${exit.startError}`}
    : exit.exitCode === 0
      ? {kind: 'success'}
      : {kind: 'exit', code: exit.exitCode, command};
  await streams.finish(outcome);
}

export async function runAttach(target: AttachTarget, streams: CommandStreams): Promise<void> {
  const stderr = streams.stderr ?? (target.tty ? streams.stdout : null);
  const write = (to: Writable | null) => (chunk: Buffer) => {
    if (to && !to.destroyed && !to.writableEnded) to.write(chunk);
  };
  const unsubscribe = target.subscribe(write(streams.stdout), write(stderr));
  streams.onResize(({width, height}) => target.resize(width, height));
  if (streams.stdin) {
    streams.stdin.on('data', (chunk: Buffer) => {
      if (target.stdin && !target.stdin.writableEnded) target.stdin.write(chunk);
    });
    streams.stdin.once('end', () => {
      if (target.stdinOnce) target.stdin?.end();
    });
  }
  const ended = await Promise.race([target.exited.then(() => 'exited' as const), streams.closed.then(() => 'cut' as const)]);
  unsubscribe();
  if (target.stdinOnce && !target.stdin?.writableEnded) target.stdin?.end();
  if (ended === 'exited') await streams.finish({kind: 'success'});
}
