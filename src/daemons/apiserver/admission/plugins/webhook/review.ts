/**
 * The AdmissionReview exchanged with a webhook (upstream's admission/plugin/webhook/request):
 * the request built for the first version the webhook accepts (v1 or v1beta1, in its
 * admissionReviewVersions order), and the answer checked as upstream checks it (v1: kind,
 * apiVersion and uid must match and only mutating webhooks may patch; v1beta1 answers are taken
 * as they come). Pure; errors are Errors with upstream's texts.
 */
import {names} from '../../../../../api/names.js';
import {isJsonObject, type JsonObject, type JsonValue} from '../../../../../patch/types.js';
import type {UserInfo} from '../../../../shared/authentication/user.js';
import type {GroupVersionKind, GroupVersionResource} from '../../interfaces.js';
export type {GroupVersionKind, GroupVersionResource} from '../../interfaces.js';

export const REVIEW_VERSIONS = ['v1', 'v1beta1'] as const;
export type ReviewVersion = (typeof REVIEW_VERSIONS)[number];

export const reviewApiVersion = (version: ReviewVersion) => `admission.${names().domain}/${version}`;


/** What one call sends: the resource as the webhook matched it and the request as it was made. */
export interface ReviewRequestInput {
  uid: string;
  /** The resource and kind the webhook is called with (an equivalent one under matchPolicy Equivalent). */
  resource: GroupVersionResource;
  kind: GroupVersionKind;
  subresource: string;
  requestResource: GroupVersionResource;
  requestKind: GroupVersionKind;
  requestSubresource: string;
  name: string;
  namespace: string;
  operation: string;
  user: UserInfo;
  dryRun: boolean;
  object?: JsonObject;
  oldObject?: JsonObject;
  options?: JsonObject;
}

/** The first review version the webhook accepts, or undefined when it accepts none we speak. */
export function chooseReviewVersion(accepted: readonly string[]): ReviewVersion | undefined {
  return accepted.find((v): v is ReviewVersion => (REVIEW_VERSIONS as readonly string[]).includes(v));
}

/** The AdmissionRequest (same fields in v1 and v1beta1), empty members left out as Go's omitempty does. */
export function admissionRequest(input: ReviewRequestInput): JsonObject {
  const userInfo: JsonObject = {};
  if (input.user.name) userInfo.username = input.user.name;
  if (input.user.uid) userInfo.uid = input.user.uid;
  if (input.user.groups.length > 0) userInfo.groups = [...input.user.groups];
  if (input.user.extra && Object.keys(input.user.extra).length > 0) userInfo.extra = input.user.extra as JsonObject;
  const request: JsonObject = {
    uid: input.uid,
    kind: {...input.kind},
    resource: {...input.resource},
  };
  if (input.subresource) request.subResource = input.subresource;
  request.requestKind = {...input.requestKind};
  request.requestResource = {...input.requestResource};
  if (input.requestSubresource) request.requestSubResource = input.requestSubresource;
  if (input.name) request.name = input.name;
  if (input.namespace) request.namespace = input.namespace;
  request.operation = input.operation;
  request.userInfo = userInfo;
  request.object = input.object ?? null;
  request.oldObject = input.oldObject ?? null;
  request.dryRun = input.dryRun;
  request.options = input.options ?? null;
  return request;
}

export function admissionReview(version: ReviewVersion, request: JsonObject): JsonObject {
  return {kind: 'AdmissionReview', apiVersion: reviewApiVersion(version), request};
}

/** A webhook's answer after the checks (upstream's request.AdmissionResponse). */
export interface AdmissionResponse {
  allowed: boolean;
  /** The decoded JSON patch (mutating webhooks only). */
  patch?: Buffer;
  patchType?: string;
  result?: JsonObject;
  auditAnnotations: Record<string, string>;
  warnings: string[];
}

/** Go's text of a group/version/kind (`admission.k8s.io/v1, Kind=AdmissionReview`). */
const gvkText = (apiVersion: JsonValue | undefined, kind: JsonValue | undefined) =>
  `${typeof apiVersion === 'string' ? apiVersion : ''}, Kind=${typeof kind === 'string' ? kind : ''}`;

/** Go decodes a []byte field from base64 (standard alphabet, padded); anything else is an error. */
function decodeBase64Field(value: JsonValue, field: string): Buffer {
  if (typeof value !== 'string') throw new Error(`json: cannot unmarshal ${Array.isArray(value) ? 'array' : typeof value} into Go struct field AdmissionResponse.response.${field} of type []uint8`);
  const bad = value.search(/[^A-Za-z0-9+/=]/);
  if (bad >= 0 || value.length % 4 !== 0) throw new Error(`illegal base64 data at input byte ${bad >= 0 ? bad : value.length - (value.length % 4)}`);
  return Buffer.from(value, 'base64');
}

function stringMap(value: JsonValue | undefined): Record<string, string> {
  if (!isJsonObject(value)) return {};
  return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

/** Checks the decoded answer to a review sent with `uid` (upstream's VerifyAdmissionResponse). */
export function verifyAdmissionResponse(uid: string, mutating: boolean, version: ReviewVersion, review: unknown): AdmissionResponse {
  if (!isJsonObject(review)) throw new Error('webhook response was absent');
  const response = review.response;
  if (!isJsonObject(response)) throw new Error('webhook response was absent');
  const patchValue = response.patch;
  const patchTypeValue = response.patchType;
  const out: AdmissionResponse = {
    allowed: response.allowed === true,
    result: isJsonObject(response.status) ? response.status : undefined,
    auditAnnotations: stringMap(response.auditAnnotations),
    warnings: Array.isArray(response.warnings) ? response.warnings.filter((w): w is string => typeof w === 'string') : [],
  };
  const hasPatch = patchValue !== undefined && patchValue !== null && patchValue !== '';
  const hasPatchType = patchTypeValue !== undefined && patchTypeValue !== null;
  if (version === 'v1') {
    if (response.uid !== uid) throw new Error(`expected response.uid=${JSON.stringify(uid)}, got ${JSON.stringify(typeof response.uid === 'string' ? response.uid : '')}`);
    const expected = reviewApiVersion('v1');
    if (review.apiVersion !== expected || review.kind !== 'AdmissionReview') {
      throw new Error(`expected webhook response of ${gvkText(expected, 'AdmissionReview')}, got ${gvkText(review.apiVersion, review.kind)}`);
    }
    if (mutating) {
      if (hasPatch && !hasPatchType) throw new Error('webhook returned response.patch but not response.patchType');
      if (!hasPatch && hasPatchType) throw new Error('webhook returned response.patchType but not response.patch');
      if (hasPatchType && patchTypeValue === '') throw new Error(`webhook returned invalid response.patchType of ""`);
      if (hasPatch) {
        out.patch = decodeBase64Field(patchValue, 'patch');
        out.patchType = String(patchTypeValue);
      }
    } else {
      if (hasPatch) throw new Error('validating webhook may not return response.patch');
      if (hasPatchType) throw new Error('validating webhook may not return response.patchType');
    }
    return out;
  }
  // v1beta1: neither the uid nor the kind was ever checked; a patch is a JSON patch whatever its type says.
  if (mutating && hasPatch) {
    out.patch = decodeBase64Field(patchValue, 'patch');
    out.patchType = 'JSONPatch';
  }
  return out;
}
