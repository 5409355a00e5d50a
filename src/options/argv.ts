/**
 * Go's pflag accepts forms oclif does not: `--flag=false` for booleans, and options whose value is
 * optional (`--dry-run` alone means `unchanged`, `--version` alone means `true`). This pure step
 * rewrites those forms into ones oclif parses, so users can type what they type for kubectl.
 */
import type {OptionSpec, OptionTable} from './spec.js';

/** Types whose value may be left out; the value then is this text. */
const OPTIONAL_VALUE: Partial<Record<OptionSpec['type'], string>> = {
  dryRun: 'unchanged',
  version: 'true',
};

function findSpec(table: OptionTable, token: string): OptionSpec | undefined {
  if (token.startsWith('--')) {
    const name = token.slice(2);
    return table.find((o) => o.name === name);
  }
  if (token.length === 2 && token.startsWith('-')) {
    return table.find((o) => o.short === token[1]);
  }
  return undefined;
}

export class ArgvError extends Error {}

export function normalizeArgv(table: OptionTable, argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') {
      out.push(...argv.slice(i));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      out.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const spec = findSpec(table, flag);
    if (!spec) {
      out.push(arg);
      continue;
    }
    const long = `--${spec.name}`;
    if (spec.type === 'bool') {
      if (eq === -1) {
        out.push(long);
        continue;
      }
      const value = arg.slice(eq + 1);
      const truth = parseGoBool(value);
      if (truth === undefined) {
        throw new ArgvError(
          `invalid value "${value}" for ${long}: not a boolean; expected ${long}, ${long}=true or ${long}=false`,
        );
      }
      out.push(truth ? long : `--no-${spec.name}`);
      continue;
    }
    const implied = OPTIONAL_VALUE[spec.type];
    if (implied !== undefined) {
      out.push(eq === -1 ? `${long}=${implied}` : `${long}=${arg.slice(eq + 1)}`);
      continue;
    }
    out.push(arg);
  }
  return out;
}

/** Go's strconv.ParseBool. */
export function parseGoBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(text)) return false;
  return undefined;
}
