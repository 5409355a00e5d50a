/**
 * `orch up`'s combined dashboard: the three daemons' panels (API server checks, leader state and
 * node lifecycle, the agent's pods and eviction status) over one log pane.
 */
import {Box, Text, render} from 'ink';
import type {StateEmitter} from './state-emitter.js';
import type {LogBuffer} from './components/log-buffer.js';
import {LogPane} from './components/log-pane.js';
import {useSnapshot} from './components/use-snapshot.js';
import {useHistory} from './components/sparkline.js';
import {useNow} from './components/use-now.js';
import {ApiServerPanel} from './apiserver-dashboard.js';
import {ControllerManagerPanel} from './controller-manager-dashboard.js';
import {AgentPanel} from './agent-dashboard.js';
import type {ApiServerSnapshot} from '../daemons/apiserver/state.js';
import type {ControllerManagerSnapshot} from '../daemons/controller-manager/state.js';
import type {AgentSnapshot} from '../daemons/agent/state.js';

export interface UpSnapshot {
  apiserver?: ApiServerSnapshot;
  controllerManager?: ControllerManagerSnapshot;
  agent?: AgentSnapshot;
  at: number;
}

export function UpDashboard({emitter, logs}: {emitter: StateEmitter<UpSnapshot>; logs: LogBuffer}) {
  const s = useSnapshot(emitter);
  const now = useNow();
  const rates = useHistory(s?.apiserver, s?.apiserver?.requests.ratePerSecond, 40);
  return (
    <>
      <LogPane buffer={logs} />
      <Box flexDirection="column">
        {s?.apiserver ? <ApiServerPanel s={s.apiserver} rates={rates} now={now} /> : <Text dimColor>orch apiserver starting…</Text>}
        {s?.controllerManager ? <ControllerManagerPanel s={s.controllerManager} now={now} /> : <Text dimColor>orch controller-manager starting…</Text>}
        {s?.agent ? <AgentPanel s={s.agent} now={now} /> : <Text dimColor>orch agent starting…</Text>}
      </Box>
    </>
  );
}

export function renderUpDashboard(emitter: StateEmitter<UpSnapshot>, logs: LogBuffer): {unmount(): void} {
  const app = render(<UpDashboard emitter={emitter} logs={logs} />, {exitOnCtrlC: false});
  return {unmount: () => app.unmount()};
}
