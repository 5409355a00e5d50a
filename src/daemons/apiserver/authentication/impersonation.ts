/**
 * Impersonation (`Impersonate-User`, `-Group`, `-Uid`, `-Extra-<key>` headers), as upstream's
 * impersonation filter: each requested element is authorized for the acting user with verb
 * `impersonate`, and on success the request proceeds as the impersonated identity. The server
 * removes the headers afterwards (`isImpersonationHeader`).
 */
import {names} from '../../../api/names.js';
import type {AuthorizationAttributes, Authorizer} from '../../shared/authorization/attributes.js';
import {headerValue, headerValues, type AuthenticationRequest} from '../../shared/authentication/request.js';
import {badRequestStatus, forbiddenStatus, type FailureStatus} from '../../shared/authorization/status.js';
import {ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, serviceAccountGroups, serviceAccountUser, splitServiceAccountUser, type UserInfo} from '../../shared/authentication/user.js';

export const IMPERSONATE_USER_HEADER = 'impersonate-user';
export const IMPERSONATE_GROUP_HEADER = 'impersonate-group';
export const IMPERSONATE_UID_HEADER = 'impersonate-uid';
export const IMPERSONATE_EXTRA_PREFIX = 'impersonate-extra-';

export function isImpersonationHeader(lowercaseName: string): boolean {
  return lowercaseName === IMPERSONATE_USER_HEADER || lowercaseName === IMPERSONATE_GROUP_HEADER || lowercaseName === IMPERSONATE_UID_HEADER || lowercaseName.startsWith(IMPERSONATE_EXTRA_PREFIX);
}

/** One requested element, as upstream's v1.ObjectReference (kind, namespace, name, apiVersion, fieldPath). */
interface ImpersonationRequest {
  kind: 'User' | 'ServiceAccount' | 'Group' | 'UserExtra' | 'UID';
  namespace?: string;
  name: string;
  apiVersion?: string;
  fieldPath?: string;
}

/** Go's `%v` of an ObjectReference: `{Kind Namespace Name UID APIVersion ResourceVersion FieldPath}`. */
function goFormat(request: ImpersonationRequest): string {
  return `{${[request.kind, request.namespace ?? '', request.name, '', request.apiVersion ?? '', '', request.fieldPath ?? ''].join(' ')}}`;
}

/** Percent-decodes an extra key (clients escape bytes not legal in header names); kept as is when malformed. */
function unescapeExtraKey(key: string): string {
  try {
    return decodeURIComponent(key);
  } catch {
    return key;
  }
}

function impersonationRequests(request: Pick<AuthenticationRequest, 'headers' | 'headersDistinct'>): ImpersonationRequest[] {
  const requests: ImpersonationRequest[] = [];
  const user = headerValue(request, IMPERSONATE_USER_HEADER);
  if (user) {
    const account = splitServiceAccountUser(user);
    requests.push(account ? {kind: 'ServiceAccount', namespace: account.namespace, name: account.name} : {kind: 'User', name: user});
  }
  for (const group of headerValues(request, IMPERSONATE_GROUP_HEADER)) requests.push({kind: 'Group', name: group});
  const extraHeaders = Object.keys(request.headersDistinct ?? request.headers).filter((h) => h.startsWith(IMPERSONATE_EXTRA_PREFIX)).sort();
  for (const header of extraHeaders) {
    const key = unescapeExtraKey(header.slice(IMPERSONATE_EXTRA_PREFIX.length).toLowerCase());
    for (const value of headerValues(request, header)) {
      requests.push({kind: 'UserExtra', apiVersion: `${names().groups.authentication}/v1`, name: value, fieldPath: key});
    }
  }
  const uid = headerValue(request, IMPERSONATE_UID_HEADER);
  if (uid) requests.push({kind: 'UID', apiVersion: `${names().groups.authentication}/v1`, name: uid});
  return requests;
}

export type ImpersonationOutcome =
  /** No impersonation headers: the request goes on as the authenticated user. */
  | {impersonated: false; user: UserInfo}
  | {impersonated: true; user: UserInfo}
  | {status: FailureStatus};

/** Applies the impersonation headers of a request made by `requester`, authorizing each element. */
export async function impersonate(
  request: Pick<AuthenticationRequest, 'headers' | 'headersDistinct'>,
  requester: UserInfo,
  authorizer: Authorizer,
): Promise<ImpersonationOutcome> {
  const requests = impersonationRequests(request);
  if (requests.length === 0) return {impersonated: false, user: requester};
  const hasUser = requests[0].kind === 'User' || requests[0].kind === 'ServiceAccount';
  if (!hasUser) {
    return {status: badRequestStatus(`requested [${requests.map(goFormat).join(' ')}] without impersonating a user`)};
  }
  const groupsSpecified = requests.some((r) => r.kind === 'Group');
  let name = '';
  let uid: string | undefined;
  let groups: string[] = [];
  const extra: Record<string, string[]> = {};
  for (const element of requests) {
    const attributes: AuthorizationAttributes = {user: requester, verb: 'impersonate', resourceRequest: true, name: element.name, apiGroup: '', namespace: element.namespace};
    switch (element.kind) {
      case 'ServiceAccount':
        attributes.resource = 'serviceaccounts';
        name = serviceAccountUser(element.namespace!, element.name);
        if (!groupsSpecified) groups = serviceAccountGroups(element.namespace!);
        break;
      case 'User':
        attributes.resource = 'users';
        name = element.name;
        break;
      case 'Group':
        attributes.resource = 'groups';
        groups.push(element.name);
        break;
      case 'UserExtra':
        attributes.apiGroup = names().groups.authentication;
        attributes.resource = 'userextras';
        attributes.subresource = element.fieldPath;
        (extra[element.fieldPath!] ??= []).push(element.name);
        break;
      case 'UID':
        attributes.apiGroup = names().groups.authentication;
        attributes.resource = 'uids';
        uid = element.name;
        break;
    }
    const {decision, reason} = await authorizer.authorize(attributes);
    if (decision !== 'Allow') return {status: forbiddenStatus(attributes, reason)};
  }
  // The impersonated identity is authenticated (or anonymous) by definition.
  const systemGroup = name === ANONYMOUS_USER ? UNAUTHENTICATED_GROUP : AUTHENTICATED_GROUP;
  if (!groups.includes(systemGroup)) groups.push(systemGroup);
  const user: UserInfo = {name, groups};
  if (uid !== undefined) user.uid = uid;
  if (Object.keys(extra).length > 0) user.extra = extra;
  return {impersonated: true, user};
}
