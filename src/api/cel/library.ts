/**
 * The CEL environment of Kubernetes rules (x-kubernetes-validations now; admission policies
 * and authentication configuration later).
 *
 * Why @marcbachmann/cel-js: compared on the registry with `cel-js` (chevrotain-based, no type
 * checker, no custom functions with overloads) and `@bufbuild/cel` (conformance-minded, but
 * pre-1.0 and pulling in @bufbuild/protobuf and a RE2 port): it is maintained (8.x, 2026), has
 * no dependencies, runs on Node >= 20.19, and offers what Kubernetes' CEL needs: a type checker
 * over declared object types (so `self.foo` on an undeclared field fails at CRD creation, as
 * upstream), macros (all, exists, exists_one, map, filter), optionals (`.?`), receiver
 * functions with overloads for upstream's extension libraries, and a parsed AST we walk for
 * upstream's cost estimation. Regular expressions run on JavaScript's engine (upstream uses
 * RE2; the common subset behaves alike).
 *
 * Added here from upstream's libraries (k8s.io/apiserver/pkg/cel/library): the strings
 * extension functions the package lacks (charAt, replace, reverse), lists (isSorted, sum, min,
 * max, indexOf, lastIndexOf), regex (find, findAll), urls (url, isURL and accessors) and
 * quantities (quantity, isQuantity and comparisons).
 */
import { Environment } from '@marcbachmann/cel-js';
import { parseQuantity } from '../../options/quantity.js';

type Value = unknown;

const cmp = (a: Value, b: Value): number => (a! < b! ? -1 : a! > b! ? 1 : 0);

/** A URL value (upstream's apiserver/pkg/cel/library/urls.go). */
export class CelUrl {
  constructor(readonly url: URL) {}
}

/** A quantity value (upstream's library/quantity.go), compared by amount. */
export class CelQuantity {
  constructor(readonly text: string, readonly value: number) {}
}

function toUrl(s: string): CelUrl {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    throw new Error(`URL parse error during conversion from string: parse "${s}": invalid URI for request`);
  }
  return new CelUrl(url);
}

function toQuantity(s: string): CelQuantity {
  try {
    const q = parseQuantity(s);
    return new CelQuantity(q.text, q.value);
  } catch (error) {
    throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${(error as Error).message}`);
  }
}

function numericList(list: Value[]): Value[] {
  return list;
}

/** Registers the Kubernetes extension functions on an environment; returns it. */
export function addKubernetesLibraries(env: Environment): Environment {
  env
    // strings extension (the parts the package does not ship)
    .registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
      if (i < 0n || i > BigInt(s.length)) throw new Error(`index out of range: ${i}`);
      return [...s][Number(i)] ?? '';
    })
    .registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) => s.split(a).join(b))
    .registerFunction('string.replace(string, string, int): string', (s: string, a: string, b: string, n: bigint) => {
      let out = s;
      let count = 0n;
      let from = 0;
      while (n < 0n || count < n) {
        const at = out.indexOf(a, from);
        if (at < 0) break;
        out = out.slice(0, at) + b + out.slice(at + a.length);
        from = at + b.length + (a === '' ? 1 : 0);
        count++;
      }
      return out;
    })
    .registerFunction('string.reverse(): string', (s: string) => [...s].reverse().join(''))
    // regex library
    .registerFunction('string.find(string): string', (s: string, re: string) => new RegExp(re, 'u').exec(s)?.[0] ?? '')
    .registerFunction('string.findAll(string): list<string>', (s: string, re: string) => [...s.matchAll(new RegExp(re, 'gu'))].map((m) => m[0]))
    .registerFunction('string.findAll(string, int): list<string>', (s: string, re: string, n: bigint) => {
      const all = [...s.matchAll(new RegExp(re, 'gu'))].map((m) => m[0]);
      return n < 0n ? all : all.slice(0, Number(n));
    })
    // lists library
    .registerFunction('list.isSorted(): bool', (l: Value[]) => l.every((v, i) => i === 0 || cmp(l[i - 1], v) <= 0))
    .registerFunction('list.sum(): dyn', (l: Value[]) => numericList(l).reduce((a: any, b: any) => a + b, l.length && typeof l[0] === 'bigint' ? 0n : 0))
    .registerFunction('list.min(): dyn', (l: Value[]) => {
      if (l.length === 0) throw new Error('min(list) argument must not be empty');
      return l.reduce((a, b) => (cmp(b, a) < 0 ? b : a));
    })
    .registerFunction('list.max(): dyn', (l: Value[]) => {
      if (l.length === 0) throw new Error('max(list) argument must not be empty');
      return l.reduce((a, b) => (cmp(b, a) > 0 ? b : a));
    })
    .registerFunction('list.indexOf(dyn): int', (l: Value[], v: Value) => BigInt(l.findIndex((x) => x === v)))
    .registerFunction('list.lastIndexOf(dyn): int', (l: Value[], v: Value) => {
      for (let i = l.length - 1; i >= 0; i--) if (l[i] === v) return BigInt(i);
      return -1n;
    })
    // urls library
    .registerType('URL', { ctor: CelUrl })
    .registerFunction('url(string): URL', toUrl)
    .registerFunction('isURL(string): bool', (s: string) => {
      try {
        new URL(s);
        return true;
      } catch {
        return false;
      }
    })
    .registerFunction('URL.getScheme(): string', (u: CelUrl) => u.url.protocol.replace(/:$/, ''))
    .registerFunction('URL.getHost(): string', (u: CelUrl) => u.url.host)
    .registerFunction('URL.getHostname(): string', (u: CelUrl) => u.url.hostname.replace(/^\[|\]$/g, ''))
    .registerFunction('URL.getPort(): string', (u: CelUrl) => u.url.port)
    .registerFunction('URL.getEscapedPath(): string', (u: CelUrl) => u.url.pathname)
    .registerFunction('URL.getQuery(): map<string, list<string>>', (u: CelUrl) => {
      const out: Record<string, string[]> = {};
      for (const [k, v] of u.url.searchParams) (out[k] ??= []).push(v);
      return out;
    })
    // quantity library
    .registerType('Quantity', { ctor: CelQuantity })
    .registerFunction('quantity(string): Quantity', toQuantity)
    .registerFunction('isQuantity(string): bool', (s: string) => {
      try {
        parseQuantity(s);
        return true;
      } catch {
        return false;
      }
    })
    .registerFunction('Quantity.isInteger(): bool', (q: CelQuantity) => Number.isInteger(q.value))
    .registerFunction('Quantity.asInteger(): int', (q: CelQuantity) => {
      if (!Number.isInteger(q.value)) throw new Error('cannot convert value to integer');
      return BigInt(q.value);
    })
    .registerFunction('Quantity.asApproximateFloat(): double', (q: CelQuantity) => q.value)
    .registerFunction('Quantity.sign(): int', (q: CelQuantity) => BigInt(Math.sign(q.value)))
    .registerFunction('Quantity.isGreaterThan(Quantity): bool', (a: CelQuantity, b: CelQuantity) => a.value > b.value)
    .registerFunction('Quantity.isLessThan(Quantity): bool', (a: CelQuantity, b: CelQuantity) => a.value < b.value)
    .registerFunction('Quantity.compareTo(Quantity): int', (a: CelQuantity, b: CelQuantity) => BigInt(cmp(a.value, b.value)))
    .registerFunction('Quantity.add(Quantity): Quantity', (a: CelQuantity, b: CelQuantity) => new CelQuantity(String(a.value + b.value), a.value + b.value))
    .registerFunction('Quantity.sub(Quantity): Quantity', (a: CelQuantity, b: CelQuantity) => new CelQuantity(String(a.value - b.value), a.value - b.value))
    .registerOperator('Quantity == Quantity', (a: CelQuantity, b: CelQuantity) => a.value === b.value);
  return env;
}

let base: Environment | undefined;

/**
 * A fresh environment with the Kubernetes libraries, to declare variables and types on.
 * The shared parent is built once and frozen by clone(), as the library requires.
 */
export function kubernetesEnvironment(): Environment {
  base ??= addKubernetesLibraries(new Environment({ enableOptionalTypes: true, homogeneousAggregateLiterals: false }));
  return base.clone();
}
