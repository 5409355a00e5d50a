import { describe, expect, test } from '@jest/globals';
import { AdmissionActivation, compileAdmissionExpression, type AdmissionDeclarations } from '../../src/api/cel/admission.js';
import { estimate, PER_CALL_LIMIT, type SizeOracle, type Typed } from '../../src/api/cel/cost.js';

const declarations: AdmissionDeclarations = { params: false, authorizer: false, variables: true };

/** The walk over an expression with every input the same size, noting whether a size went into the cost. */
function dependence(source: string, size: number): { cost: number; sizeDependent: boolean } {
  const compiled = compileAdmissionExpression(source, declarations);
  if (compiled.error !== undefined) throw new Error(compiled.error);
  const oracle: SizeOracle = { size: () => size, sizeDependent: false };
  const object: Typed = { schema: { type: 'object', properties: new Proxy({}, { get: () => ({ type: 'string' }) }) }, size };
  const scope = new Map<string, Typed>([['object', object]]);
  const { cost } = estimate(compiled.program!.ast as never, scope, oracle);
  return { cost, sizeDependent: oracle.sizeDependent! };
}

describe('CEL cost: whether an expression costs the same for every input', () => {
  test.each([
    ['object.spec.containers.size() < 10', false],
    ['has(object.metadata.labels)', false],
    ['size(object.spec.containers) <= 3', false],
    ['1 + 2 == 3', false],
    ['object.metadata.name == "web"', true],
    ['"web" == object.metadata.name', false],
    ['object.spec.containers.all(c, c.image != "")', true],
    ['"a" in object.metadata.labels', true],
    ['object.metadata.name.startsWith("web")', true],
    ['object.metadata.name.matches("^web")', true],
    ['string(object.spec.replicas) != ""', true],
    ['(object.spec.replicas > 2 ? object.metadata.name : "x") == "x"', true],
  ])('%s: depends on sizes %s', (source, dependent) => {
    const small = dependence(source, 1);
    const big = dependence(source, 100_000);
    expect(small.sizeDependent).toBe(dependent);
    expect(big.sizeDependent).toBe(dependent);
    // The claim the cache rests on: an expression found independent costs the same at any size.
    if (!dependent) expect(big.cost).toBe(small.cost);
  });
});

describe('CEL cost on requests: kept only for size-independent expressions', () => {
  const labels = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, `v${i}`]));
  const input = (n: number) => ({ object: { metadata: { name: 'web', labels: labels(n) } }, request: { operation: 'CREATE' } });

  test('a size-dependent expression is costed on each request: small admitted, then big cancelled, then small again', () => {
    const compiled = compileAdmissionExpression('object.metadata.labels.all(a, object.metadata.labels.all(b, a == b || a != b))', declarations);
    const run = (n: number) => new AdmissionActivation(input(n)).run(compiled) as { value?: unknown; error?: string };
    expect(run(3)).toEqual({ value: true });
    expect(run(2000).error).toContain('operation cancelled: actual cost limit exceeded');
    expect(run(3)).toEqual({ value: true });
  });

  test('a size-independent expression gives the same results and spends the same budget on any input', () => {
    const compiled = compileAdmissionExpression('object.metadata.labels.size() < 10', declarations);
    const spent = (n: number) => {
      const activation = new AdmissionActivation(input(n));
      const before = activation.budget;
      const result = activation.run(compiled) as { value?: unknown };
      return { value: result.value, spent: before - activation.budget };
    };
    const first = spent(3);
    expect(first.value).toBe(true);
    expect(first.spent).toBeGreaterThan(0);
    expect(first.spent).toBeLessThan(PER_CALL_LIMIT);
    expect(spent(2000)).toEqual({ value: false, spent: first.spent });
    expect(spent(3)).toEqual(first);
  });
});
