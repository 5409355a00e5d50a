/**
 * The agent's own metrics on a prom-client registry, upstream's kubelet metrics with the `agent_`
 * prefix: running pods and containers (computed from the runtime at scrape time), evictions by
 * signal, the node name; plus `agent_node_status_posts_total`, which upstream lacks, counting the
 * node status updates sent to the API server by result.
 */
import {Counter, Gauge, type Registry} from 'prom-client';
import type {RunningContainerState, RunningPod} from './types.js';

export interface AgentMetricsOptions {
  /** The runtime's pods, read at each scrape for the running pods and containers gauges. */
  runningPods?: () => readonly RunningPod[] | Promise<readonly RunningPod[]>;
}

const CONTAINER_STATES: readonly RunningContainerState[] = ['created', 'running', 'exited', 'unknown'];

export class AgentMetrics {
  readonly runningPods: Gauge;
  readonly runningContainers: Gauge<'container_state'>;
  readonly evictions: Counter<'eviction_signal'>;
  readonly nodeStatusPosts: Counter<'result'>;
  readonly nodeName: Gauge<'node'>;

  constructor(registry: Registry, options: AgentMetricsOptions = {}) {
    const source = options.runningPods;
    const read = async () => (source ? source() : []);
    this.runningPods = new Gauge({
      name: 'agent_running_pods',
      help: 'Number of pods that have a running pod sandbox',
      registers: [registry],
      collect: source
        ? async () => {
            const pods = await read();
            this.runningPods.set(pods.filter((p) => p.containers.some((c) => (c.state ?? 'running') === 'running')).length);
          }
        : undefined,
    });
    this.runningContainers = new Gauge({
      name: 'agent_running_containers',
      help: 'Number of containers currently running',
      labelNames: ['container_state'],
      registers: [registry],
      collect: source
        ? async () => {
            const counts = new Map<RunningContainerState, number>(CONTAINER_STATES.map((s) => [s, 0]));
            for (const pod of await read()) for (const c of pod.containers) counts.set(c.state ?? 'running', (counts.get(c.state ?? 'running') ?? 0) + 1);
            for (const [state, count] of counts) this.runningContainers.set({container_state: state}, count);
          }
        : undefined,
    });
    this.evictions = new Counter({
      name: 'agent_evictions',
      help: 'Cumulative number of pod evictions by eviction signal',
      labelNames: ['eviction_signal'],
      registers: [registry],
    });
    this.nodeStatusPosts = new Counter({
      name: 'agent_node_status_posts_total',
      help: 'Node status updates sent to the API server, by result (success or failure)',
      labelNames: ['result'],
      registers: [registry],
    });
    this.nodeName = new Gauge({
      name: 'agent_node_name',
      help: "The node's name. The count is always 1.",
      labelNames: ['node'],
      registers: [registry],
    });
  }

  recordEviction(signal: string): void {
    this.evictions.inc({eviction_signal: signal});
  }

  recordNodeStatusPost(succeeded: boolean): void {
    this.nodeStatusPosts.inc({result: succeeded ? 'success' : 'failure'});
  }

  setNodeName(name: string): void {
    this.nodeName.reset();
    this.nodeName.set({node: name}, 1);
  }
}
