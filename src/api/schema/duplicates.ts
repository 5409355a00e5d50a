/**
 * Duplicate keys in a JSON text, which JSON.parse keeps silently (the last wins) and upstream's
 * strict decoder reports (`duplicate field "spec.paused"`). One pass over text that JSON.parse has
 * already accepted; records where each field path first appears so findings can be reported in
 * document order, as the Go decoder streams them. Pure.
 */

export interface KeyScan {
  /** Duplicate occurrences: the field path and the offset of the repeated key. */
  duplicates: { path: string; offset: number }[];
  /** The offset at which each field path first appears. */
  firstOffset: Map<string, number>;
}

interface Frame {
  array: boolean;
  parent: Frame | undefined;
  /** This container's key in its parent (an index for list elements); undefined at the root. */
  segment: string | number | undefined;
  keys?: Set<string>;
  index: number;
}

/** The field path of a frame, built only when a finding needs it. */
function framePath(frame: Frame | undefined): string {
  let text = '';
  for (let f = frame; f && f.segment !== undefined; f = f.parent) {
    text = typeof f.segment === 'number' ? `[${f.segment}]${text}` : `.${f.segment}${text}`;
  }
  return text.startsWith('.') ? text.slice(1) : text;
}

function keyPath(frame: Frame, key: string): string {
  const base = framePath(frame);
  return base ? `${base}.${key}` : key;
}

/** Scans valid JSON text; `recordAll` keeps every key's offset (needed to order unknown fields among duplicates). */
export function scanKeys(text: string, recordAll = true): KeyScan {
  const duplicates: KeyScan['duplicates'] = [];
  const firstOffset = new Map<string, number>();
  let top: Frame | undefined;
  let pendingKey: string | undefined;
  let expectKey = false;
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const segment = !top ? undefined : top.array ? top.index : pendingKey;
      top = c === 0x7b ? { array: false, parent: top, segment, keys: new Set(), index: 0 } : { array: true, parent: top, segment, index: 0 };
      expectKey = c === 0x7b;
      pendingKey = undefined;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      top = top?.parent;
      pendingKey = undefined;
      expectKey = false;
      i++;
    } else if (c === 0x2c /* , */) {
      if (top?.array) top.index++;
      else expectKey = true;
      pendingKey = undefined;
      i++;
    } else if (c === 0x22 /* " */) {
      const start = i;
      i++;
      let escaped = false;
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) {
          escaped = true;
          i += 2;
          continue;
        }
        if (d === 0x22) break;
        i++;
      }
      i++;
      if (expectKey && top) {
        const key = escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
        if (top.keys!.has(key)) duplicates.push({ path: keyPath(top, key), offset: start });
        else {
          top.keys!.add(key);
          if (recordAll) firstOffset.set(keyPath(top, key), start);
        }
        pendingKey = key;
        expectKey = false;
      }
    } else {
      i++;
    }
  }
  return { duplicates, firstOffset };
}

/**
 * The number of object keys in valid JSON text: a tight loop without allocations. When it equals the
 * number of keys the parsed value holds, no key repeats and scanKeys is not needed.
 */
export function countKeyTokens(text: string): number {
  let count = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    if (text.charCodeAt(i) !== 0x22) continue;
    i++;
    while (i < n) {
      const d = text.charCodeAt(i);
      if (d === 0x5c) i += 2;
      else if (d === 0x22) break;
      else i++;
    }
    let j = i + 1;
    while (j < n) {
      const w = text.charCodeAt(j);
      if (w !== 0x20 && w !== 0x0a && w !== 0x0d && w !== 0x09) break;
      j++;
    }
    if (text.charCodeAt(j) === 0x3a /* : */) count++;
  }
  return count;
}
