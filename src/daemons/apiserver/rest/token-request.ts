/**
 * `serviceaccounts/<name>/token` (upstream's pkg/registry/core/serviceaccount/storage/token.go):
 * a TokenRequest in, the same with a signed token and its expiry out, never stored. Validates
 * the lifetime (10 minutes to 2^32 s), defaults the audiences to the server's, and binds the token
 * to a pod or secret of the namespace that must exist (with the uid given, if any); a pod must run
 * as the account.
 */
import {NAME_SET_IDS, nameSet, names} from '../../../api/names.js';
import {badRequest, field, invalid, type FieldError} from '../../../api/status.js';
import {isJsonObject, type JsonObject} from '../../../patch/types.js';
import type {TokenIssuer} from '../authentication/serviceaccount/issuer.js';
import {DEFAULT_EXPIRATION_SECONDS, MAX_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS} from '../authentication/serviceaccount/issuer.js';
import type {TokenAuthenticator} from '../../shared/authentication/token-authenticator.js';
import {deepCopy} from './objects.js';

/** What the REST layer needs of the server's identity set-up. */
export interface TokenServices {
  /** Absent: the server issues no tokens. */
  issuer?: TokenIssuer;
  /** The bearer token authenticators (TokenReview). */
  union: TokenAuthenticator;
  apiAudiences: string[];
}

/**
 * The answer's apiVersion: the one the client sent when it is the authentication group of either
 * name set, else the active set's. The subresource lives under the core path, so kubectl reaches it
 * under orch's names too, but its typed client decodes only upstream's group: answering in the
 * version asked makes `kubectl create token` work under both name sets.
 */
function answerVersion(sent: unknown): string {
  const accepted = NAME_SET_IDS.map((id) => `${nameSet(id).groups.authentication}/v1`);
  return typeof sent === 'string' && accepted.includes(sent) ? sent : `${names().groups.authentication}/v1`;
}

type Getter = (plural: 'serviceaccounts' | 'pods' | 'secrets', name: string) => Promise<JsonObject>;

const meta = (o: JsonObject) => (isJsonObject(o.metadata) ? o.metadata : {}) as {name?: string; uid?: string; namespace?: string};

/**
 * The TokenRequest answer (201) with its warnings (a lifetime cut down, as upstream warns), or an
 * ApiError: 404 for a missing account or bound object, 422 for a bad spec.
 */
export async function requestToken(body: unknown, namespace: string, name: string, issuer: TokenIssuer, get: Getter, now: Date): Promise<{object: JsonObject; warnings: string[]}> {
  if (!isJsonObject(body)) throw badRequest('the body of the request must be a TokenRequest object');
  const kind = {group: names().groups.authentication, kind: 'TokenRequest'};
  const spec = isJsonObject(body.spec) ? body.spec : {};
  const errors: FieldError[] = [];
  const expirationSeconds = spec.expirationSeconds === undefined || spec.expirationSeconds === null ? DEFAULT_EXPIRATION_SECONDS : spec.expirationSeconds;
  if (typeof expirationSeconds !== 'number' || !Number.isInteger(expirationSeconds)) errors.push(field.invalid('spec.expirationSeconds', expirationSeconds, 'must be a whole number of seconds'));
  else if (expirationSeconds < MIN_EXPIRATION_SECONDS) errors.push(field.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration less than 10 minutes'));
  else if (expirationSeconds > MAX_EXPIRATION_SECONDS) errors.push(field.invalid('spec.expirationSeconds', expirationSeconds, 'may not specify a duration larger than 2^32 seconds'));
  const audiences = Array.isArray(spec.audiences) ? spec.audiences : [];
  if (audiences.some((a) => typeof a !== 'string' || a === '')) errors.push(field.invalid('spec.audiences', audiences, 'audiences must be non-empty strings'));
  const ref = isJsonObject(spec.boundObjectRef) ? spec.boundObjectRef : undefined;
  if (ref && ref.kind !== 'Pod' && ref.kind !== 'Secret') errors.push(field.invalid('spec.boundObjectRef.kind', ref.kind ?? '', 'supported kinds are Pod and Secret'));
  if (ref && ref.apiVersion !== undefined && ref.apiVersion !== 'v1') errors.push(field.invalid('spec.boundObjectRef.apiVersion', ref.apiVersion, 'supported API version is v1'));
  if (ref && (typeof ref.name !== 'string' || ref.name === '')) errors.push(field.required('spec.boundObjectRef.name'));
  if (errors.length > 0) throw invalid(kind, name, errors);

  const account = await get('serviceaccounts', name);
  const accountRef = {name, uid: meta(account).uid ?? ''};
  let pod: {name: string; uid: string} | undefined;
  let secret: {name: string; uid: string} | undefined;
  if (ref) {
    const object = await get(ref.kind === 'Pod' ? 'pods' : 'secrets', ref.name as string);
    const uid = meta(object).uid ?? '';
    if (typeof ref.uid === 'string' && ref.uid !== '' && ref.uid !== uid) {
      throw badRequest(`the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`);
    }
    if (ref.kind === 'Pod') {
      const podSpec = isJsonObject(object.spec) ? object.spec : {};
      const runsAs = (podSpec.serviceAccountName as string | undefined) || 'default';
      if (runsAs !== name) throw badRequest(`cannot bind token for serviceaccount "${name}" to pod running with different serviceaccount name.`);
      pod = {name: ref.name as string, uid};
    } else secret = {name: ref.name as string, uid};
  }

  const wanted = audiences.length > 0 ? (audiences as string[]) : issuer.audiences;
  const issued = await issuer.issue({namespace, serviceAccount: accountRef, audiences: wanted, expirationSeconds: expirationSeconds as number, pod, secret});
  const outSpec: JsonObject = {...deepCopy(spec), audiences: wanted, expirationSeconds: issued.expirationSeconds};
  if (ref) outSpec.boundObjectRef = {...deepCopy(ref), uid: (pod ?? secret)!.uid};
  const warnings = issued.expirationSeconds < (expirationSeconds as number)
    ? [`requested expiration of ${expirationSeconds} seconds shortened to ${issued.expirationSeconds} seconds`]
    : [];
  const object: JsonObject = {
    kind: 'TokenRequest',
    apiVersion: answerVersion(body.apiVersion),
    metadata: {name, namespace, creationTimestamp: now.toISOString().replace(/\.\d+Z$/, 'Z')},
    spec: outSpec,
    status: {token: issued.token, expirationTimestamp: issued.expirationTimestamp.toISOString().replace(/\.\d+Z$/, 'Z')},
  };
  return {object, warnings};
}
