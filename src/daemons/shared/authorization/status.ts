/**
 * The Status bodies of authentication and authorization failures, with upstream's messages:
 * 401 `Unauthorized`, 403 `Forbidden` (`<resource>[.<group>] ["<name>"] is forbidden: User "<u>"
 * cannot <verb> resource "<res>[/<sub>]" in API group "<g>" in the namespace "<ns>"` or
 * `... at the cluster scope`, or `forbidden: User "<u>" cannot <verb> path "<path>"`), and the
 * 400 of impersonation headers without a user. Pure.
 */
import type {AuthorizationAttributes} from './attributes.js';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
}

/** A metav1.Status failure, fields in the order upstream serializes them. */
export interface FailureStatus {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

function failure(code: number, reason: string, message: string, details?: StatusDetails): FailureStatus {
  const status: FailureStatus = {kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, code};
  if (details) {
    // Rebuild so `details` sits before `code` in the JSON, as upstream writes it.
    const {code: c, ...rest} = status;
    return {...rest, details, code: c};
  }
  return status;
}

export function unauthorizedStatus(): FailureStatus {
  return failure(401, 'Unauthorized', 'Unauthorized');
}

/** Upstream's forbiddenMessage: what the user may not do, without the resource prefix. */
export function forbiddenMessage(attributes: AuthorizationAttributes): string {
  const user = attributes.user.name;
  if (!attributes.resourceRequest) return `User ${JSON.stringify(user)} cannot ${attributes.verb} path ${JSON.stringify(attributes.path ?? '')}`;
  const resource = attributes.subresource ? `${attributes.resource ?? ''}/${attributes.subresource}` : attributes.resource ?? '';
  const group = JSON.stringify(attributes.apiGroup ?? '');
  const where = attributes.namespace ? `in the namespace ${JSON.stringify(attributes.namespace)}` : 'at the cluster scope';
  return `User ${JSON.stringify(user)} cannot ${attributes.verb} resource ${JSON.stringify(resource)} in API group ${group} ${where}`;
}

/** The 403 Status of a denied request; `reason` is the authorizer's (appended after a colon). */
export function forbiddenStatus(attributes: AuthorizationAttributes, reason = ''): FailureStatus {
  const detail = reason ? `${forbiddenMessage(attributes)}: ${reason}` : forbiddenMessage(attributes);
  const group = attributes.apiGroup ?? '';
  const resource = attributes.resourceRequest ? attributes.resource ?? '' : '';
  const name = attributes.name ?? '';
  const details: StatusDetails = {};
  if (name) details.name = name;
  if (group) details.group = group;
  if (resource) details.kind = resource;
  // Upstream's NewForbidden: an empty group-resource (non-resource requests) gives "forbidden: ...".
  let message: string;
  if (!group && !resource) message = `forbidden: ${detail}`;
  else {
    const qualified = group ? `${resource}.${group}` : resource;
    message = name ? `${qualified} ${JSON.stringify(name)} is forbidden: ${detail}` : `${qualified} is forbidden: ${detail}`;
  }
  return failure(403, 'Forbidden', message, details);
}

export function badRequestStatus(message: string): FailureStatus {
  return failure(400, 'BadRequest', message);
}
