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
  warn: (message: string) => void;
}

/** The options' defaults (upstream's). */
export const DEFAULT_COORDINATED_TIMINGS: CoordinatedTimings = {leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000};

/**
 * Why coordinated leader election will not run although the --coordinated-leadership-* options were
 * changed from their defaults; undefined when it runs or nothing was asked for. Pure.
 */
export function coordinatedElectionProblem(gateOn: boolean, servesCandidates: boolean, timings: CoordinatedTimings | undefined): string | undefined {
  const changed = timings !== undefined && (Object.keys(DEFAULT_COORDINATED_TIMINGS) as (keyof CoordinatedTimings)[]).some((k) => timings[k] !== DEFAULT_COORDINATED_TIMINGS[k]);
  if (gateOn && servesCandidates) return undefined;
  if (!gateOn) {
    return changed
      ? '--coordinated-leadership-lease-duration, --coordinated-leadership-renew-deadline and --coordinated-leadership-retry-period have no effect without the CoordinatedLeaderElection feature gate (--feature-gates=CoordinatedLeaderElection=true)'
      : undefined;
  }
  return `coordinated leader election needs LeaseCandidates (${names().groups.coordination}/v1beta1, --runtime-config=${names().groups.coordination}/v1beta1=true): the controller does not run`;
}

export function startCoordinatedLeaderElection(hooks: PostStartHooks, w: CoordinatedWiring): CoordinatedLeaderElection | undefined {
  const gateOn = w.config.featureGates?.enabled('CoordinatedLeaderElection') === true;
  const coordination = names().groups.coordination;
  const served = w.served.some((r) => r.group === coordination && r.plural === 'leasecandidates');
  const problem = coordinatedElectionProblem(gateOn, served, w.config.coordinatedLeadership);
  if (problem) w.warn(problem);
  if (!gateOn || !served) return undefined;
  const election = new CoordinatedLeaderElection({
    store: w.store,
    keyPrefix: w.keyPrefix,
    timings: w.config.coordinatedLeadership ?? DEFAULT_COORDINATED_TIMINGS,
  });
  hooks.add(`start-${names().product}-apiserver-coordinated-leader-election-controller`, async () => election.start());
  return election;
}
