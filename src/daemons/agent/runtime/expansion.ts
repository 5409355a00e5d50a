/**
 * Kubernetes variable references, $(VAR_NAME), in env values, command and args
 * (k8s.io/kubernetes/third_party/forked/golang/expansion). `$$` escapes a `$`; a reference to an
 * undefined variable is left as written; a `$` followed by anything else is kept.
 * Hand-written: the upstream grammar is small and no npm package implements it.
 */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let i = 0;
  while (i < input.length) {
    const ch = input[i];
    if (ch !== '$' || i + 1 >= input.length) {
      out += ch;
      i++;
      continue;
    }
    const next = input[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
      continue;
    }
    if (next === '(') {
      const close = input.indexOf(')', i + 2);
      if (close === -1) {
        // Unterminated reference: upstream keeps the text as written.
        out += input.slice(i);
        break;
      }
      const name = input.slice(i + 2, close);
      const value = name === '' ? undefined : lookup(name);
      out += value ?? `$(${name})`;
      i = close + 1;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}
