/**
 * Service account token claims, as upstream's pkg/serviceaccount (claims.go and legacy.go): what a
 * bound token says (issued by TokenRequest) and what a legacy token secret says, read back into
 * the account it speaks for, the object it is bound to, and the user it makes. Pure: the signature
 * and the time claims are checked by jose before these run, the objects are looked up after.
 *
 * The private claim of bound tokens is upstream's `kubernetes.io` object under the kubernetes
 * name set, so tokens read the same as upstream's; under the orch name set it is the set's label
 * domain (`orch.io`), as every other product key of that set.
 */
import {names} from '../../../../api/names.js';
import {serviceAccountGroups, serviceAccountUser, type UserInfo} from '../../../shared/authentication/user.js';

/** What a service account token identifies. */
export interface ServiceAccountInfo {
  namespace: string;
  name: string;
  uid: string;
  /** Bound tokens: the object whose life the token follows. */
  pod?: {name: string; uid: string};
  secret?: {name: string; uid: string};
  node?: {name: string; uid: string};
  /** The token's id (`jti`), shown as credential id. */
  jti?: string;
  /** Legacy tokens: the secret that holds the token (looked up, its token compared). */
  legacySecretName?: string;
}

/** The claim holding the account and bound objects of a bound token. */
export function privateClaimKey(): string {
  return names().labelDomain;
}

/** The user-extra keys of a bound token's pod, node and id (upstream's `authentication.kubernetes.io/...`). */
export function extraKeys(): {podName: string; podUid: string; nodeName: string; nodeUid: string; credentialId: string} {
  const prefix = `authentication.${names().labelDomain}/`;
  return {podName: `${prefix}pod-name`, podUid: `${prefix}pod-uid`, nodeName: `${prefix}node-name`, nodeUid: `${prefix}node-uid`, credentialId: `${prefix}credential-id`};
}

export interface BoundClaimsInput {
  issuer: string;
  audiences: string[];
  namespace: string;
  serviceAccount: {name: string; uid: string};
  pod?: {name: string; uid: string};
  secret?: {name: string; uid: string};
  node?: {name: string; uid: string};
  /** Seconds since the epoch. */
  issuedAt: number;
  expiresAt: number;
  /** Extended tokens: when a client should have refreshed (upstream's warnafter). */
  warnAfter?: number;
  jti: string;
}

type Ref = {name: string; uid: string};
const ref = (r: Ref) => ({name: r.name, uid: r.uid});

/** Upstream's serviceaccount.Claims: the claims of a token TokenRequest issues. */
export function boundClaims(input: BoundClaimsInput): Record<string, unknown> {
  const priv: Record<string, unknown> = {namespace: input.namespace};
  if (input.node) priv.node = ref(input.node);
  if (input.pod) priv.pod = ref(input.pod);
  if (input.secret) priv.secret = ref(input.secret);
  priv.serviceaccount = ref(input.serviceAccount);
  if (input.warnAfter !== undefined) priv.warnafter = input.warnAfter;
  return {
    aud: input.audiences,
    exp: input.expiresAt,
    iat: input.issuedAt,
    iss: input.issuer,
    jti: input.jti,
    [privateClaimKey()]: priv,
    nbf: input.issuedAt,
    sub: serviceAccountUser(input.namespace, input.serviceAccount.name),
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

function refAt(priv: Record<string, unknown>, key: string): Ref | undefined {
  const value = priv[key];
  if (!isObject(value)) return undefined;
  return {name: text(value.name), uid: text(value.uid)};
}

export type ClaimsResult = {info: ServiceAccountInfo} | {error: string};

/** A bound token's claims (already verified), or why they do not name an account. */
export function readBoundClaims(payload: Record<string, unknown>): ClaimsResult {
  const priv = payload[privateClaimKey()];
  if (!isObject(priv)) return {error: `service account token claims are missing the ${privateClaimKey()} claim`};
  const namespace = text(priv.namespace);
  const account = refAt(priv, 'serviceaccount');
  if (!namespace) return {error: 'service account token is missing the namespace claim'};
  if (!account?.name || !account.uid) return {error: 'service account token is missing the service account name or uid claim'};
  if (text(payload.sub) !== serviceAccountUser(namespace, account.name)) return {error: 'service account token subject does not match its service account claim'};
  const info: ServiceAccountInfo = {namespace, name: account.name, uid: account.uid};
  const pod = refAt(priv, 'pod');
  const secret = refAt(priv, 'secret');
  const node = refAt(priv, 'node');
  if (pod && secret) return {error: 'service account token is bound to both a pod and a secret'};
  for (const [kind, r] of [['pod', pod], ['secret', secret], ['node', node]] as const) {
    if (r && (!r.name || !r.uid)) return {error: `service account token's ${kind} reference needs a name and a uid`};
  }
  if (pod) info.pod = pod;
  if (secret) info.secret = secret;
  if (node) info.node = node;
  if (typeof payload.jti === 'string' && payload.jti) info.jti = payload.jti;
  return {info};
}

/** A legacy token secret's claims (upstream's legacyValidator), or what they lack. */
export function readLegacyClaims(payload: Record<string, unknown>): ClaimsResult {
  const prefix = names().annotations.serviceAccountClaimPrefix;
  const namespace = text(payload[`${prefix}namespace`]);
  const secretName = text(payload[`${prefix}secret.name`]);
  const name = text(payload[`${prefix}service-account.name`]);
  const uid = text(payload[`${prefix}service-account.uid`]);
  if (!namespace) return {error: 'token does not contain the namespace claim'};
  if (!secretName) return {error: 'token does not contain the secret name claim'};
  if (!name) return {error: 'token does not contain the service account name claim'};
  if (!uid) return {error: 'token does not contain the service account uid claim'};
  if (text(payload.sub) !== serviceAccountUser(namespace, name)) return {error: 'token subject does not match its service account claims'};
  return {info: {namespace, name, uid, legacySecretName: secretName}};
}

/** The token's `aud` claim as a list (a single string is one audience). */
export function tokenAudiences(payload: Record<string, unknown>): string[] {
  const aud = payload.aud;
  if (typeof aud === 'string') return [aud];
  return Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];
}

/**
 * Upstream's audience check (jwt.go): a token without audiences stands for the server's own
 * (`--api-audiences`); it is good for the audiences the caller asked for (a request: the server's;
 * a TokenReview: its spec.audiences) that it names. None in common: rejected, unless the server
 * has no audiences at all.
 */
export function matchAudiences(token: string[], requested: string[] | undefined, implicit: string[]): {audiences: string[]} | {error: string} {
  const own = token.length > 0 ? token : implicit;
  const wanted = requested && requested.length > 0 ? requested : implicit;
  const common = own.filter((a) => wanted.includes(a));
  if (common.length === 0 && implicit.length > 0) return {error: `token audiences ${JSON.stringify(own)} is invalid for the target audiences ${JSON.stringify(wanted)}`};
  return {audiences: common};
}

/** The user a service account token makes: upstream's ServiceAccountInfo.UserInfo. */
export function serviceAccountUserInfo(info: ServiceAccountInfo): UserInfo {
  const user: UserInfo = {name: serviceAccountUser(info.namespace, info.name), uid: info.uid, groups: serviceAccountGroups(info.namespace)};
  const keys = extraKeys();
  const extra: Record<string, string[]> = {};
  if (info.pod) {
    extra[keys.podName] = [info.pod.name];
    extra[keys.podUid] = [info.pod.uid];
  }
  if (info.node) {
    extra[keys.nodeName] = [info.node.name];
    extra[keys.nodeUid] = [info.node.uid];
  }
  if (info.jti) extra[keys.credentialId] = [`JTI=${info.jti}`];
  if (Object.keys(extra).length > 0) user.extra = extra;
  return user;
}
