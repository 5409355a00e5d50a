/**
 * The node lifecycle options of the controller manager, in the units the controller computes with
 * (milliseconds, nodes per second). The command turns the parsed flags into this.
 */
export interface NodeLifecycleOptions {
  /** --node-monitor-period: how often the health monitor pass runs. */
  nodeMonitorPeriodMs: number;
  /** --node-monitor-grace-period: silence after which a node's conditions become Unknown. */
  nodeMonitorGracePeriodMs: number;
  /** --node-startup-grace-period: the same for a node that never posted a Ready condition. */
  nodeStartupGracePeriodMs: number;
  /** --node-eviction-rate: nodes per second tainted for eviction in a zone that is not disrupted. */
  nodeEvictionRate: number;
  /** --secondary-node-eviction-rate: the rate in a partially disrupted zone larger than the threshold. */
  secondaryNodeEvictionRate: number;
  /** --large-cluster-size-threshold: a zone with more nodes than this keeps the secondary rate. */
  largeClusterSizeThreshold: number;
  /** --unhealthy-zone-threshold: not-ready fraction (with at least 3 not ready) for PartialDisruption. */
  unhealthyZoneThreshold: number;
}

export const DEFAULT_NODE_LIFECYCLE_OPTIONS: Readonly<NodeLifecycleOptions> = {
  nodeMonitorPeriodMs: 5_000,
  nodeMonitorGracePeriodMs: 50_000,
  nodeStartupGracePeriodMs: 60_000,
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  largeClusterSizeThreshold: 50,
  unhealthyZoneThreshold: 0.55,
};

/** Upstream's internal constant: the NoExecute tainting queues are worked every 100 ms. */
export const NO_EXECUTE_TAINTING_PERIOD_MS = 100;
/** Upstream's `NodeHealthUpdateRetry`: status write attempts per node per pass. */
export const NODE_HEALTH_UPDATE_RETRY = 5;
/** Upstream retries a failed NoExecute taint write 50 ms later. */
export const TAINT_RETRY_AFTER_MS = 50;
