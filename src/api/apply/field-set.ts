/**
 * Field sets as structured-merge-diff keeps them (fieldpath.Set): a trie of path elements whose nodes
 * may be members themselves. Path elements are kept in their `fieldsV1` spelling, so decoding and
 * encoding `metadata.managedFields[].fieldsV1` is a walk over the same keys:
 *   `f:<field>`            a map member or struct field
 *   `k:{"name":"x"}`       a list-map item by its key fields (sorted by name)
 *   `v:<json>`             a set item by its value
 *   `i:<n>`                a list item by position (lists without keys)
 * and `.` marks a node that is a member itself as well as having members below it.
 * Hand-written: structured-merge-diff (Go) has no JavaScript port. Pure.
 */
import type { JsonObject, JsonValue } from '../../patch/types.js';

export class FieldSet {
  member = false;
  readonly children = new Map<string, FieldSet>();

  /**
   * True when nothing is in the set. Every operation keeps the invariant that a node below the root
   * is a member or has children (empty results are not linked in), so this is a constant-time check.
   */
  empty(): boolean {
    return !this.member && this.children.size === 0;
  }

  child(element: string): FieldSet {
    let node = this.children.get(element);
    if (!node) {
      node = new FieldSet();
      this.children.set(element, node);
    }
    return node;
  }

  /** Adds `path` (its elements) as a member; the empty path (the whole object) is not tracked, as upstream. */
  insert(path: readonly string[]): void {
    if (path.length === 0) return;
    let node: FieldSet = this;
    for (const element of path) node = node.child(element);
    node.member = true;
  }

  has(path: readonly string[]): boolean {
    let node: FieldSet | undefined = this;
    for (const element of path) {
      node = node.children.get(element);
      if (!node) return false;
    }
    return path.length > 0 && node.member;
  }

  clone(): FieldSet {
    const out = new FieldSet();
    out.member = this.member;
    for (const [k, v] of this.children) out.children.set(k, v.clone());
    return out;
  }

  union(other: FieldSet): FieldSet {
    const out = this.clone();
    mergeInto(out, other);
    return out;
  }

  difference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && !other.member;
    for (const [k, v] of this.children) {
      const o = other.children.get(k);
      const d = o ? v.difference(o) : v.clone();
      if (!d.empty()) out.children.set(k, d);
    }
    return out;
  }

  /** Upstream's RecursiveDifference: a member of `other` takes everything below it out too. */
  recursiveDifference(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && !other.member;
    for (const [k, v] of this.children) {
      const o = other.children.get(k);
      if (o?.member) continue;
      const d = o ? v.recursiveDifference(o) : v.clone();
      if (!d.empty()) out.children.set(k, d);
    }
    return out;
  }

  intersection(other: FieldSet): FieldSet {
    const out = new FieldSet();
    out.member = this.member && other.member;
    for (const [k, v] of this.children) {
      const o = other.children.get(k);
      if (!o) continue;
      const i = v.intersection(o);
      if (!i.empty()) out.children.set(k, i);
    }
    return out;
  }

  /** Every member path, members before their children, children in upstream's order. */
  paths(prefix: string[] = [], out: string[][] = []): string[][] {
    if (this.member && prefix.length) out.push(prefix);
    for (const k of sortedElements(this.children.keys())) this.children.get(k)!.paths([...prefix, k], out);
    return out;
  }

  /**
   * Upstream's EnsureNamedFieldsAreMembers, without the schema: a field that has members below it
   * counts as a member too, so removing it removes what is left of it (not an empty `{}`).
   */
  withFieldsAsMembers(): FieldSet {
    const out = new FieldSet();
    out.member = this.member;
    for (const [k, v] of this.children) {
      const c = v.withFieldsAsMembers();
      if (k.startsWith('f:') && !v.empty()) c.member = true;
      out.children.set(k, c);
    }
    return out;
  }

  equals(other: FieldSet): boolean {
    if (this.member !== other.member) return false;
    const mine = [...this.children].filter(([, v]) => !v.empty());
    const theirs = [...other.children].filter(([, v]) => !v.empty());
    if (mine.length !== theirs.length) return false;
    return mine.every(([k, v]) => {
      const o = other.children.get(k);
      return o !== undefined && v.equals(o);
    });
  }

  /** The `fieldsV1` object of this set. */
  toFieldsV1(): JsonObject {
    const out: JsonObject = {};
    if (this.member && this.children.size) out['.'] = {};
    for (const k of sortedElements(this.children.keys())) {
      const child = this.children.get(k)!;
      if (!child.empty()) out[k] = child.toFieldsV1();
    }
    return out;
  }

  static fromFieldsV1(value: JsonValue | undefined): FieldSet {
    const set = new FieldSet();
    if (value && typeof value === 'object' && !Array.isArray(value)) decode(set, value);
    return set;
  }
}

function mergeInto(target: FieldSet, source: FieldSet): void {
  target.member = target.member || source.member;
  for (const [k, v] of source.children) mergeInto(target.child(k), v);
}

function decode(node: FieldSet, value: JsonObject): void {
  for (const [k, v] of Object.entries(value)) {
    if (k === '.') continue;
    const child = node.child(k);
    const inner = v && typeof v === 'object' && !Array.isArray(v) ? v : {};
    // A leaf `{}` is a member; `.` marks a member that also has members below it.
    if (Object.keys(inner).length === 0 || '.' in inner) child.member = true;
    decode(child, inner);
  }
}

const ORDER: Record<string, number> = { f: 0, k: 1, v: 2, i: 3 };

/** Upstream's PathElement order: field names, then keys, then values, then indexes (numeric). */
function sortedElements(elements: Iterable<string>): string[] {
  return [...elements].sort((a, b) => {
    const ta = ORDER[a[0]!] ?? 4;
    const tb = ORDER[b[0]!] ?? 4;
    if (ta !== tb) return ta - tb;
    if (ta === 3) return Number(a.slice(2)) - Number(b.slice(2));
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

// ---- path elements ---------------------------------------------------------------------------

export const fieldElement = (name: string): string => `f:${name}`;
export const indexElement = (index: number): string => `i:${index}`;
export const valueElement = (value: JsonValue): string => `v:${JSON.stringify(value)}`;

/** `k:{...}` with the key fields sorted by name, as upstream serializes a key. */
export function keyElement(fields: Readonly<Record<string, JsonValue>>): string {
  const sorted: JsonObject = {};
  for (const name of Object.keys(fields).sort()) sorted[name] = fields[name]!;
  return `k:${JSON.stringify(sorted)}`;
}

/**
 * A path as upstream prints it in conflicts (fieldpath.Path.String): `.spec.replicas`,
 * `.spec.containers[name="nginx"].image`, `.metadata.finalizers[="a"]`, `.spec.args[0]`.
 */
export function pathString(path: readonly string[]): string {
  let out = '';
  for (const element of path) {
    const body = element.slice(2);
    switch (element[0]) {
      case 'f':
        out += `.${body}`;
        break;
      case 'k': {
        const fields = JSON.parse(body) as JsonObject;
        out += `[${Object.entries(fields).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
        break;
      }
      case 'v':
        out += `[=${body}]`;
        break;
      default:
        out += `[${body}]`;
    }
  }
  return out;
}
