/**
 * Wires coordinated leader election into the API server: with the CoordinatedLeaderElection gate on
 * and LeaseCandidates served (--runtime-config), the post-start hook upstream names
 * `start-kube-apiserver-coordinated-leader-election-controller` starts the controller (leader-elected
 * among the API servers). Otherwise nothing runs and no hook is added.
 */
import {names} from '../../../api/names.js';
import type {ResourceInfo} from '../../../api/resources.js';
import type {PostStartHooks} from '../health/post-start-hooks.js';
import type {Store} from '../storage/store.js';
import type {FeatureGates} from '../../../api/feature-gates.js';
import {CoordinatedLeaderElection, type CoordinatedTimings} from './controller.js';

export {CoordinatedLeaderElection, type CoordinatedTimings} from './controller.js';

export interface CoordinatedWiring {
  store: Store;
  keyPrefix: string;
  config: {featureGates?: FeatureGates; coordinatedLeadership?: CoordinatedTimings};
  served: ResourceInfo[];
}

export function startCoordinatedLeaderElection(hooks: PostStartHooks, w: CoordinatedWiring): CoordinatedLeaderElection | undefined {
  if (w.config.featureGates?.enabled('CoordinatedLeaderElection') !== true) return undefined;
  const coordination = names().groups.coordination;
  if (!w.served.some((r) => r.group === coordination && r.plural === 'leasecandidates')) return undefined;
  const election = new CoordinatedLeaderElection({
    store: w.store,
    keyPrefix: w.keyPrefix,
    timings: w.config.coordinatedLeadership ?? {leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000},
  });
  hooks.add(`start-${names().product}-apiserver-coordinated-leader-election-controller`, async () => election.start());
  return election;
}
