/**
 * Choosing a daemon's name set (src/api/names.ts) before the daemon is built: `--names` when
 * given; otherwise the controller manager and the agent ask the API server which set it serves
 * (whether its discovery lists orch's or upstream's coordination group), so they follow a server
 * started with `--names kubernetes` without being told. Name-set-dependent option defaults
 * (`namesDefault`) are then filled in for the set chosen.
 */
import {NAME_SET_IDS, nameSet, selectNames, type NameSet, type NameSetId} from '../api/names.js';
import {applyNameSetDefaults, type ResolvedOptions} from '../options/resolve.js';
import type {OptionTable} from '../options/spec.js';
import {klog} from './klog.js';

const log = klog('lib/select-names.ts');

/** Which name set serves these API groups (the names of `/apis`), if either. */
export function nameSetFromGroups(groups: readonly string[]): NameSetId | undefined {
  return NAME_SET_IDS.find((id) => groups.includes(nameSet(id).groups.coordination));
}

export interface DiscoverOptions {
  /** The orchconfig of the daemon's client (`--orchconfig`), and `--master` when the daemon has it. */
  orchconfig: string;
  server?: string;
  /** How long to keep trying while the server is not up yet. */
  timeoutMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Asks the server's `/apis` which name set it uses; retries until `timeoutMs` (the server may be
 * starting too), then gives up with undefined, and the caller falls back to the default.
 */
export async function discoverNameSet(o: DiscoverOptions): Promise<NameSetId | undefined> {
  const [{resolveClientConfig}, {RestClient}] = await Promise.all([import('../client/orchconfig.js'), import('../client/rest-client.js')]);
  let client: InstanceType<typeof RestClient>;
  try {
    client = new RestClient({config: await resolveClientConfig({orchconfig: o.orchconfig, server: o.server})});
  } catch (error) {
    // No usable orchconfig yet (e.g. the agent bootstraps one): the daemon reports that itself.
    log.warning('Could not learn the name set from the API server; using orch\'s (give --names to choose)', 'err', error);
    return undefined;
  }
  const deadline = Date.now() + (o.timeoutMs ?? 30_000);
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  try {
    for (;;) {
      try {
        const list = await client.get<{groups?: {name?: string}[]}>('/apis');
        return nameSetFromGroups((list.groups ?? []).map((g) => g.name ?? ''));
      } catch (error) {
        if (Date.now() >= deadline) {
          log.warning('Could not learn the name set from the API server; using orch\'s (give --names to choose)', 'err', error);
          return undefined;
        }
        await sleep(1000);
      }
    }
  } finally {
    client.close();
  }
}

/**
 * Selects the process's name set: `--names`, else what `discover` finds, else orch's. Records the
 * choice in the options (so `--print-config` and the dashboard show it) and fills the
 * name-set-dependent defaults.
 */
export async function selectDaemonNames(table: OptionTable, options: ResolvedOptions, discover?: () => Promise<NameSetId | undefined>): Promise<NameSet> {
  let id = options.values.names as NameSetId | undefined;
  if (id === undefined && discover) {
    id = await discover();
    if (id) log.info('Using the name set the API server serves', 'names', id);
  }
  const n = selectNames(id ?? 'orch');
  log.v(1).info('Names in effect', 'names', n.id, 'domain', n.domain, 'systemNamespace', n.namespaces.system);
  options.values.names = n.id;
  applyNameSetDefaults(table, options, n);
  return n;
}
