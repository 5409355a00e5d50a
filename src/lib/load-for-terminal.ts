/**
 * Loads a module that draws with Ink, once the caller has checked that it writes to a terminal.
 *
 * Ink decides when it is first imported whether it runs "in CI" (a `CI` or `CONTINUOUS_INTEGRATION`
 * variable is set, see is-in-ci). There it draws nothing until it unmounts: a dashboard would stay
 * blank and an `orch patch -i` question would never be seen. orch mounts Ink only on a TTY, so the
 * terminal decides, not the variable: both are hidden while Ink loads and put back at once. (chalk
 * reads `CI` at import too, to turn colors off; hiding it keeps the colors a terminal can show.)
 */
const CI_VARIABLES = ['CI', 'CONTINUOUS_INTEGRATION'] as const;

export async function loadForTerminal<T>(load: () => Promise<T>, env: NodeJS.ProcessEnv = process.env): Promise<T> {
  const saved = new Map<string, string>();
  for (const name of CI_VARIABLES) {
    const value = env[name];
    if (value !== undefined) {
      saved.set(name, value);
      delete env[name];
    }
  }
  try {
    return await load();
  } finally {
    for (const [name, value] of saved) env[name] = value;
  }
}
