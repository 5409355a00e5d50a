/**
 * An object's JSON as served, made from its stored JSON without decoding it. The store keeps each
 * object's JSON without `metadata.resourceVersion` (the revision of the write says it); serving
 * means JSON.parse, setting the field, JSON.stringify: for a list of 150,000 pods, tens of
 * microseconds an item and every decoded object thrown away again. Here the field is spliced into
 * the text instead, where JSON.stringify of the decoded object would put it: last in `metadata`
 * (the stored metadata has none, so setting it appends it).
 *
 * Hand-written because what is needed is one position in the text: a JSON parser would build the
 * very objects this avoids. The scan reads the top-level members up to the end of `metadata`,
 * skipping strings (with their escapes) and nested values; anything it does not expect (no
 * metadata, a resourceVersion already there, malformed text) gives undefined, and the caller decodes.
 * Pure.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

function skipWhitespace(text: string, i: number): number {
  for (let c = text.charCodeAt(i); c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09; c = text.charCodeAt(++i));
  return i;
}

/** `i` at an opening quote: the index after the closing one, or -1. */
function skipString(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) j++;
    else if (c === QUOTE) return j + 1;
  }
  return -1;
}

/** `i` at a value: the index after it, or -1 (nested objects and arrays by depth, strings skipped whole). */
function skipValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return skipString(text, i);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) {
        j = skipString(text, j);
        if (j < 0) return -1;
        j--;
      } else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (--depth === 0) return j + 1;
      }
    }
    return -1;
  }
  // A number, true, false or null: up to the next delimiter.
  let j = i;
  for (let c = text.charCodeAt(j); j < text.length && c !== COMMA && c !== CLOSE_BRACE && c !== CLOSE_BRACKET && c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09; c = text.charCodeAt(++j));
  return j > i ? j : -1;
}

/**
 * Calls `member(keyStart, keyEnd, valueStart)` for each member of the object at `i` (keys as their
 * raw text between the quotes); `member` returns the index after the value, or a negative number
 * to stop (returned as is). Returns the index of the object's closing brace, or -1 when malformed.
 */
function members(text: string, i: number, member: (keyStart: number, keyEnd: number, valueStart: number) => number): number {
  if (text.charCodeAt(i) !== OPEN_BRACE) return -1;
  i = skipWhitespace(text, i + 1);
  if (text.charCodeAt(i) === CLOSE_BRACE) return i;
  for (;;) {
    if (text.charCodeAt(i) !== QUOTE) return -1;
    const keyEnd = skipString(text, i);
    if (keyEnd < 0) return -1;
    const colon = skipWhitespace(text, keyEnd);
    if (text.charCodeAt(colon) !== COLON) return -1;
    const after = member(i + 1, keyEnd - 1, skipWhitespace(text, colon + 1));
    if (after < 0) return after;
    i = skipWhitespace(text, after);
    const c = text.charCodeAt(i);
    if (c === CLOSE_BRACE) return i;
    if (c !== COMMA) return -1;
    i = skipWhitespace(text, i + 1);
  }
}

/** A member callback's "stop: done" (negative, as errors, but with insertAt set). */
const FOUND = -2;

const keyIs = (text: string, start: number, end: number, key: string) => end - start === key.length && text.startsWith(key, start);

/**
 * The stored JSON with `"resourceVersion":"<resourceVersion>"` appended to its metadata, as
 * JSON.stringify of the decoded object with the field set would write it; undefined when the text
 * is not an object with a metadata object lacking the field.
 */
export function withResourceVersion(stored: string, resourceVersion: string): string | undefined {
  let insertAt = -1;
  let empty = false;
  // The members after metadata are not read: the stored text is the store's own JSON.
  members(stored, skipWhitespace(stored, 0), (keyStart, keyEnd, valueStart) => {
    if (!keyIs(stored, keyStart, keyEnd, 'metadata')) return skipValue(stored, valueStart);
    let hasField = false;
    let count = 0;
    const close = members(stored, valueStart, (k, kEnd, v) => {
      count++;
      if (keyIs(stored, k, kEnd, 'resourceVersion')) hasField = true;
      return hasField ? -1 : skipValue(stored, v);
    });
    if (close < 0) return -1; // not an object (members checks the brace), or malformed
    insertAt = close;
    empty = count === 0;
    return FOUND;
  });
  if (insertAt < 0) return undefined;
  return `${stored.slice(0, insertAt)}${empty ? '' : ','}"resourceVersion":${JSON.stringify(resourceVersion)}${stored.slice(insertAt)}`;
}
