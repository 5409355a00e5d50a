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
  path: string;
  keys?: Set<string>;
  index: number;
}

/** Scans valid JSON text; `recordAll` keeps every key's offset (needed to order unknown fields). */
export function scanKeys(text: string, recordAll = true): KeyScan {
  const duplicates: KeyScan['duplicates'] = [];
  const firstOffset = new Map<string, number>();
  const stack: Frame[] = [];
  let pendingKey: string | undefined;
  let expectKey = false;
  const n = text.length;
  let i = 0;
  const childPath = (): string => {
    const top = stack[stack.length - 1];
    if (!top) return '';
    if (top.array) return `${top.path}[${top.index}]`;
    return pendingKey === undefined ? top.path : top.path ? `${top.path}.${pendingKey}` : pendingKey;
  };
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const path = childPath();
      stack.push(c === 0x7b ? { array: false, path, keys: new Set(), index: 0 } : { array: true, path, index: 0 });
      expectKey = c === 0x7b;
      pendingKey = undefined;
      i++;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
      pendingKey = undefined;
      expectKey = false;
      i++;
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
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
      if (expectKey) {
        const raw = text.slice(start + 1, i - 1);
        const key = escaped ? (JSON.parse(text.slice(start, i)) as string) : raw;
        const top = stack[stack.length - 1]!;
        const path = top.path ? `${top.path}.${key}` : key;
        if (top.keys!.has(key)) duplicates.push({ path, offset: start });
        else {
          top.keys!.add(key);
          if (recordAll) firstOffset.set(path, start);
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
