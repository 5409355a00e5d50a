/**
 * Dynamic resource allocation: resource/v1beta1 <-> resource/v1 (stored), as upstream's
 * pkg/apis/resource/v1beta1/conversion.go does it. The two shapes differ in three places:
 * - a claim's request: v1beta1 carries the exact request's fields on the request itself, v1 under
 *   `exactly` (a v1beta1 request with any of them set becomes an exact request);
 * - a slice's device: v1beta1 wraps its fields in `basic`, v1 has them on the device;
 * - a slice's `nodeName` and `allNodes`: v1beta1's empty string and false are v1's unset.
 * Everything else (device classes, allocation results, status) is the same in both. v1beta2 has the
 * v1 schema and converts as is. Pure: objects in, new objects out.
 */
import {isJsonObject, type JsonObject, type JsonValue} from '../../../patch/types.js';
import {deepCopy} from './objects.js';

/** The fields of v1's ExactDeviceRequest, which v1beta1 keeps on the request. */
const EXACT_REQUEST_FIELDS = ['deviceClassName', 'selectors', 'allocationMode', 'count', 'adminAccess', 'tolerations', 'capacity'];

/** The fields of v1beta1's BasicDevice, which v1 keeps on the device. */
const BASIC_DEVICE_FIELDS = [
  'attributes', 'capacity', 'consumesCounters', 'nodeName', 'nodeSelector', 'allNodes', 'taints', 'bindsToNode',
  'bindingConditions', 'bindingFailureConditions', 'allowMultipleAllocations',
];

export const DRA_KINDS: ReadonlySet<string> = new Set(['DeviceClass', 'ResourceClaim', 'ResourceClaimTemplate', 'ResourceSlice']);

export type Direction = 'toV1' | 'fromV1';

/** A DRA object (ResourceClaim, ResourceClaimTemplate, ResourceSlice, DeviceClass) in the other shape. */
export function convertDra(kind: string, object: JsonObject, direction: Direction): JsonObject {
  const out = deepCopy(object);
  const spec = isJsonObject(out.spec) ? out.spec : undefined;
  if (!spec) return out;
  if (kind === 'ResourceClaim') convertClaimSpec(spec, direction);
  else if (kind === 'ResourceClaimTemplate' && isJsonObject(spec.spec)) convertClaimSpec(spec.spec, direction);
  else if (kind === 'ResourceSlice') convertSliceSpec(spec, direction);
  return out;
}

function convertClaimSpec(claimSpec: JsonObject, direction: Direction): void {
  const devices = claimSpec.devices;
  if (!isJsonObject(devices) || !Array.isArray(devices.requests)) return;
  devices.requests = devices.requests.map((r) => (isJsonObject(r) ? (direction === 'toV1' ? requestToV1(r) : requestFromV1(r)) : r));
}

function requestToV1(request: JsonObject): JsonObject {
  const out: JsonObject = {};
  const exactly: JsonObject = {};
  for (const [key, value] of Object.entries(request)) {
    if (EXACT_REQUEST_FIELDS.includes(key)) exactly[key] = value;
    else out[key] = value;
  }
  // upstream's hasAnyMainRequestFieldsSet: Go's zero values (empty strings, a zero count) are unset.
  const set = Object.values(exactly).some((value) => value !== null && value !== '' && value !== 0);
  if (set) out.exactly = exactly;
  return out;
}

function requestFromV1(request: JsonObject): JsonObject {
  const {exactly, ...out} = request;
  if (isJsonObject(exactly)) for (const key of EXACT_REQUEST_FIELDS) if (exactly[key] !== undefined) out[key] = exactly[key]!;
  return out;
}

function convertSliceSpec(spec: JsonObject, direction: Direction): void {
  // v1beta1's non-pointer nodeName/allNodes: their zero values are v1's unset (and never sent by v1beta1 clients).
  if (spec.nodeName === '' || spec.nodeName === null) delete spec.nodeName;
  if (spec.allNodes === false || spec.allNodes === null) delete spec.allNodes;
  if (!Array.isArray(spec.devices)) return;
  spec.devices = spec.devices.map((d) => (isJsonObject(d) ? (direction === 'toV1' ? deviceToV1(d) : deviceFromV1(d)) : d));
}

function deviceToV1(device: JsonObject): JsonObject {
  const {basic, ...out} = device;
  if (isJsonObject(basic)) for (const key of BASIC_DEVICE_FIELDS) if (basic[key] !== undefined) out[key] = basic[key]!;
  return out;
}

/** upstream always writes `basic`, empty or not. */
function deviceFromV1(device: JsonObject): JsonObject {
  const out: JsonObject = {};
  const basic: JsonObject = {};
  for (const [key, value] of Object.entries(device)) {
    if (BASIC_DEVICE_FIELDS.includes(key)) basic[key] = value as JsonValue;
    else out[key] = value;
  }
  out.basic = basic;
  return out;
}
