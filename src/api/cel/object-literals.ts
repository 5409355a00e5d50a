/**
 * CEL message construction (`Object{spec: Object.spec{replicas: 3}}`, `JSONPatch{op: "add", ...}`)
 * for admission policies, which @marcbachmann/cel-js does not parse: the expression is rewritten
 * to map literals with quoted field names (`{"spec": {"replicas": 3}}`) before parsing. Mutating
 * admission policies build their ApplyConfiguration and JSONPatch values this way; upstream
 * type-checks the type names against the object's schema, here they only mark a literal (a map is
 * what the mutation is read from either way). Strings and comments are left alone. Pure.
 */

/** Rewrites `<Type>{field: value}` literals of the given type names (and their `.path` forms). */
export function rewriteObjectLiterals(source: string, typeNames: readonly string[]): string {
  const stack: Array<'struct' | 'map' | '(' | '['> = [];
  let out = '';
  let i = 0;
  let expectField = false;
  const isIdentStart = (c: string | undefined) => !!c && /[A-Za-z_]/.test(c);
  const isIdent = (c: string | undefined) => !!c && /[A-Za-z0-9_]/.test(c);
  const skipSpace = (j: number) => {
    while (j < source.length && /\s/.test(source[j]!)) j++;
    return j;
  };
  while (i < source.length) {
    const c = source[i]!;
    // String and bytes literals, raw or not, single or triple quoted: copied verbatim.
    if (c === '"' || c === "'") {
      const triple = source.startsWith(c.repeat(3), i);
      const quote = triple ? c.repeat(3) : c;
      const raw = /[rR]$/.test(out) && !isIdent(out[out.length - 2]);
      let j = i + quote.length;
      while (j < source.length && !source.startsWith(quote, j)) j += !raw && source[j] === '\\' ? 2 : 1;
      out += source.slice(i, j + quote.length);
      i = j + quote.length;
      expectField = false;
      continue;
    }
    if (/\s/.test(c)) {
      out += c;
      i++;
      continue;
    }
    if (isIdentStart(c) && !isIdent(out[out.length - 1] ?? '')) {
      let j = i;
      while (isIdent(source[j])) j++;
      const word = source.slice(i, j);
      const afterDot = /\.\s*$/.test(out);
      if (expectField && stack[stack.length - 1] === 'struct') {
        const colon = skipSpace(j);
        if (source[colon] === ':') {
          out += JSON.stringify(word);
          i = j;
          expectField = false;
          continue;
        }
      }
      expectField = false;
      if (!afterDot && typeNames.includes(word)) {
        // `Type` or `Type.a.b` directly followed by `{`: a message literal.
        let k = j;
        for (;;) {
          const dot = skipSpace(k);
          if (source[dot] !== '.' || !isIdentStart(source[skipSpace(dot + 1)])) break;
          let e = skipSpace(dot + 1);
          while (isIdent(source[e])) e++;
          k = e;
        }
        const brace = skipSpace(k);
        if (source[brace] === '{') {
          out += '{';
          stack.push('struct');
          expectField = true;
          i = brace + 1;
          continue;
        }
      }
      out += word;
      i = j;
      continue;
    }
    if (c === '{') stack.push('map');
    else if (c === '(' || c === '[') stack.push(c);
    else if (c === '}' || c === ')' || c === ']') stack.pop();
    expectField = c === ',' && stack[stack.length - 1] === 'struct';
    out += c;
    i++;
  }
  return out;
}
