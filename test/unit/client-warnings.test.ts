/** Server warnings: RFC 7234 `Warning` headers parsed as client-go does, and kubectl's writer. */
import {describe, expect, it} from '@jest/globals';
import {WarningWriter, parseWarningHeaders, warningsAsErrorsMessage} from '../../src/client/warnings.js';

describe('parseWarningHeaders', () => {
  it.each([
    ['one warning', ['299 - "deprecated field"'], [{code: 299, agent: '-', text: 'deprecated field'}], 0],
    ['escaped quote and backslash', ['299 - "a \\"b\\" c\\\\d"'], [{code: 299, agent: '-', text: 'a "b" c\\d'}], 0],
    ['several in one header', ['299 - "one", 299 - "two"'], [{code: 299, agent: '-', text: 'one'}, {code: 299, agent: '-', text: 'two'}], 0],
    ['with a date', ['299 orch "x" "Sat, 01 Jan 2000 00:00:00 GMT", 299 - "y"'], [{code: 299, agent: 'orch', text: 'x'}, {code: 299, agent: '-', text: 'y'}], 0],
    ['several headers', ['299 - "a"', '199 - "b"'], [{code: 299, agent: '-', text: 'a'}, {code: 199, agent: '-', text: 'b'}], 0],
    ['too few segments', ['299 -'], [], 1],
    ['bad code', ['29 - "x"'], [], 1],
    ['unquoted text', ['299 - text'], [], 1],
    ['unterminated text', ['299 - "text'], [], 1],
    ['garbage after a good one', ['299 - "ok" junk'], [], 1],
  ])('%s', (_name, headers, warnings, errorCount) => {
    const parsed = parseWarningHeaders(headers);
    expect(parsed.warnings).toEqual(warnings);
    expect(parsed.errors).toHaveLength(errorCount);
  });
});

describe('WarningWriter', () => {
  it('writes each distinct 299 text once as "Warning: ..." and counts them', () => {
    let out = '';
    const writer = new WarningWriter((text) => (out += text));
    for (const [code, text] of [[299, 'a'], [299, 'a'], [199, 'cache'], [299, ''], [299, 'b']] as const) {
      writer.handleWarning({code, agent: '-', text});
    }
    expect(out).toBe('Warning: a\nWarning: b\n');
    expect(writer.written).toBe(2);
  });

  it('colors the label for a terminal', () => {
    let out = '';
    new WarningWriter((text) => (out += text), {color: true}).handleWarning({code: 299, agent: '-', text: 'x'});
    expect(out).toBe('\u001b[33;1mWarning:\u001b[0m x\n');
  });
});

describe('warningsAsErrorsMessage', () => {
  it.each([
    [0, undefined],
    [1, '1 warning received'],
    [3, '3 warnings received'],
  ])('%d warnings', (count, message) => expect(warningsAsErrorsMessage(count)).toBe(message));
});
