/**
 * Field ownership across writers, as structured-merge-diff's merge.Updater and the apiserver's
 * fieldmanager do it:
 * - `applyConfig` (operation Apply): the configuration is merged over the live object; the applier
 *   now owns exactly what it applied; fields it applied last time and no longer does are removed
 *   unless another manager owns them; a change to a field another manager owns is a conflict unless
 *   forced (forcing takes the field over).
 * - `recordUpdate` (operation Update: create, PUT, non-apply PATCH): the writer gains the fields it
 *   added or changed, other managers lose them, and removed fields leave every manager.
 * Managers are identified as upstream (BuildManagerIdentifier): manager, operation, subresource,
 * and the apiVersion for Update entries. Pure: the caller passes the time.
 */
import { isJsonObject, jsonEqual, type JsonObject, type JsonValue } from '../../patch/types.js';
import { fieldElement, FieldSet, pathString } from './field-set.js';
import type { TypeNode } from './schema.js';
import { compare, merge, removeItems, toFieldSet, type Comparison } from './typed.js';

export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  time?: string;
  fieldsType: 'FieldsV1';
  fieldsV1: JsonObject;
  subresource?: string;
}

export interface Manager {
  manager: string;
  operation: 'Update' | 'Apply';
  apiVersion: string;
  subresource?: string;
  time?: string;
  set: FieldSet;
  /** The stored fieldsV1 `set` was decoded from: written back as is while `set` is that same object. */
  decoded?: { set: FieldSet; fieldsV1: JsonObject };
}

export interface Conflict {
  manager: Manager;
  path: string[];
}

/** A 409 of upstream's apply: the conflicting fields, each with the manager that owns it. */
export class ApplyConflictError extends Error {
  constructor(readonly conflicts: Conflict[]) {
    super(conflictMessage(conflicts));
    this.name = 'ApplyConflictError';
  }
}

/** Upstream's printManager: `"name"`, with subresource, and `using <apiVersion>` for Update entries. */
export function describeManager(m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  let out = JSON.stringify(m.manager);
  if (m.subresource) out += ` with subresource ${JSON.stringify(m.subresource)}`;
  if (m.operation === 'Update') out += ` using ${m.apiVersion}`;
  return out;
}

/** Upstream's getConflictMessage. */
export function conflictMessage(conflicts: readonly Conflict[]): string {
  if (conflicts.length === 1) {
    return `Apply failed with 1 conflict: conflict with ${describeManager(conflicts[0]!.manager)}: ${pathString(conflicts[0]!.path)}`;
  }
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const name = describeManager(c.manager);
    byManager.set(name, [...(byManager.get(name) ?? []), pathString(c.path)]);
  }
  const lines: string[] = [];
  for (const name of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${name}:`);
    for (const path of byManager.get(name)!) lines.push(`- ${path}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

function identity(m: Pick<Manager, 'manager' | 'operation' | 'apiVersion' | 'subresource'>): string {
  return JSON.stringify([m.manager, m.operation, m.operation === 'Apply' ? '' : m.apiVersion, m.subresource ?? '']);
}

/** Fields no manager owns: the object's identity and server-set metadata (upstream's stripMetaManager). */
function stripSet(): FieldSet {
  const set = new FieldSet();
  set.insert([fieldElement('apiVersion')]);
  set.insert([fieldElement('kind')]);
  set.insert([fieldElement('metadata')]);
  for (const f of ['name', 'namespace', 'creationTimestamp', 'selfLink', 'uid', 'clusterName', 'generation', 'managedFields', 'resourceVersion']) {
    set.insert([fieldElement('metadata'), fieldElement(f)]);
  }
  return set;
}
const STRIP = stripSet();

/** The fields a write to `subresource` does not own (upstream's reset fields): status for the main resource, spec for status. */
export function ignoredFields(subresource: string | undefined, hasStatus: boolean): FieldSet {
  const set = new FieldSet();
  if (subresource === 'status') set.insert([fieldElement('spec')]);
  else if (!subresource && hasStatus) set.insert([fieldElement('status')]);
  return set;
}

/** Managers of an object's `metadata.managedFields`; entries that do not parse are dropped, as upstream resets them. */
export function decodeManagers(managedFields: JsonValue | undefined): Manager[] {
  if (!Array.isArray(managedFields)) return [];
  const out: Manager[] = [];
  for (const e of managedFields) {
    if (!isJsonObject(e) || typeof e.manager !== 'string' || (e.operation !== 'Apply' && e.operation !== 'Update')) continue;
    const set = FieldSet.fromFieldsV1(e.fieldsV1);
    const m: Manager = {
      manager: e.manager, operation: e.operation, apiVersion: typeof e.apiVersion === 'string' ? e.apiVersion : '', set,
    };
    if (isJsonObject(e.fieldsV1)) m.decoded = { set, fieldsV1: e.fieldsV1 };
    if (typeof e.time === 'string') m.time = e.time;
    if (typeof e.subresource === 'string' && e.subresource) m.subresource = e.subresource;
    out.push(m);
  }
  return out;
}

/** `metadata.managedFields` in upstream's order: Apply before Update, then by time, manager, apiVersion, subresource. */
export function encodeManagers(managers: readonly Manager[]): ManagedFieldsEntry[] {
  const sorted = [...managers].sort((p, q) => {
    if (p.operation !== q.operation) return p.operation < q.operation ? -1 : 1;
    const pt = p.time ?? '';
    const qt = q.time ?? '';
    if (pt !== qt) return pt < qt ? -1 : 1;
    if (p.manager !== q.manager) return p.manager < q.manager ? -1 : 1;
    if (p.apiVersion !== q.apiVersion) return p.apiVersion < q.apiVersion ? -1 : 1;
    return (p.subresource ?? '') < (q.subresource ?? '') ? -1 : (p.subresource ?? '') > (q.subresource ?? '') ? 1 : 0;
  });
  return sorted.map((m) => {
    // Member order as upstream serializes an entry.
    const entry = { manager: m.manager, operation: m.operation, apiVersion: m.apiVersion } as ManagedFieldsEntry;
    if (m.time) entry.time = m.time;
    entry.fieldsType = 'FieldsV1';
    entry.fieldsV1 = m.decoded?.set === m.set ? m.decoded.fieldsV1 : m.set.toFieldsV1();
    if (m.subresource) entry.subresource = m.subresource;
    return entry;
  });
}

/** An object without `metadata.managedFields` (ownership is tracked beside the object, not in it). */
export function withoutManagedFields(object: JsonObject): JsonObject {
  const meta = object.metadata;
  if (!isJsonObject(meta) || !('managedFields' in meta)) return object;
  const { managedFields: _dropped, ...rest } = meta;
  return { ...object, metadata: rest };
}

/**
 * SMD's Updater.update: compares live and new, finds other managers' fields that changed (conflicts
 * unless forced; forced ones change hands), and drops removed fields from everyone.
 */
function reconcile(live: JsonObject, next: JsonObject, managers: Map<string, Manager>, self: string, force: boolean, type: TypeNode, ignored: FieldSet): Comparison {
  const raw = compare(live, next, type);
  const cmp: Comparison = {
    added: raw.added.recursiveDifference(ignored),
    removed: raw.removed.recursiveDifference(ignored),
    modified: raw.modified.recursiveDifference(ignored),
  };
  const changed = cmp.modified.union(cmp.added);
  const conflicts: Conflict[] = [];
  const taken = new Map<string, FieldSet>();
  for (const [id, m] of managers) {
    if (id === self) continue;
    const overlap = m.set.intersection(changed);
    if (overlap.empty()) continue;
    taken.set(id, overlap);
    for (const path of overlap.paths()) conflicts.push({ manager: m, path });
  }
  if (!force && conflicts.length) throw new ApplyConflictError(conflicts);
  for (const [id, overlap] of taken) managers.get(id)!.set = managers.get(id)!.set.difference(overlap);
  // Sets left untouched stay the same objects, so their stored fieldsV1 is written back unchanged.
  if (!cmp.removed.empty()) {
    for (const m of managers.values()) if (!m.set.intersection(cmp.removed).empty()) m.set = m.set.difference(cmp.removed);
  }
  return cmp;
}

/** Upstream's cap on Update entries (capManagersManager): older ones merge into `ancient-changes`, per apiVersion. */
export const MAX_UPDATE_MANAGERS = 10;
const ANCIENT_CHANGES = 'ancient-changes';

function capUpdateManagers(managers: Map<string, Manager>): void {
  const updaters = [...managers].filter(([, m]) => m.operation === 'Update');
  if (updaters.length <= MAX_UPDATE_MANAGERS) return;
  const seconds = (m: Manager) => (m.time ? Math.floor(Date.parse(m.time) / 1000) : 0);
  updaters.sort(([ia, a], [ib, b]) => seconds(a) - seconds(b) || (ia < ib ? -1 : ia > ib ? 1 : 0));
  const firstOfVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > MAX_UPDATE_MANAGERS; i++) {
    const [id, m] = updaters[i]!;
    const bucket: Manager = { manager: ANCIENT_CHANGES, operation: 'Update', apiVersion: m.apiVersion, set: new FieldSet() };
    const bucketId = identity(bucket);
    const first = firstOfVersion.get(m.apiVersion);
    if (first === undefined) {
      firstOfVersion.set(m.apiVersion, id);
      continue;
    }
    if (!managers.has(bucketId)) {
      managers.set(bucketId, { ...bucket, set: managers.get(first)!.set });
      managers.delete(first);
    }
    const merged = managers.get(bucketId)!;
    // The merged entry takes the time of the (more recent) update merged into it.
    managers.set(bucketId, { ...merged, set: merged.set.union(m.set), ...(m.time ? { time: m.time } : {}) });
    managers.delete(id);
    length--;
  }
}

function finish(managers: Map<string, Manager>, keep?: string): Manager[] {
  capUpdateManagers(managers);
  const out: Manager[] = [];
  for (const [id, m] of managers) {
    if (!m.set.intersection(STRIP).empty()) m.set = m.set.difference(STRIP);
    if (!m.set.empty() || id === keep) out.push(m);
  }
  return out;
}

export interface UpdateInput {
  /** The stored object before the write; undefined for a create. */
  live: JsonObject | undefined;
  next: JsonObject;
  managers: readonly Manager[];
  manager: string;
  apiVersion: string;
  subresource?: string;
  type: TypeNode;
  ignored: FieldSet;
  time: string;
}

/** A create needs a live object to compare with: upstream's is the kind's zero value, whose structs exist (no `.` on spec). */
const EMPTY_LIVE: JsonObject = { metadata: {}, spec: {} };

/**
 * The zero value of `value`'s type as far as `value` reaches: the struct members that hold structs,
 * empty. Compared with it, a create owns a struct's members but not the struct (upstream's Go types
 * have them already); maps, lists and custom resources are owned as a whole (`.`), as upstream.
 */
function zeroValue(value: JsonObject, type: TypeNode): JsonObject {
  const out: JsonObject = {};
  for (const [k, v] of Object.entries(value)) {
    const child = type.field(k);
    if (isJsonObject(v) && child.struct && !child.atomicMap) out[k] = zeroValue(v, child);
  }
  return out;
}

function copyManagers(managers: readonly Manager[]): Map<string, Manager> {
  return new Map(managers.map((m) => [identity(m), { ...m }]));
}

/** managedFields after an Update operation by `manager`. */
export function recordUpdate(input: UpdateInput): Manager[] {
  const managers = copyManagers(input.managers);
  const next = withoutManagedFields(input.next);
  const live = input.live ? withoutManagedFields(input.live) : input.type.struct ? zeroValue(next, input.type) : EMPTY_LIVE;
  const cmp = reconcile(live, next, managers, '', true, input.type, input.ignored);
  const gained = cmp.modified.union(cmp.added).difference(STRIP);
  if (!gained.empty()) {
    const me: Manager = { manager: input.manager, operation: 'Update', apiVersion: input.apiVersion, set: new FieldSet() };
    if (input.subresource) me.subresource = input.subresource;
    const id = identity(me);
    const previous = managers.get(id);
    managers.set(id, { ...(previous ?? me), set: (previous?.set ?? new FieldSet()).union(gained), time: input.time });
  }
  return finish(managers);
}

export interface ApplyInput {
  /** The stored object; undefined when the apply creates it. */
  live: JsonObject | undefined;
  config: JsonObject;
  managers: readonly Manager[];
  manager: string;
  apiVersion: string;
  subresource?: string;
  force: boolean;
  type: TypeNode;
  ignored: FieldSet;
  time: string;
}

/** The object after applying `config` as `manager`, and the managers after it. Throws ApplyConflictError, ApplyStructureError. */
export function applyConfig(input: ApplyInput): { object: JsonObject; managers: Manager[] } {
  const managers = copyManagers(input.managers);
  const live = input.live ? withoutManagedFields(input.live) : {};
  const me: Manager = { manager: input.manager, operation: 'Apply', apiVersion: input.apiVersion, set: new FieldSet() };
  if (input.subresource) me.subresource = input.subresource;
  const id = identity(me);
  const previous = managers.get(id);
  const applied = toFieldSet(input.config, input.type).recursiveDifference(input.ignored).difference(STRIP);
  let object = merge(live, input.config, input.type);
  managers.set(id, { ...(previous ?? me), apiVersion: input.apiVersion, set: applied });

  // Fields applied last time and not now go, unless some manager (the applier included) still owns them.
  if (previous && !previous.set.empty()) {
    let owned = new FieldSet();
    for (const m of managers.values()) owned = owned.union(m.set);
    const stale = previous.set.withFieldsAsMembers().difference(owned.withFieldsAsMembers());
    if (!stale.empty()) object = removeItems(object, stale, input.type);
  }

  reconcile(input.live ? live : EMPTY_LIVE, object, managers, id, input.force, input.type, input.ignored);
  const mine = managers.get(id)!;
  const changed = !jsonEqual(live, object) || !previous || !previous.set.equals(mine.set);
  mine.time = changed ? input.time : previous?.time ?? input.time;
  return { object, managers: finish(managers, id) };
}
