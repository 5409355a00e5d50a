/**
 * `orch fleet` in the foreground: the client from the orchconfig, the fleet's settings from the
 * options (validated here, naming the option), then the fleet until SIGTERM/SIGINT, with a progress
 * line every 10 seconds.
 */
import {resolveClientConfig} from '../../client/orchconfig.js';
import {RestClient} from '../../client/rest-client.js';
import {parseLabelSelector} from '../../api/selectors.js';
import {UserError} from '../../lib/errors.js';
import {klog} from '../../lib/klog.js';
import {reportedVersion, versionInfo} from '../../lib/version.js';
import type {DurationValue, KeyValueMap, Quantity, Taint} from '../../options/types.js';
import {Fleet} from '../../daemons/fleet/fleet.js';
import {applyHeapGrowth} from '../../lib/heap-growth.js';
import type {FleetSettings} from '../../daemons/fleet/nodes.js';
import type {LabelRequirement} from '../../api/selectors.js';

const log = klog('cmd/fleet.ts');
const PROGRESS_EVERY_MS = 10_000;

/** The fleet's settings from the option values; throws UserError naming the option at fault. */
export function fleetSettings(v: Readonly<Record<string, unknown>>, version: string): {settings: FleetSettings; failPods?: LabelRequirement[]; completeAfterMs?: number} {
  const name = v.name as string;
  // The name is a node-name prefix and a label value: both must stay valid with `-<index>` appended.
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(name) || name.length > 50) {
    throw new UserError(`--name=${name}: must be lowercase letters, digits and '-', starting and ending with a letter or digit, at most 50 characters`);
  }
  let failPods: LabelRequirement[] | undefined;
  const selector = v['fail-pods-matching'] as string | undefined;
  if (selector !== undefined) {
    try {
      failPods = parseLabelSelector(selector);
    } catch (error) {
      throw new UserError(`--fail-pods-matching=${selector}: ${(error as Error).message}`);
    }
    if (failPods.length === 0) throw new UserError('--fail-pods-matching: an empty selector would fail every pod; give a label selector such as app=flaky');
  }
  const updateMs = (v['node-status-update-frequency'] as DurationValue).ms;
  if (updateMs <= 0) throw new UserError(`--node-status-update-frequency=${(v['node-status-update-frequency'] as DurationValue).text}: must be greater than 0`);
  // 0: pods that run to completion run until deleted, as before this option.
  const completeMs = (v['complete-pods-after'] as DurationValue).ms;
  if (completeMs < 0) throw new UserError(`--complete-pods-after=${(v['complete-pods-after'] as DurationValue).text}: must not be negative`);
  return {
    completeAfterMs: completeMs > 0 ? completeMs : undefined,
    settings: {
      name,
      prefix: name,
      nodes: v.nodes as number,
      capacity: {cpu: (v['node-cpu'] as Quantity).text, memory: (v['node-memory'] as Quantity).text, pods: String(v['max-pods'] as number)},
      nodeLabels: (v['node-labels'] as KeyValueMap | undefined) ?? {},
      taints: (v['register-with-taints'] as Taint[] | undefined) ?? [],
      version,
      nodeStatusUpdateFrequencyMs: updateMs,
      nodeStatusReportFrequencyMs: (v['node-status-report-frequency'] as DurationValue).ms,
      nodeLeaseDurationSeconds: v['node-lease-duration-seconds'] as number,
    },
    failPods,
  };
}

export async function runFleet(v: Readonly<Record<string, unknown>>): Promise<void> {
  applyHeapGrowth();
  const version = reportedVersion(versionInfo()).gitVersion.replace(/^v/, '');
  const {settings, failPods, completeAfterMs} = fleetSettings(v, version);
  const client = new RestClient({
    config: await resolveClientConfig({orchconfig: v.orchconfig as string | undefined}),
    qps: v.qps as number,
    burst: v.burst as number,
    userAgent: `orch-fleet/v${version}`,
    // Thousands of lease loops share these: a slow server sees a queue, not thousands of connections.
    maxSockets: 2 * (v.workers as number) + 2,
  });
  const fleet = new Fleet({client, settings, failPods, completeAfterMs, workers: v.workers as number, log: (m) => log.info(m)});
  log.info('Registering nodes', 'count', settings.nodes, 'name', settings.name);
  const started = Date.now();
  const stopping = new Promise<void>((resolve) => {
    process.once('SIGTERM', resolve);
    process.once('SIGINT', resolve);
  });
  await Promise.race([fleet.start(), stopping]);
  const s = fleet.snapshot();
  log.info('Nodes registered', 'registered', s.registered, 'seconds', ((Date.now() - started) / 1000).toFixed(1));
  const progress = setInterval(() => {
    const c = fleet.snapshot();
    log.info('Fleet', 'nodes', c.registered, 'leaseRenewals', c.leaseRenewals, 'statusPosts', c.statusPosts, 'podsRunning', c.podsRunning, 'podsFailed', c.podsFailed, 'podsSucceeded', c.podsSucceeded, 'podsDeleted', c.podsDeleted, 'errors', c.errors, 'lastError', c.lastError ?? '');
  }, PROGRESS_EVERY_MS);
  await stopping;
  clearInterval(progress);
  await fleet.stop();
  client.close();
  log.info('Stopped');
}
