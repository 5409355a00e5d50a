/**
 * The create-only reviews (upstream's pkg/registry/authentication and authorization): never
 * stored, answered at once. SelfSubjectReview returns the requesting user (`kubectl auth whoami`);
 * the four access reviews ask the server's own authorizer (`kubectl auth can-i`, `--list`);
 * TokenReview asks the server's bearer token authenticators. Pure apart from the authorizer and
 * authenticator calls.
 */
import type {ResourceInfo} from '../../../api/resources.js';
import {ApiError, badRequest, failureStatus, field, invalid, type FieldError} from '../../../api/status.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../patch/types.js';
import {deepCopy, stringAt, valueAt} from './objects.js';
import type {TokenServices} from './token-request.js';
import {withAuthenticatedGroup} from '../../shared/authentication/user.js';
import type {AuthorizationAttributes, RequestContext, UserInfo} from './types.js';

/** What a SelfSubjectRulesReview answers (authorization/v1 SubjectRulesReviewStatus). */
export interface RulesReviewStatus {
  resourceRules: JsonObject[];
  nonResourceRules: JsonObject[];
  incomplete: boolean;
  evaluationError?: string;
}

/** Lists the rules a user has in a namespace, from the server's authorizer set-up. */
export type RulesResolver = (user: UserInfo, namespace: string) => RulesReviewStatus;

export interface ReviewContext {
  info: ResourceInfo;
  /** The namespace of the URL (LocalSubjectAccessReview). */
  namespace: string;
  ctx: RequestContext;
  rulesFor?: RulesResolver;
  tokens?: TokenServices;
}

const strings = (v: JsonValue | undefined): string[] => (Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : []);

function userInfoJson(user: UserInfo): JsonObject {
  const out: JsonObject = {username: user.name};
  if (user.uid) out.uid = user.uid;
  if (user.groups.length) out.groups = [...user.groups];
  if (user.extra && Object.keys(user.extra).length) out.extra = user.extra as unknown as JsonObject;
  return out;
}

function extraOf(value: JsonValue | undefined): Record<string, string[]> | undefined {
  if (!isJsonObject(value)) return undefined;
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(value)) out[k] = strings(v);
  return out;
}

/** The answer to a review create: the request's object with its status, 201 as upstream. */
export async function review(body: unknown, c: ReviewContext): Promise<JsonObject> {
  if (!isJsonObject(body)) throw badRequest('the body of the request must be a JSON object');
  const {info} = c;
  const apiVersion = info.group ? `${info.group}/${info.version}` : info.version;
  if (body.kind !== undefined && body.kind !== info.kind) throw badRequest(`the kind in the data (${String(body.kind)}) does not match the expected kind (${info.kind})`);
  const out: JsonObject = {kind: info.kind, apiVersion, metadata: {...(isJsonObject(body.metadata) ? deepCopy(body.metadata) : {}), creationTimestamp: null}};
  if (body.spec !== undefined) out.spec = deepCopy(body.spec);
  switch (info.kind) {
    case 'SelfSubjectReview':
      out.status = {userInfo: userInfoJson(c.ctx.user)};
      return out;
    case 'TokenReview':
      if (!c.tokens) throw tokenReviewUnavailable();
      out.status = await tokenReview(body, c.tokens);
      return out;
    case 'SelfSubjectRulesReview': {
      const namespace = stringAt(body, 'spec', 'namespace') ?? '';
      out.status = (c.rulesFor?.(c.ctx.user, namespace) ?? {
        resourceRules: [], nonResourceRules: [], incomplete: true, evaluationError: 'the authorizer of this server cannot list rules',
      }) as unknown as JsonObject;
      return out;
    }
    default:
      out.status = await accessReview(body, c);
      return out;
  }
}

/** 501 with a message naming what is missing (never 404: the resource exists). */
export function tokenReviewUnavailable(): ApiError {
  return new ApiError(failureStatus(501, 'NotImplemented', 'TokenReview is not available: this server has no token authenticators; nothing was stored', {}));
}

/**
 * Upstream's TokenReview storage: the token through the bearer token authenticators (never the
 * anonymous one), for the review's audiences or the server's. A token that does not authenticate
 * is an answer (authenticated: false, with the error), not a failure of the request.
 */
async function tokenReview(body: JsonObject, tokens: TokenServices): Promise<JsonObject> {
  const token = stringAt(body, 'spec', 'token') ?? '';
  if (token === '') throw badRequest('token is required for TokenReview in authentication');
  const requested = strings(valueAt(body, 'spec', 'audiences'));
  const audiences = requested.length > 0 ? requested : tokens.apiAudiences;
  const result = await tokens.union.authenticateToken(token, audiences.length > 0 ? audiences : undefined);
  if (result && 'user' in result) {
    const status: JsonObject = {authenticated: true, user: userInfoJson(withAuthenticatedGroup(result.user))};
    if (result.audiences.length > 0) status.audiences = result.audiences;
    return status;
  }
  return {authenticated: false, user: {}, error: result?.error ?? 'invalid bearer token'};
}

async function accessReview(body: JsonObject, c: ReviewContext): Promise<JsonObject> {
  const {info} = c;
  const spec = isJsonObject(body.spec) ? body.spec : {};
  const resource = isJsonObject(spec.resourceAttributes) ? spec.resourceAttributes : undefined;
  const nonResource = isJsonObject(spec.nonResourceAttributes) ? spec.nonResourceAttributes : undefined;
  const errors: FieldError[] = [];
  if (!resource && !nonResource) errors.push(field.required('spec.resourceAttributes', 'exactly one of nonResourceAttributes or resourceAttributes must be specified'));
  if (resource && nonResource) errors.push(field.invalid('spec.nonResourceAttributes', nonResource, 'cannot be specified in combination with resourceAttributes'));
  let user: UserInfo = c.ctx.user;
  if (info.kind === 'SubjectAccessReview' || info.kind === 'LocalSubjectAccessReview') {
    const name = typeof spec.user === 'string' ? spec.user : '';
    const groups = strings(spec.groups);
    if (!name && groups.length === 0) errors.push(field.invalid('spec.user', name, 'at least one of user or group must be specified'));
    user = {name, groups, uid: typeof spec.uid === 'string' ? spec.uid : undefined, extra: extraOf(spec.extra)};
  }
  if (info.kind === 'LocalSubjectAccessReview') {
    if (nonResource) errors.push(field.invalid('spec.nonResourceAttributes', nonResource, 'disallowed on this kind of request'));
    if (resource && (resource.namespace ?? '') !== c.namespace) {
      errors.push(field.invalid('spec.resourceAttributes.namespace', resource.namespace ?? '', 'must match metadata.namespace'));
    }
  }
  if (errors.length) throw invalid({group: info.group, kind: info.kind}, stringAt(body, 'metadata', 'name') ?? '', errors);

  const attributes: AuthorizationAttributes = resource
    ? {
      user, verb: String(resource.verb ?? ''), resourceRequest: true, apiGroup: String(resource.group ?? ''), apiVersion: String(resource.version ?? ''),
      resource: String(resource.resource ?? ''), subresource: String(resource.subresource ?? ''), namespace: String(resource.namespace ?? ''),
      name: String(resource.name ?? ''), path: '',
    }
    : {
      user, verb: String(valueAt(nonResource, 'verb') ?? ''), resourceRequest: false, apiGroup: '', apiVersion: '', resource: '', subresource: '',
      namespace: '', name: '', path: String(valueAt(nonResource, 'path') ?? ''),
    };
  const decision = await c.ctx.authorize(attributes);
  const status: JsonObject = {allowed: decision.allowed};
  if (decision.reason) status.reason = decision.reason;
  return status;
}
