/**
 * The check of --cors-allowed-origins, apart from the CORS filter (src/daemons/apiserver/filters/cors.ts)
 * so the option rules, which `orch patch`'s entry loads, stay free of daemon code. Pure.
 */

/**
 * Upstream's validateCorsAllowedOriginList (CVE-2022-1996): each pattern must compile and pin the
 * host at both ends, at its start with `^` or `//` and at its end with `$` or `:`, so that
 * `example.com` cannot be matched by `example.com.attacker.net`. Returns one message per bad pattern.
 */
export function corsPatternProblems(patterns: readonly string[]): string[] {
  const problems: string[] = [];
  for (const pattern of patterns) {
    if (pattern === '') {
      problems.push('--cors-allowed-origins: empty value (each entry is a regular expression such as //example\\.com(:|$))');
      continue;
    }
    try {
      new RegExp(pattern);
    } catch (error) {
      problems.push(`--cors-allowed-origins: ${JSON.stringify(pattern)} is not a valid regular expression: ${(error as Error).message}`);
      continue;
    }
    const pinStart = pattern.includes('^') || pattern.includes('//');
    const pinEnd = pattern.includes('$') || pattern.includes(':');
    if (!pinStart || !pinEnd) {
      problems.push(
        `--cors-allowed-origins: ${JSON.stringify(pattern)} does not pin to the start and end of the host in the origin header ` +
          '(start it with ^ or //, end it with $ or (:|$), e.g. //example\\.com(:|$))',
      );
    }
  }
  return problems;
}
