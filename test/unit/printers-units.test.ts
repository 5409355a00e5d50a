/** Focused tests of the printers beyond the kubectl corpus: KYAML, resolution, value formatting. */
import { describe, expect, it } from '@jest/globals';
import { parse as parseYaml } from 'yaml';
import { goJsonMarshal } from '../../src/printers/gojson.js';
import { formatFloatG } from '../../src/printers/govalues.js';
import { createPrinter, omitManagedFields, resolvePrinter } from '../../src/printers/index.js';
import { toKyaml } from '../../src/printers/kyaml.js';
import { toKubectlYaml } from '../../src/printers/yaml.js';

const pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web', labels: { app: 'web', 'app.kubernetes.io/name': 'web' }, managedFields: [{ manager: 'x' }] },
  spec: { containers: [{ name: 'a', image: 'nginx', ports: [{ containerPort: 80 }] }, { name: 'b', image: 'busybox' }], tolerations: [] },
};

const tricky = {
  yes: 'yes', no: 'NO', empty: '', num: '1.0', oct: '0755', date: '2024-01-01', colon: 'a: b', hash: 'a #b',
  lead: ' x', quote: 'say "hi"', backslash: 'C:\\dir', tab: 'a\tb', multi: 'line1\n  line2\nline3\n', emoji: 'x😀', 'key with space': 1,
  '1': true, 'a.b/c-d_e': null, nested: { list: [[], {}, [1, 'two']], n: -1.5e-7 },
};

function print(output: string, obj: unknown, options = {}) {
  const r = createPrinter(output, options, () => {
    throw Object.assign(new Error('missing'), { code: 'ENOENT' });
  });
  if ('error' in r) throw new Error(r.error);
  return r.printer.print(obj);
}

describe('kyaml', () => {
  it('prints the KYAML layout: header, flow maps, cuddled lists of maps, quoted strings', () => {
    expect(toKyaml(omitManagedFields(pod))).toBe(
      [
        '---',
        '{',
        '  apiVersion: "v1",',
        '  kind: "Pod",',
        '  metadata: {',
        '    labels: {',
        '      app: "web",',
        '      app.kubernetes.io/name: "web",',
        '    },',
        '    name: "web",',
        '  },',
        '  spec: {',
        '    containers: [{',
        '      image: "nginx",',
        '      name: "a",',
        '      ports: [{',
        '        containerPort: 80,',
        '      }],',
        '    }, {',
        '      image: "busybox",',
        '      name: "b",',
        '    }],',
        '    tolerations: [],',
        '  },',
        '}',
        '',
      ].join('\n'),
    );
  });

  it('quotes keys only when a YAML parser could misread them', () => {
    const out = toKyaml({ yes: 1, plain_key: 2, 'a.b/c-d': 3, '1': 4, 'has space': 5, '-lead': 6 });
    expect(out).toContain('  "yes": 1,');
    expect(out).toContain('  plain_key: 2,');
    expect(out).toContain('  a.b/c-d: 3,');
    expect(out).toContain('  "1": 4,');
    expect(out).toContain('  "has space": 5,');
    expect(out).toContain('  "-lead": 6,');
  });

  it('folds multi-line strings with escaped newlines and keeps leading whitespace', () => {
    expect(toKyaml({ s: 'a\n  b\n' })).toBe('---\n{\n  s: "\\\n     a\\n\\\n    \\  b\\n\\\n    ",\n}\n');
  });

  it.each([
    ['pod', pod],
    ['tricky strings', tricky],
    ['scalars in lists', { l: ['a', 1, true, null, ['x'], { k: 'v' }] }],
  ])('round-trips through a YAML parser: %s', (_n, obj) => {
    expect(parseYaml(toKyaml(obj))).toEqual(obj);
  });
});

describe('yaml', () => {
  it.each([
    ['pod', pod],
    ['tricky strings', tricky],
    ['long strings', { a: 'word '.repeat(40).trim(), b: 'yes ' + 'word '.repeat(40).trim(), c: 'x'.repeat(200) }],
  ])('round-trips through a YAML parser: %s', (_n, obj) => {
    expect(parseYaml(toKubectlYaml(obj), { version: '1.1' })).toEqual(obj);
  });

  it('writes block sequences under a key without indentation and quotes YAML 1.1 words', () => {
    expect(toKubectlYaml({ l: ['on', 'x'], m: { k: 'y' } })).toBe('l:\n- "on"\n- x\nm:\n  k: "y"\n');
  });
});

describe('resolvePrinter', () => {
  it('asks the caller to read template files, then builds the printer', () => {
    const r = resolvePrinter('go-template-file=/t.tmpl');
    expect(r.kind).toBe('needs-file');
    if (r.kind !== 'needs-file') return;
    expect(r.path).toBe('/t.tmpl');
    const done = r.withContent('{{.metadata.name}}');
    expect(done.kind === 'printer' && done.printer.print(pod).stdout).toBe('web');
    const failed = r.withReadError(Object.assign(new Error('x'), { code: 'ENOENT' }));
    expect(failed).toEqual({ kind: 'error', message: 'error reading --template /t.tmpl, open /t.tmpl: no such file or directory\n' });
  });

  it('uses go-template when only --template is given', () => {
    expect(print(undefined as unknown as string, pod, { template: '{{.kind}}' }).stdout).toBe('Pod');
  });

  it('prints `<kind>/<name> <operation>` without -o and the bare name with -o name', () => {
    expect(print(undefined as unknown as string, pod, { operation: 'patched' }).stdout).toBe('pod/web patched\n');
    expect(print('name', { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'd' } }, { operation: 'patched' }).stdout).toBe(
      'deployment.apps/d\n',
    );
  });

  it('rejects unknown formats listing kyaml among the allowed ones', () => {
    expect(resolvePrinter('xml')).toEqual({
      kind: 'error',
      message:
        'unable to match a printer suitable for the output format "xml", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,yaml',
    });
  });

  it('keeps managedFields only with showManagedFields, without mutating the object', () => {
    expect(print('json', pod).stdout).not.toContain('managedFields');
    expect(print('kyaml', pod, { showManagedFields: true }).stdout).toContain('managedFields');
    expect(pod.metadata.managedFields).toHaveLength(1);
  });

  it('fails like kubectl on objects without apiVersion and kind', () => {
    expect(print('yaml', { metadata: { name: 'x' } }).error).toBe(
      'missing apiVersion or kind; try GetObjectKind().SetGroupVersionKind() if you know the type',
    );
  });
});

describe('Go value formatting', () => {
  it.each([
    [1.5, '1.5'], [1000000.5, '1.0000005e+06'], [123456.5, '123456.5'], [0.0001, '0.0001'], [0.00001, '1e-05'],
    [1e21, '1e+21'], [-2.5e-10, '-2.5e-10'], [1e100, '1e+100'],
  ])('%%v of float64 %p is %s', (f, text) => {
    expect(formatFloatG(f)).toBe(text);
  });

  it('marshals JSON like Go: sorted keys, HTML-safe escapes, integers vs floats', () => {
    expect(goJsonMarshal({ b: '<&>\u2028', a: [1, 1.5, 1e21, null] })).toBe('{"a":[1,1.5,1e+21,null],"b":"\\u003c\\u0026\\u003e\\u2028"}');
  });
});
