/**
 * The `nodelifecycle` controller: the NodeLifecycleController (src/daemons/controller-manager/
 * node-lifecycle) fed by shared informers for nodes, node leases and pods, and writing through
 * the REST client.
 */
import {names} from '../../../api/names.js';
import {NodeLifecycleController, nodeLeaseNamespace, type Node, type Lease, type Pod, type NodeLifecycleSnapshot} from '../node-lifecycle/index.js';
import type {ControllerDescriptor, ControllerContext} from './types.js';

const ms = (v: unknown, fallback: number) => (v && typeof v === 'object' && 'ms' in v ? (v as {ms: number}).ms : fallback);

/** Shared with the manager so the dashboard can show zones and nodes. */
export const nodeLifecycleSnapshots: {latest?: () => NodeLifecycleSnapshot} = {};

export const nodeLifecycleController: ControllerDescriptor = {
  name: 'nodelifecycle',
  enabledByDefault: true,
  start(ctx: ControllerContext, signal: AbortSignal) {
    const o = ctx.options;
    const nodes = ctx.informers.informerFor<Node & {metadata: {name: string}}>({group: '', version: 'v1', resource: 'nodes'});
    const leases = ctx.informers.informerFor<Lease & {metadata: {name: string; namespace: string}}>({
      group: names().groups.coordination,
      version: 'v1',
      resource: 'leases',
      namespace: nodeLeaseNamespace(),
    });
    const pods = ctx.informers.informerFor<Pod & {metadata: {name: string}}>(
      {group: '', version: 'v1', resource: 'pods'},
      {indexers: {nodeName: (p) => [((p as {spec?: {nodeName?: string}}).spec?.nodeName ?? '')]}},
    );
    const client = ctx.client;
    const controller = new NodeLifecycleController({
      nodes: {list: () => nodes.indexer.list()},
      leases: {get: (name) => leases.indexer.getByKey(`${nodeLeaseNamespace()}/${name}`)},
      pods: {listOnNode: (name) => pods.indexer.byIndex('nodeName', name)},
      client: {
        updateNodeStatus: (node) => client.request({method: 'PUT', path: `/api/v1/nodes/${node.metadata?.name}/status`, body: node}),
        setTaints: async (name, taints) => {
          const patch = {spec: {taints}};
          return client.patch(`/api/v1/nodes/${name}`, 'application/merge-patch+json', patch);
        },
        evictPod: (ns, name) => client.request({method: 'DELETE', path: `/api/v1/namespaces/${ns}/pods/${name}`}),
        updatePodStatus: (pod) =>
          client.request({method: 'PUT', path: `/api/v1/namespaces/${pod.metadata?.namespace}/pods/${pod.metadata?.name}/status`, body: pod}),
        // NodeNotReady, DeletingAllPods, TaintManagerEviction...: counted up on repeats, as upstream's recorder does.
        recordEvent: (event) => ctx.events?.('node-controller').event({...event.involvedObject, ...(event.involvedObject.kind === 'Pod' ? {apiVersion: 'v1'} : {})}, event.type, event.reason, event.message),
      },
      options: {
        nodeMonitorPeriodMs: ms(o['node-monitor-period'], 5000),
        nodeMonitorGracePeriodMs: ms(o['node-monitor-grace-period'], 50_000),
        nodeStartupGracePeriodMs: ms(o['node-startup-grace-period'], 60_000),
        nodeEvictionRate: (o['node-eviction-rate'] as number) ?? 0.1,
        secondaryNodeEvictionRate: (o['secondary-node-eviction-rate'] as number) ?? 0.01,
        largeClusterSizeThreshold: (o['large-cluster-size-threshold'] as number) ?? 50,
        unhealthyZoneThreshold: (o['unhealthy-zone-threshold'] as number) ?? 0.55,
      },
      logger: ctx.logger,
    });
    nodeLifecycleSnapshots.latest = () => controller.snapshot();
    const done = (async () => {
      await Promise.all([nodes.waitForSync({signal}), leases.waitForSync({signal}), pods.waitForSync({signal})]);
      if (signal.aborted) return;
      controller.start();
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), {once: true}));
      await controller.stop();
    })();
    return {
      done,
      snapshot: () => {
        const s = controller.snapshot();
        return {name: 'nodelifecycle', workers: 1, queueDepth: s.zones.reduce((n, z) => n + z.queuedNodes, 0), details: {nodes: s.nodes.length, zones: s.zones.length}};
      },
    };
  },
};
