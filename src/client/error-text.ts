/**
 * What kubectl prints for an error (kubectl's cmdutil.CheckErr and StandardErrorMessage), so orch's
 * client commands fail with the same text: `Error from server (NotFound): pods "x" not found`,
 * `The Pod "web" is invalid: ...`, `The connection to the server host:port was refused - ...`.
 * Pure: the caller writes the text and exits 1.
 */
import {ApiConnectionError, ApiStatusError, type StatusCause} from './errors.js';

/** kubectl's no-match error for a TYPE argument (meta.NoResourceMatchError). */
export class NoResourceMatchError extends Error {
  override name = 'NoResourceMatchError';
  constructor(readonly resource: string) {
    super(`the server doesn't have a resource type "${resource}"`);
  }
}

function causeText(cause: StatusCause): string {
  return cause.field ? `${cause.field}: ${cause.message ?? ''}` : cause.message ?? '';
}

/** The line(s) for an API or connection error, or undefined when kubectl would print `error: <message>`. */
export function standardErrorMessage(error: unknown): string | undefined {
  if (error instanceof ApiStatusError) {
    if (error.reason === 'Unauthorized') return `error: You must be logged in to the server (${error.message})`;
    if (error.reason !== '') return `Error from server (${error.reason}): ${error.message}`;
    return `Error from server: ${error.message}`;
  }
  if (error instanceof ApiConnectionError) {
    if (error.refused) {
      let host = error.url;
      try {
        host = new URL(error.url).host;
      } catch {
        // keep the raw URL
      }
      return `The connection to the server ${host} was refused - did you specify the right host or port?`;
    }
    return `Unable to connect to the server: ${error.cause.message}`;
  }
  return undefined;
}

/** One error as a line of a multi-error report (kubectl's messageForError: no `error: ` prefix). */
function messageForError(error: unknown): string {
  return standardErrorMessage(error) ?? (error as Error).message;
}

/** The 422 Invalid rendering (kubectl's IsInvalid branch of CheckErr). */
function invalidText(error: ApiStatusError): string {
  const details = error.details;
  let head = 'The request is invalid';
  if (!details) return error.message ? `${head}: ${error.message}` : head;
  if (details.kind || details.name) head = `The ${details.kind ?? ''} ${JSON.stringify(details.name ?? '')} is invalid`;
  else if (!details.causes?.length && error.message) head += `: ${error.message}`;
  const causes = details.causes ?? [];
  if (causes.length === 0) return head;
  if (causes.length === 1) return `${head}: ${causeText(causes[0])}`;
  return `${head}: \n${causes.map((c) => `* ${causeText(c)}`).join('\n')}`;
}

/**
 * The whole stderr text for a failed command, ending in a newline. Several errors (kubectl keeps
 * going after a failed object) are printed one per line without the `error: ` prefix.
 */
export function errorReport(errors: readonly unknown[]): string {
  if (errors.length === 1) {
    const [error] = errors;
    let text: string;
    if (error instanceof ApiStatusError && error.reason === 'Invalid') text = invalidText(error);
    else {
      text = standardErrorMessage(error) ?? (error as Error).message;
      if (standardErrorMessage(error) === undefined && !text.startsWith('error: ')) text = `error: ${text}`;
    }
    return text.endsWith('\n') ? text : `${text}\n`;
  }
  return errors.map((e) => `${messageForError(e).replace(/\n$/, '')}\n`).join('');
}
