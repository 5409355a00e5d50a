/**
 * Static token authentication (`--token-auth-file`), as upstream's tokenfile authenticator: a CSV
 * file of `token,user,uid[,"group1,group2,..."]`, with CSV quoting. A malformed file stops the
 * server at start with the file and line named; an empty token is skipped and a duplicate one
 * replaces the earlier line, each with a warning (upstream's texts).
 */
import {readFile} from 'node:fs/promises';
import {parse} from 'csv-parse/sync';
import type {UserInfo} from './user.js';

export class TokenFileError extends Error {
  override name = 'TokenFileError';
}

export interface TokenTable {
  tokens: Map<string, UserInfo>;
  warnings: string[];
}

interface RecordWithInfo {
  record: string[];
  info: {lines: number};
}

export function parseTokenFile(text: string, path: string): TokenTable {
  let rows: RecordWithInfo[];
  try {
    // Go's encoding/csv settings upstream uses: any number of fields, leading spaces trimmed.
    rows = parse(text, {relax_column_count: true, ltrim: true, skip_empty_lines: true, info: true}) as unknown as RecordWithInfo[];
  } catch (error) {
    const line = (error as {lines?: number}).lines;
    throw new TokenFileError(`token file '${path}'${line ? ` line ${line}` : ''}: ${(error as Error).message}`);
  }
  const tokens = new Map<string, UserInfo>();
  const warnings: string[] = [];
  rows.forEach(({record, info}, index) => {
    const recordNumber = index + 1;
    if (record.length < 3) {
      throw new TokenFileError(`token file '${path}' must have at least 3 columns (token, user name, user uid), found ${record.length} on line ${info.lines}`);
    }
    const [token, name, uid, groups] = record;
    if (token === '') {
      warnings.push(`empty token has been found in token file '${path}', record number '${recordNumber}'`);
      return;
    }
    if (tokens.has(token)) warnings.push(`duplicate token has been found in token file '${path}', record number '${recordNumber}'`);
    // Groups are split on commas exactly as upstream (no trimming); an empty column means none.
    tokens.set(token, {name, uid, groups: groups ? groups.split(',') : []});
  });
  return {tokens, warnings};
}

export async function loadTokenFile(path: string): Promise<TokenTable> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new TokenFileError(`token file '${path}': ${(error as Error).message}`);
  }
  return parseTokenFile(text, path);
}

/**
 * The bearer token of an `Authorization` header, as upstream's bearertoken authenticator reads it:
 * `Bearer <token>` (scheme case-insensitive); undefined when there is none.
 */
export function bearerToken(authorization: string): string | undefined {
  const parts = authorization.trim().split(' ');
  if (parts.length < 2 || parts[0].toLowerCase() !== 'bearer') return undefined;
  // `Bearer  token` (two spaces) gives an empty second part: upstream treats that as no token.
  return parts[1] === '' ? undefined : parts[1];
}
