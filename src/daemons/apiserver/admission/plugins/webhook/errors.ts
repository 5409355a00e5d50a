/**
 * The two ways a webhook call fails, as upstream tells them apart (util/webhook/error.go):
 * CallingWebhookError when the webhook could not be asked or answered nonsense (subject to the
 * webhook's failurePolicy), and a rejection when it answered "no" (never ignored). Texts are
 * upstream's: `failed calling webhook "<name>": <reason>` and
 * `admission webhook "<name>" denied the request: <message>`.
 */
import {ApiError, badRequest, failureStatus, type StatusDetails} from '../../../../../api/status.js';
import {isJsonObject, type JsonObject} from '../../../../../patch/types.js';

export class CallingWebhookError extends Error {
  constructor(
    readonly webhookName: string,
    readonly reason: string,
  ) {
    super(`failed calling webhook ${JSON.stringify(webhookName)}: ${reason}`);
    this.name = 'CallingWebhookError';
  }
}

/**
 * A webhook's refusal as the client sees it (upstream's ToStatusErr): the webhook's own status,
 * its message prefixed with who denied. Without a code the status is a 500, as upstream's
 * response writer answers a Failure without one.
 */
export function rejection(webhookName: string, result: JsonObject | undefined): ApiError {
  const deniedBy = `admission webhook ${JSON.stringify(webhookName)} denied the request`;
  const r = result ?? {};
  const message = typeof r.message === 'string' && r.message ? `${deniedBy}: ${r.message}` : typeof r.reason === 'string' && r.reason ? `${deniedBy}: ${r.reason}` : `${deniedBy} without explanation`;
  const code = typeof r.code === 'number' && r.code !== 0 ? r.code : 500;
  const status = failureStatus(code, typeof r.reason === 'string' ? r.reason : undefined, message, isJsonObject(r.details) ? (r.details as StatusDetails) : undefined);
  if (r.status === 'Success') status.status = 'Success';
  return new ApiError(status);
}

export function dryRunUnsupported(webhookName: string): ApiError {
  return badRequest(`admission webhook ${JSON.stringify(webhookName)} does not support dry run`);
}
