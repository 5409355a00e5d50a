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

export async function runApiServer(config: ApiServerConfig, terminal = Boolean(process.stdout.isTTY)): Promise<void> {
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

  await server.start();
  const removeSignals = server.installSignalHandlers();
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
