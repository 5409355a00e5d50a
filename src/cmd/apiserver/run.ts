/**
 * `orch apiserver` in the foreground: start the server, show the dashboard on a terminal (klog
 * text lines otherwise), stop on SIGTERM/SIGINT through the shutdown sequence, exit 0 when done.
 */
import {ApiServer, type ApiServerConfig} from '../../daemons/apiserver/server.js';
import {configureKlog, klog} from '../../lib/klog.js';
import {daemonLogOutputs} from '../../lib/daemon-common.js';
import {loadForTerminal} from '../../lib/load-for-terminal.js';
import {applyHeapGrowth} from '../../lib/heap-growth.js';

const log = klog('cmd/apiserver.ts');

/** Where SIGTERM and SIGINT come from (the process; an emitter in tests). */
export type SignalSource = Pick<NodeJS.Process, 'on' | 'off'>;

export async function runApiServer(config: ApiServerConfig, terminal = Boolean(process.stdout.isTTY), signals: SignalSource = process): Promise<void> {
  applyHeapGrowth();
  const server = new ApiServer(config);
  let dashboard: {unmount(): void} | undefined;
  let emitter: {update(s: unknown): void; close(): void} | undefined;
  if (terminal) {
    // Ink and React load only here, on a terminal.
    const [{StateEmitter}, {LogBuffer}, {renderApiServerDashboard}] = await Promise.all([
      import('../../ui/state-emitter.js'),
      import('../../ui/components/log-buffer.js'),
      loadForTerminal(() => import('../../ui/apiserver-dashboard.js')),
    ]);
    const logs = new LogBuffer();
    configureKlog({out: (l) => logs.append(l), err: (l) => logs.append(l)});
    const e = new StateEmitter<ReturnType<ApiServer['snapshot']>>({ignoreKeys: ['at']});
    emitter = e;
    dashboard = renderApiServerDashboard(e, logs);
  }

  // A signal while the server starts is held, not left to Node's default (death by the signal,
  // half started): once the server serves it runs the shutdown sequence, and the process exits 0
  // as after any SIGTERM. A second signal during the start exits at once, as it does later.
  let heldSignals = 0;
  const hold = () => {
    if (++heldSignals > 1) process.exit(1);
  };
  signals.on('SIGTERM', hold);
  signals.on('SIGINT', hold);
  try {
    await server.start();
  } finally {
    signals.off('SIGTERM', hold);
    signals.off('SIGINT', hold);
  }
  const removeSignals = server.installSignalHandlers(signals);
  if (heldSignals > 0) server.signal();
  if (!terminal) {
    log.info(`Admin orchconfig written; use it with: kubectl --kubeconfig ${config.orchconfigPath} get ns`);
  }
  // The snapshot is read on a timer, away from request handling; checks are re-run once a second.
  let ticks = 0;
  const timer = setInterval(async () => {
    if (ticks++ % 4 === 0) await server.refreshChecks().catch(() => undefined);
    emitter?.update(server.snapshot());
  }, 250);
  if (emitter) emitter.update(server.snapshot());

  await server.done;
  clearInterval(timer);
  await server.stop();
  removeSignals();
  if (emitter) {
    // Let the throttled emitter draw the final phase before the dashboard goes away.
    emitter.update(server.snapshot());
    await new Promise((resolve) => setTimeout(resolve, 300));
    emitter.close();
    dashboard?.unmount();
    configureKlog(daemonLogOutputs());
  }
  log.info('Stopped');
}
