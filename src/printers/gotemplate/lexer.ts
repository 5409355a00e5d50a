/**
 * Tokenizer of Go's text/template (text/template/parse/lex.go), with the default `{{ }}` delimiters,
 * trim markers (`{{- `, ` -}}`) and comments.
 *
 * Why hand-written: kubectl users' templates rely on Go semantics that no npm template engine has
 * (Go's error texts and positions, `<no value>`, missingkey=error, fmt's %v of maps and floats,
 * int64/float64 comparisons, kubectl's `exists`/`base64decode`), so lexer, parser and executor
 * here follow Go's text/template closely.
 */

export type ItemType =
  | 'text' | 'leftDelim' | 'rightDelim' | 'space' | 'field' | 'identifier' | 'variable' | 'string'
  | 'rawString' | 'char' | 'number' | 'bool' | 'nil' | 'dot' | 'pipe' | 'leftParen' | 'rightParen'
  | 'declare' | 'assign' | 'comma' | 'keyword' | 'comment' | 'eof' | 'error';

export interface Item {
  type: ItemType;
  val: string;
  pos: number;
  line: number;
}

const KEYWORDS = new Set(['block', 'break', 'continue', 'define', 'else', 'end', 'if', 'range', 'template', 'with']);

const isSpace = (c: string) => c === ' ' || c === '\t' || c === '\r' || c === '\n';
const isAlphaNumeric = (c: string) => c === '_' || /^[\p{L}\p{Nd}]$/u.test(c);

/** Lexes the whole template up front; an error item ends the stream. */
export function lex(input: string): Item[] {
  const items: Item[] = [];
  let pos = 0;
  let start = 0;
  let line = 1;
  let startLine = 1;
  let parenDepth = 0;

  const emit = (type: ItemType, val = input.slice(start, pos)) => {
    items.push({ type, val, pos: start, line: startLine });
    start = pos;
    startLine = line;
  };
  const advance = (n: number) => {
    for (let i = 0; i < n; i++) if (input[pos + i] === '\n') line++;
    pos += n;
  };
  const ignore = () => {
    start = pos;
    startLine = line;
  };
  const error = (msg: string) => {
    items.push({ type: 'error', val: msg, pos: start, line: startLine });
  };
  const rightTrimAt = (p: number) => isSpace(input[p] ?? '') && input[p + 1] === '-' && input.startsWith('}}', p + 2);

  // Returns false when lexing must stop (EOF or error).
  const lexText = (): boolean => {
    const x = input.indexOf('{{', pos);
    if (x < 0) {
      pos = input.length;
      if (pos > start) emit('text');
      items.push({ type: 'eof', val: '', pos, line });
      return false;
    }
    let textEnd = x;
    const trimLeft = input[x + 2] === '-' && isSpace(input[x + 3] ?? '');
    if (trimLeft) while (textEnd > start && isSpace(input[textEnd - 1])) textEnd--;
    advance(x - pos);
    if (textEnd > start) {
      items.push({ type: 'text', val: input.slice(start, textEnd), pos: start, line: startLine });
    }
    start = pos;
    startLine = line;
    return lexLeftDelim(trimLeft);
  };

  const lexLeftDelim = (trimLeft: boolean): boolean => {
    advance(2);
    const afterMarker = trimLeft ? 2 : 0;
    if (input.startsWith('/*', pos + afterMarker)) {
      advance(afterMarker);
      ignore();
      return lexComment();
    }
    emit('leftDelim', '{{');
    advance(afterMarker);
    ignore();
    parenDepth = 0;
    return lexInsideAction();
  };

  const lexComment = (): boolean => {
    const x = input.indexOf('*/', pos + 2);
    if (x < 0) {
      error('unclosed comment');
      return false;
    }
    advance(x + 2 - pos);
    let trimRight = false;
    if (rightTrimAt(pos)) {
      trimRight = true;
      advance(2);
    } else if (!input.startsWith('}}', pos)) {
      error('comment ends before closing delimiter');
      return false;
    }
    emit('comment');
    advance(2);
    ignore();
    if (trimRight) skipLeadingSpace();
    return true;
  };

  const skipLeadingSpace = () => {
    while (pos < input.length && isSpace(input[pos])) advance(1);
    ignore();
  };

  const lexRightDelim = (trimRight: boolean): boolean => {
    if (trimRight) {
      advance(2);
      ignore();
    }
    advance(2);
    emit('rightDelim');
    if (trimRight) skipLeadingSpace();
    return true;
  };

  const lexInsideAction = (): boolean => {
    for (;;) {
      if (rightTrimAt(pos) && parenDepth === 0) {
        advance(1);
        ignore();
        return lexRightDelim(true);
      }
      if (input.startsWith('}}', pos)) {
        if (parenDepth > 0) {
          error('unclosed left paren');
          return false;
        }
        return lexRightDelim(false);
      }
      if (pos >= input.length) {
        error('unclosed action');
        return false;
      }
      const r = input[pos];
      advance(1);
      if (isSpace(r)) {
        while (pos < input.length && isSpace(input[pos]) && !rightTrimAt(pos)) advance(1);
        emit('space');
      } else if (r === '=') {
        emit('assign');
      } else if (r === ':') {
        if (input[pos] !== '=') {
          error('expected :=');
          return false;
        }
        advance(1);
        emit('declare');
      } else if (r === '|') {
        emit('pipe');
      } else if (r === '"') {
        for (;;) {
          const c = input[pos];
          if (c === undefined || c === '\n') {
            error('unterminated quoted string');
            return false;
          }
          advance(1);
          if (c === '\\') {
            if (input[pos] === undefined || input[pos] === '\n') {
              error('unterminated quoted string');
              return false;
            }
            advance(1);
          } else if (c === '"') break;
        }
        emit('string');
      } else if (r === '`') {
        const x = input.indexOf('`', pos);
        if (x < 0) {
          error('unterminated raw quoted string');
          return false;
        }
        advance(x + 1 - pos);
        emit('rawString');
      } else if (r === "'") {
        for (;;) {
          const c = input[pos];
          if (c === undefined || c === '\n') {
            error('unterminated character constant');
            return false;
          }
          advance(1);
          if (c === '\\') advance(1);
          else if (c === "'") break;
        }
        emit('char');
      } else if (r === '$') {
        while (pos < input.length && isAlphaNumeric(input[pos])) advance(1);
        emit('variable');
      } else if (r === '.') {
        if (/[0-9]/.test(input[pos] ?? '')) {
          pos--;
          if (!lexNumber()) return false;
        } else {
          while (pos < input.length && isAlphaNumeric(input[pos])) advance(1);
          if (pos - start === 1) emit('dot');
          else emit('field');
        }
      } else if (r === '+' || r === '-' || /[0-9]/.test(r)) {
        pos--;
        if (!lexNumber()) return false;
      } else if (isAlphaNumeric(r)) {
        while (pos < input.length && isAlphaNumeric(input[pos])) advance(1);
        const word = input.slice(start, pos);
        if (KEYWORDS.has(word)) emit('keyword');
        else if (word === 'true' || word === 'false') emit('bool');
        else if (word === 'nil') emit('nil');
        else emit('identifier');
      } else if (r === '(') {
        parenDepth++;
        emit('leftParen');
      } else if (r === ')') {
        parenDepth--;
        if (parenDepth < 0) {
          error('unexpected right paren');
          return false;
        }
        emit('rightParen');
      } else if (r === ',') {
        emit('comma');
      } else {
        error(`unrecognized character in action: ${unicodeVerb(r)}`);
        return false;
      }
    }
  };

  const lexNumber = (): boolean => {
    const m = /^[+-]?(0[xX][0-9a-fA-F_]*\.?[0-9a-fA-F_]*([pP][+-]?[0-9_]+)?|0[bB][01_]+|0[oO][0-7_]+|[0-9_]*\.?[0-9_]*([eE][+-]?[0-9_]+)?)(i)?/.exec(
      input.slice(pos),
    );
    const text = m ? m[0] : '';
    advance(text.length);
    if (text === '' || isAlphaNumeric(input[pos] ?? '')) {
      advance(input[pos] !== undefined ? 1 : 0);
      error(`bad number syntax: "${input.slice(start, pos)}"`);
      return false;
    }
    emit('number');
    return true;
  };

  for (;;) {
    if (!lexText()) break;
    const last = items[items.length - 1];
    if (last.type === 'error') break;
  }
  return items;
}

function unicodeVerb(r: string): string {
  const cp = r.codePointAt(0)!;
  return `U+${cp.toString(16).toUpperCase().padStart(4, '0')} '${r}'`;
}
