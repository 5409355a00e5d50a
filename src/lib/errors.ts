/**
 * One error path for every command: print `error: ...` on stderr (as kubectl does) and set exit
 * code 1. Free of oclif imports so the fast entry points (src/fast) can use it too.
 */
import {OptionsError} from '../options/resolve.js';

/** An error whose message is meant for the user as is. */
export class UserError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Errors of our own modules that carry a message written for the user. */
const USER_FACING = new Set(['UserError', 'ArgvError', 'OptionValueError', 'DecodeError', 'SourceError', 'KustomizeError', 'PatchError', 'PrinterError']);

export function errorText(error: Error): string {
  if (error instanceof OptionsError) return error.problems.map((p) => `error: ${p}`).join('\n');
  const message = USER_FACING.has(error.constructor.name) || USER_FACING.has(error.name)
    ? error.message
    : // oclif's parser errors end with a "See more help" hint; keep the message itself.
      error.message.replace(/\n+See more help with --help\s*$/, '').trim();
  return message.split('\n').map((line, i) => (i === 0 ? `error: ${line}` : line)).join('\n');
}

export function reportError(error: Error, write: (text: string) => void = (t) => process.stderr.write(t)): number {
  // Some messages (kubectl's jsonpath errors) already end with their own newline.
  const text = errorText(error);
  write(text.endsWith('\n') ? text : text + '\n');
  const code = error instanceof UserError ? error.exitCode : 1;
  process.exitCode = code;
  return code;
}
