/**
 * `orch controller-manager` in the foreground: start, show the dashboard on a terminal (klog text
 * lines otherwise), stop cleanly on SIGTERM/SIGINT (releasing the lease), and exit 1 when the lease
 * is lost, as upstream does.
 */
import {ControllerManager, type ControllerManagerConfig} from '../../daemons/controller-manager/manager.js';
import {configureKlog, klog} from '../../lib/klog.js';
import {daemonLogOutputs} from '../../lib/daemon-common.js';
import {UserError} from '../../lib/errors.js';
import {loadForTerminal} from '../../lib/load-for-terminal.js';
import {applyHeapGrowth} from '../../lib/heap-growth.js';

const log = klog('cmd/controller-manager.ts');

export async function runControllerManager(config: ControllerManagerConfig, terminal = Boolean(process.stdout.isTTY)): Promise<void> {
  applyHeapGrowth();
  const manager = new ControllerManager(config);
  let dashboard: {unmount(): void} | undefined;
  let emitter: {update(s: unknown): void; close(): void} | undefined;
  if (terminal) {
    const [{StateEmitter}, {LogBuffer}, dash] = await Promise.all([
      import('../../ui/state-emitter.js'),
      import('../../ui/components/log-buffer.js'),
      loadForTerminal(() => import('../../ui/controller-manager-dashboard.js')),
    ]);
    const logs = new LogBuffer();
    configureKlog({out: (l) => logs.append(l), err: (l) => logs.append(l)});
    const e = new StateEmitter<ReturnType<ControllerManager['snapshot']>>({ignoreKeys: ['at']});
    emitter = e;
    dashboard = dash.renderControllerManagerDashboard(e, logs);
  }
  const onSignal = () => void manager.stop();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const timer = setInterval(() => emitter?.update(manager.snapshot()), 250);
  let outcome: 'lost' | 'stopped';
  try {
    await manager.start();
    outcome = await manager.run();
  } finally {
    clearInterval(timer);
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    await manager.close();
    if (emitter) {
      emitter.update(manager.snapshot());
      await new Promise((resolve) => setTimeout(resolve, 300));
      emitter.close();
      dashboard?.unmount();
      configureKlog(daemonLogOutputs());
    }
  }
  if (outcome === 'lost') throw new UserError('leaderelection lost');
  log.info('Stopped');
}
