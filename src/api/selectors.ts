/**
 * Label and field selectors: parsing upstream's string syntax (apimachinery/pkg/labels/selector.go,
 * pkg/fields/selector.go) and matching. Hand-written because the grammar is Kubernetes-specific
 * (set-based `in`/`notin`, existence, `!key`, escaping in field selectors) and no npm library
 * implements it faithfully.
 */

export type LabelOperator = 'in' | 'notin' | 'exists' | '!' | '=' | '==' | '!=' | 'gt' | 'lt';

export interface LabelRequirement {
  key: string;
  operator: LabelOperator;
  values: string[];
}

export class SelectorParseError extends Error {}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const NAME_PART = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A label key: optional DNS-subdomain prefix and `/`, then a name of at most 63 characters. */
export function labelKeyProblem(key: string): string | undefined {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    return `prefix part must be a lowercase RFC 1123 subdomain`;
  }
  if (name.length === 0) return 'name part must be non-empty';
  if (name.length > 63) return 'name part must be no more than 63 characters';
  if (!NAME_PART.test(name)) {
    return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

export function labelValueProblem(value: string): string | undefined {
  if (value.length > 63) return 'must be no more than 63 characters';
  if (!LABEL_VALUE.test(value)) {
    return "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
  }
  return undefined;
}

type Token = { kind: 'id' | 'op' | '(' | ')' | ',' | '!' | 'end'; text: string };

const OPERATOR_CHARS = new Set(['=', '!', '<', '>']);

/** Tokenizes like upstream's lexer: identifiers run until whitespace or a special character. */
function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i]!;
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (c === '(' || c === ')' || c === ',') {
      tokens.push({ kind: c, text: c });
      i++;
      continue;
    }
    if (OPERATOR_CHARS.has(c)) {
      let j = i;
      while (j < input.length && OPERATOR_CHARS.has(input[j]!)) j++;
      const text = input.slice(i, j);
      tokens.push(text === '!' ? { kind: '!', text } : { kind: 'op', text });
      i = j;
      continue;
    }
    let j = i;
    while (j < input.length && !/\s/.test(input[j]!) && !'(),'.includes(input[j]!) && !OPERATOR_CHARS.has(input[j]!)) j++;
    tokens.push({ kind: 'id', text: input.slice(i, j) });
    i = j;
  }
  tokens.push({ kind: 'end', text: '' });
  return tokens;
}

/** Parses a label selector string (`app=web,tier!=db,env in (a,b),!legacy,has`). Empty: matches everything. */
export function parseLabelSelector(input: string): LabelRequirement[] {
  const tokens = tokenize(input);
  let pos = 0;
  const peek = () => tokens[pos]!;
  const next = () => tokens[pos++]!;
  const fail = (message: string): never => {
    throw new SelectorParseError(`unable to parse requirement: ${message}`);
  };
  const requirements: LabelRequirement[] = [];
  if (peek().kind === 'end') return requirements;
  for (;;) {
    let negated = false;
    if (peek().kind === '!') {
      next();
      negated = true;
    }
    const keyToken = next();
    if (keyToken.kind !== 'id') fail(`found '${keyToken.text}', expected: identifier`);
    const key = keyToken.text;
    const keyProblem = labelKeyProblem(key);
    if (keyProblem) fail(`invalid label key "${key}": ${keyProblem}`);
    const after = peek();
    if (negated || after.kind === ',' || after.kind === 'end') {
      requirements.push({ key, operator: negated ? '!' : 'exists', values: [] });
    } else {
      const opToken = next();
      let operator: LabelOperator;
      if (opToken.kind === 'op' && ['=', '==', '!='].includes(opToken.text)) operator = opToken.text as LabelOperator;
      else if (opToken.kind === 'op' && opToken.text === '>') operator = 'gt';
      else if (opToken.kind === 'op' && opToken.text === '<') operator = 'lt';
      else if (opToken.kind === 'id' && (opToken.text === 'in' || opToken.text === 'notin')) operator = opToken.text;
      else return fail(`found '${opToken.text}', expected: in, notin, =, ==, !=, gt, lt`);
      const values: string[] = [];
      if (operator === 'in' || operator === 'notin') {
        if (next().kind !== '(') fail(`found '${tokens[pos - 1]!.text}', expected: '('`);
        for (;;) {
          const t = peek();
          if (t.kind === 'id') {
            values.push(next().text);
          } else if (t.kind === ',' || t.kind === ')') {
            values.push('');
          } else fail(`found '${t.text}', expected: ',', ')' or identifier`);
          const sep = next();
          if (sep.kind === ')') break;
          if (sep.kind !== ',') fail(`found '${sep.text}', expected: ',' or ')'`);
        }
      } else {
        const t = peek();
        if (t.kind === 'id') values.push(next().text);
        else if (t.kind === ',' || t.kind === 'end') values.push('');
        else fail(`found '${t.text}', expected: identifier`);
      }
      for (const value of values) {
        if (operator === 'gt' || operator === 'lt') {
          if (!/^-?\d+$/.test(value)) fail(`for 'Gt', 'Lt' operators, the value must be an integer`);
        } else {
          const problem = labelValueProblem(value);
          if (problem) fail(`invalid label value: "${value}": at key: "${key}": ${problem}`);
        }
      }
      requirements.push({ key, operator, values });
    }
    const sep = next();
    if (sep.kind === 'end') break;
    if (sep.kind !== ',') fail(`found '${sep.text}', expected: ',' or 'end of string'`);
  }
  return requirements;
}

export function matchesLabels(requirements: LabelRequirement[], labels: Record<string, string> | undefined): boolean {
  const set = labels ?? {};
  return requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(set, r.key);
    const value = has ? set[r.key]! : undefined;
    switch (r.operator) {
      case 'exists':
        return has;
      case '!':
        return !has;
      case '=':
      case '==':
      case 'in':
        return has && r.values.includes(value!);
      case '!=':
      case 'notin':
        return !has || !r.values.includes(value!);
      case 'gt':
      case 'lt': {
        if (!has || !/^-?\d+$/.test(value!)) return false;
        const n = Number(value);
        const bound = Number(r.values[0]);
        return r.operator === 'gt' ? n > bound : n < bound;
      }
    }
  });
}

// ---------------------------------------------------------------------------------------------
// metav1.LabelSelector (matchLabels / matchExpressions) to its string form, as Scale.status.selector.

export interface LabelSelectorObject {
  matchLabels?: Record<string, string>;
  matchExpressions?: { key: string; operator: string; values?: string[] }[];
}

/** The canonical string form of a LabelSelector (requirements sorted by key, as upstream's String()). */
export function labelSelectorString(selector: LabelSelectorObject | undefined): string {
  if (!selector) return '';
  const parts: { key: string; text: string }[] = [];
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) parts.push({ key, text: `${key}=${value}` });
  for (const e of selector.matchExpressions ?? []) {
    const values = [...(e.values ?? [])].sort().join(',');
    const text =
      e.operator === 'In' ? `${e.key} in (${values})`
      : e.operator === 'NotIn' ? `${e.key} notin (${values})`
      : e.operator === 'Exists' ? e.key
      : e.operator === 'DoesNotExist' ? `!${e.key}`
      : `${e.key}`;
    parts.push({ key: e.key, text });
  }
  return parts.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)).map((p) => p.text).join(',');
}

/** A map selector (ReplicationController.spec.selector) as a string. */
export function mapSelectorString(selector: Record<string, string> | undefined): string {
  return Object.keys(selector ?? {}).sort().map((k) => `${k}=${selector![k]}`).join(',');
}

// ---------------------------------------------------------------------------------------------
// Field selectors.

export interface FieldRequirement {
  field: string;
  operator: '=' | '!=';
  value: string;
}

/** Splits on an unescaped separator; upstream escapes `\`, `,` and `=` with a backslash. */
function splitUnescaped(input: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i]!;
    if (c === '\\' && i + 1 < input.length) {
      current += c + input[i + 1];
      i++;
    } else if (c === separator) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

function unescapeFieldValue(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value[i]!;
    if (c === '\\') {
      const n = value[i + 1];
      if (n === undefined || !'\\,='.includes(n)) throw new SelectorParseError(`invalid field selector: invalid escape sequence: \\${n ?? ''}`);
      out += n;
      i++;
    } else if (c === ',' || c === '=') {
      throw new SelectorParseError(`invalid field selector: unescaped ${c} in value`);
    } else out += c;
  }
  return out;
}

/** Parses `metadata.name=foo,status.phase!=Running` (`==` is accepted as `=`). */
export function parseFieldSelector(input: string): FieldRequirement[] {
  if (input.trim() === '') return [];
  return splitUnescaped(input, ',').map((part) => {
    for (const op of ['!=', '==', '='] as const) {
      const at = part.indexOf(op);
      if (at >= 0) {
        const field = part.slice(0, at).trim();
        const value = unescapeFieldValue(part.slice(at + op.length));
        return { field, operator: op === '!=' ? '!=' : '=', value };
      }
    }
    throw new SelectorParseError(`invalid selector: '${input}'; can't understand '${part}'`);
  });
}

export function matchesFields(requirements: FieldRequirement[], fields: Record<string, string>): boolean {
  return requirements.every((r) => {
    const value = fields[r.field] ?? '';
    return r.operator === '=' ? value === r.value : value !== r.value;
  });
}
