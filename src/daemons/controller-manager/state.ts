/**
 * The controller manager's observable state: what its dashboard shows. Updated by the manager
 * (leader election changes, controller snapshots, node lifecycle passes), read through a
 * throttled StateEmitter (src/ui/state-emitter.ts).
 */
import type {ElectionState} from '../shared/leader-election/index.js';
import type {ControllerSnapshot} from './controllers/types.js';
import type {NodeLifecycleSnapshot} from './node-lifecycle/index.js';

export interface ControllerManagerSnapshot {
  version: string;
  /** This process's identity (`<hostname>_<uuid>`). */
  identity: string;
  /** API server it talks to. */
  server: string;
  /** https://host:port of its own /healthz, /metrics. */
  servingUrl: string;
  /** The lease used for leader election, `<namespace>/<name>`, or undefined when --leader-elect=false. */
  lease?: string;
  /** Leader election state (holder, acquire and renew times, transitions, expiry). */
  election: ElectionState;
  /** Controllers running (empty until leadership is gained). */
  controllers: ControllerSnapshot[];
  /** Node lifecycle per zone and per node, when that controller runs. */
  nodeLifecycle?: NodeLifecycleSnapshot;
  /** When the daemon was created, ms since the epoch (the dashboard's uptime). */
  startedAt: number;
  /** Wall-clock time of the snapshot, ms since the epoch. */
  at: number;
}
