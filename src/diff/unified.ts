/**
 * A unified diff of an object before and after a change, over its YAML form (as `kubectl diff`
 * shows objects), colored for a terminal.
 */
import {createTwoFilesPatch} from 'diff';

const RED = '\u001b[31m';
const GREEN = '\u001b[32m';
const CYAN = '\u001b[36m';
const BOLD = '\u001b[1m';
const RESET = '\u001b[0m';

export function unifiedDiff(name: string, beforeText: string, afterText: string): string {
  if (beforeText === afterText) return '';
  const patch = createTwoFilesPatch(`a/${name}`, `b/${name}`, beforeText, afterText, undefined, undefined, {context: 3});
  // jsdiff starts with an "Index:"-less header of its own ("===..."); keep the git-style lines only.
  return patch
    .split('\n')
    .filter((line) => !line.startsWith('===='))
    .join('\n');
}

export function colorizeDiff(diff: string): string {
  return diff
    .split('\n')
    .map((line) => {
      if (line.startsWith('+++') || line.startsWith('---')) return `${BOLD}${line}${RESET}`;
      if (line.startsWith('@@')) return `${CYAN}${line}${RESET}`;
      if (line.startsWith('+')) return `${GREEN}${line}${RESET}`;
      if (line.startsWith('-')) return `${RED}${line}${RESET}`;
      return line;
    })
    .join('\n');
}
