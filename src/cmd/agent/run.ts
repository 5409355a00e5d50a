/**
 * `orch agent` in the foreground: load the configuration (file, flags, drop-ins), run the start
 * checks, take the lock file, then run the agent with the dashboard on a terminal (klog text lines
 * otherwise) until SIGTERM/SIGINT; `--runonce` starts the static and URL pods, waits for them,
 * prints their status and exits; `--print-config` prints the effective configuration and exits.
 */
import {reportedVersion} from '../../lib/version.js';
import {existsSync, readFileSync} from 'node:fs';
import {Agent, type AgentDeps} from '../../daemons/agent/agent.js';
import {
  loadAgentConfiguration,
  formatAgentConfiguration,
  checkSwap,
  checkCgroupV1,
  checkKernelDefaults,
  acquireLockFile,
  watchLockContention,
  AgentConfigError,
} from '../../daemons/agent/config/index.js';
import type {ResolvedOptions} from '../../options/resolve.js';
import {NodeStatusManager, NodeLeaseController, nodeSettingsFromConfig, restNodeClient} from '../../daemons/agent/node/index.js';
import {configureKlog, klog} from '../../lib/klog.js';
import {UserError} from '../../lib/errors.js';
import type {VersionInfo} from '../../lib/version.js';
import {loadForTerminal} from '../../lib/load-for-terminal.js';
import {applyHeapGrowth} from '../../lib/heap-growth.js';

const log = klog('cmd/agent.ts');

const readText = (path: string): string | undefined => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
};

export async function runAgent(resolved: ResolvedOptions, version: VersionInfo, terminal = Boolean(process.stdout.isTTY)): Promise<void> {
  applyHeapGrowth();
  let loaded;
  try {
    loaded = await loadAgentConfiguration({
      configFile: resolved.values.config as string | undefined,
      configDir: resolved.values['config-dir'] as string | undefined,
      flags: resolved,
    });
  } catch (error) {
    if (error instanceof AgentConfigError) throw new UserError(error.problems.join('\n'));
    throw error;
  }
  for (const warning of loaded.warnings) process.stderr.write(`Warning: ${warning}\n`);
  if (resolved.values['print-config'] === true) {
    process.stdout.write(formatAgentConfiguration(loaded.config, 'yaml'));
    return;
  }
  const o = loaded.options;
  const endpoint = o['container-runtime-endpoint'] as string | undefined;
  if (endpoint && !/^process(:\/\/.*)?$/.test(endpoint)) {
    throw new UserError(
      `--container-runtime-endpoint=${endpoint}: orch runs pods with its process runtime (the default, "process"); CRI runtimes are not supported yet`,
    );
  }
  const problem =
    checkSwap(o['fail-swap-on'] !== false, readText) ??
    checkCgroupV1(o['fail-cgroupv1'] !== false, existsSync) ??
    checkKernelDefaults(o['protect-kernel-defaults'] === true, readText);
  if (problem) throw new UserError(problem);

  let releaseLock: (() => void) | undefined;
  let stopLockWatch: (() => void) | undefined;
  const agent = new Agent(loaded, await nodeStatusDeps(loaded, version));
  if (o['lock-file']) {
    const lock = acquireLockFile(o['lock-file'] as string);
    if (!lock.acquired) throw new UserError(lock.message);
    releaseLock = lock.release;
    if (o['exit-on-lock-contention'] === true) {
      stopLockWatch = watchLockContention(o['lock-file'] as string, (reason) => {
        log.info('Lock contention: exiting', 'reason', reason);
        void agent.stop().then(() => process.exit(0));
      }).stop;
    }
  }

  let dashboard: {unmount(): void} | undefined;
  let emitter: {update(s: unknown): void; close(): void} | undefined;
  const runonce = o.runonce === true;
  if (terminal && !runonce) {
    const [{StateEmitter}, {LogBuffer}, dash] = await Promise.all([
      import('../../ui/state-emitter.js'),
      import('../../ui/components/log-buffer.js'),
      loadForTerminal(() => import('../../ui/agent-dashboard.js')),
    ]);
    const logs = new LogBuffer();
    configureKlog({out: (l) => logs.append(l), err: (l) => logs.append(l)});
    const e = new StateEmitter<ReturnType<Agent['snapshot']>>({ignoreKeys: ['at']});
    emitter = e;
    dashboard = dash.renderAgentDashboard(e, logs);
  }
  try {
    await agent.start();
    if (runonce) {
      await printRunOnce(agent);
      return;
    }
    const timer = setInterval(() => emitter?.update(agent.snapshot()), 250);
    await new Promise<void>((resolve) => {
      process.once('SIGTERM', resolve);
      process.once('SIGINT', resolve);
    });
    clearInterval(timer);
  } finally {
    await agent.stop();
    stopLockWatch?.();
    releaseLock?.();
    if (emitter) {
      emitter.update(agent.snapshot());
      await new Promise((r) => setTimeout(r, 300));
      emitter.close();
      dashboard?.unmount();
      configureKlog({out: (l) => process.stderr.write(l), err: (l) => process.stderr.write(l)});
    }
  }
  log.info('Stopped');
}

/** --runonce: wait until every pod has left Pending (bounded), then print one line per pod. */
async function printRunOnce(agent: Agent): Promise<void> {
  const deadline = Date.now() + 60_000;
  await new Promise((r) => setTimeout(r, 500));
  while (Date.now() < deadline && agent.snapshot().pods.some((p) => p.phase === 'Pending')) await new Promise((r) => setTimeout(r, 200));
  const pods = agent.snapshot().pods;
  for (const p of pods) {
    const containers = p.containers.map((c) => `${c.name}=${c.state.running ? 'running' : c.state.terminated ? `exited(${c.state.terminated.exitCode})` : (c.state.waiting?.reason ?? 'waiting')}`).join(' ');
    process.stdout.write(`${p.namespace}/${p.name}\t${p.phase}\t${containers}\n`);
  }
  if (pods.length === 0) process.stdout.write('no static or URL pods to run\n');
  if (pods.some((p) => p.phase === 'Failed' || p.phase === 'Pending')) process.exitCode = 1;
}

/** The node part (registration, status, lease) in API server mode. */
export async function nodeStatusDeps(loaded: Parameters<typeof nodeSettingsFromConfig>[0], version: VersionInfo): Promise<AgentDeps> {
  return {
    version,
    nodeStatus: ({client, conditions, recordNodeEvent}) => {
      const api = restNodeClient(client);
      // The settings want the version without its `v` (kubeletVersion is `v<version>`): the
      // reported one, as /version's, so clients see the emulated release on nodes too.
      const settings = nodeSettingsFromConfig(loaded, reportedVersion(version).gitVersion.replace(/^v/, ''));
      let lastRenew: number | undefined;
      const status = new NodeStatusManager({
        client: api,
        settings,
        pressure: conditions,
        log: (m: string) => log.info(m),
        recordEvent: (e) => recordNodeEvent(e.type, e.reason, e.message),
      });
      const lease = new NodeLeaseController({
        client: api,
        nodeName: status.nodeName,
        leaseDurationSeconds: settings.nodeLeaseDurationSeconds,
        onRenew: (at: number) => (lastRenew = at),
        onError: (error: unknown) => log.v(2).info('Node lease renewal failed', 'err', error),
      });
      return {
        start: () => {
          status.start();
          lease.start();
        },
        stop: async () => {
          lease.stop();
          await status.stop();
        },
        snapshot: () => ({...status.snapshot(), lastLeaseRenewAt: lastRenew ?? status.snapshot().lastLeaseRenewAt}),
      };
    },
  };
}
