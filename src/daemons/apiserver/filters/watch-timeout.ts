/**
 * How long a watch stays open (upstream handlers/get.go): the client's `timeoutSeconds` when
 * positive, otherwise a random duration between --min-request-timeout and twice that, so that
 * watches opened together do not all end (and re-list) together. 0 means no timeout.
 */
export function watchTimeoutMs(
  timeoutSeconds: number | undefined,
  minRequestTimeoutSeconds: number,
  random: () => number = Math.random,
): number {
  if (timeoutSeconds !== undefined && timeoutSeconds > 0) return timeoutSeconds * 1000;
  if (minRequestTimeoutSeconds > 0) return minRequestTimeoutSeconds * 1000 * (1 + random());
  return 0;
}
