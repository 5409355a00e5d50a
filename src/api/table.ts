/**
 * Server-side `Table` rendering for `kubectl get` (meta/v1 Table): the printer columns of the
 * built-in kinds (pkg/printers/internalversion upstream, with its wide columns), and NAME/AGE for the rest.
 * Ages are computed here, as upstream servers do (duration.HumanDuration).
 */
import { names } from './names.js';
import { isJsonObject, type JsonObject, type JsonValue } from '../patch/types.js';
import { asCoreEvent, catalogColumns } from './printer-columns.js';
import { labelSelectorString, mapSelectorString, type LabelSelectorObject } from './selectors.js';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

export interface Column {
  name: string;
  type?: string;
  format?: string;
  description: string;
  priority?: number;
  cell: (object: JsonObject, now: Date) => JsonValue;
}

/** Go's duration.HumanDuration. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.floor(minutes / 60);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${Math.floor(hours / 24)}d` : `${Math.floor(hours / 24)}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24)}d`;
  if (hours < 24 * 365 * 8) {
    const dy = Math.floor(hours / 24) % 365;
    return dy === 0 ? `${Math.floor(hours / 24 / 365)}y` : `${Math.floor(hours / 24 / 365)}y${dy}d`;
  }
  return `${Math.floor(hours / 24 / 365)}y`;
}

export const get = (object: JsonValue | undefined, ...path: string[]): JsonValue | undefined => {
  let node: JsonValue | undefined = object;
  for (const p of path) node = isJsonObject(node) ? node[p] : undefined;
  return node;
};
export const str = (v: JsonValue | undefined, fallback = '<none>') => (typeof v === 'string' && v !== '' ? v : fallback);
export const num = (v: JsonValue | undefined) => (typeof v === 'number' ? v : 0);
const count = (v: JsonValue | undefined) => (isJsonObject(v) ? Object.keys(v).length : 0);
export const list = (v: JsonValue | undefined): JsonValue[] => (Array.isArray(v) ? v : []);
const optionalNum = (v: JsonValue | undefined) => (typeof v === 'number' ? v : undefined);

/** Upstream's translateTimestampSince: the age of a timestamp, `<unknown>` when there is none. */
export function since(timestamp: JsonValue | undefined, now: Date): string {
  return typeof timestamp === 'string' && timestamp !== '' ? humanDuration(now.getTime() - Date.parse(timestamp)) : '<unknown>';
}

export const nameColumn: Column = {
  name: 'Name', format: 'name',
  // A getter: the documentation link follows the name set selected at start-up.
  get description() {
    return `Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: ${names().docsUrl}/concepts/overview/working-with-objects/names#names`;
  },
  cell: (o) => str(get(o, 'metadata', 'name'), ''),
};
export const ageColumn: Column = {
  name: 'Age', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: (o, now) => since(get(o, 'metadata', 'creationTimestamp'), now),
};

/** The wide columns of the workload kinds: the pod template's containers and images, and the selector. */
function templateColumns(templateAt: string[], selectorOf: (o: JsonObject) => string): Column[] {
  const containers = (o: JsonObject) => list(get(o, ...templateAt, 'spec', 'containers'));
  return [
    { name: 'Containers', priority: 1, description: 'Names of each container in the template.', cell: (o) => containers(o).map((c) => str(get(c, 'name'), '')).join(',') },
    { name: 'Images', priority: 1, description: 'Images referenced by each container in the template.', cell: (o) => containers(o).map((c) => str(get(c, 'image'), '')).join(',') },
    { name: 'Selector', priority: 1, description: 'Label selector for pods. Existing pods selected by it are the ones affected.', cell: (o) => selectorOf(o) || '<none>' },
  ];
}
export const labelSelectorAt = (...path: string[]) => (o: JsonObject) => {
  const selector = get(o, ...path);
  return isJsonObject(selector) ? labelSelectorString(selector as LabelSelectorObject) : '';
};
const mapSelectorAt = (...path: string[]) => (o: JsonObject) => {
  const selector = get(o, ...path);
  return isJsonObject(selector) ? mapSelectorString(selector as Record<string, string>) : '';
};
const workloadColumns = templateColumns(['spec', 'template'], labelSelectorAt('spec', 'selector'));

/** Upstream's formatEventSource: `component, host`, or the reporting controller and instance. */
function eventSource(event: JsonObject): string {
  const component = str(get(event, 'source', 'component'), '');
  const host = str(get(event, 'source', 'host'), '');
  if (component === '' && host === '') {
    const controller = str(get(event, 'reportingComponent'), '');
    const instance = str(get(event, 'reportingInstance'), '');
    return instance ? `${controller}, ${instance}` : controller;
  }
  return host ? `${component}, ${host}` : component;
}

/** An event's first and last sighting and its count, as upstream's printEvent works them out. */
function eventTimes(event: JsonObject, now: Date): { first: string; last: string; count: number } {
  const firstTimestamp = get(event, 'firstTimestamp');
  const first = since(typeof firstTimestamp === 'string' && firstTimestamp ? firstTimestamp : get(event, 'eventTime'), now);
  const lastTimestamp = get(event, 'lastTimestamp');
  const series = get(event, 'series');
  if (isJsonObject(series)) return { first, last: since(get(series, 'lastObservedTime'), now), count: num(get(series, 'count')) };
  return { first, last: typeof lastTimestamp === 'string' && lastTimestamp ? since(lastTimestamp, now) : first, count: num(get(event, 'count')) || 1 };
}

/** Upstream's printPod restarts: the sum over all containers, with the age of the latest restart. */
function podRestarts(pod: JsonObject, now: Date): string {
  let restarts = 0;
  let latest = '';
  for (const status of [...list(get(pod, 'status', 'initContainerStatuses')), ...list(get(pod, 'status', 'containerStatuses'))]) {
    restarts += num(get(status, 'restartCount'));
    const finished = get(status, 'lastState', 'terminated', 'finishedAt');
    if (typeof finished === 'string' && (latest === '' || Date.parse(finished) > Date.parse(latest))) latest = finished;
  }
  return restarts !== 0 && latest !== '' ? `${restarts} (${since(latest, now)} ago)` : String(restarts);
}

const nodeAddress = (node: JsonObject, type: string) => str(get(list(get(node, 'status', 'addresses')).find((a) => get(a, 'type') === type), 'address'));

const hasCondition = (o: JsonObject, type: string) => list(get(o, 'status', 'conditions')).some((c) => get(c, 'type') === type && get(c, 'status') === 'True');

/** Upstream's printJob status: the first of these that holds. */
function jobStatus(job: JsonObject): string {
  if (hasCondition(job, 'Complete')) return 'Complete';
  if (hasCondition(job, 'Failed')) return 'Failed';
  if (get(job, 'metadata', 'deletionTimestamp')) return 'Terminating';
  if (hasCondition(job, 'Suspended')) return 'Suspended';
  if (hasCondition(job, 'FailureTarget')) return 'FailureTarget';
  if (hasCondition(job, 'SuccessCriteriaMet')) return 'SuccessCriteriaMet';
  return 'Running';
}

function jobCompletions(job: JsonObject): string {
  const succeeded = num(get(job, 'status', 'succeeded'));
  const completions = optionalNum(get(job, 'spec', 'completions'));
  const parallelism = optionalNum(get(job, 'spec', 'parallelism'));
  if (completions !== undefined) return `${succeeded}/${completions}`;
  if (parallelism !== undefined && parallelism > 1) return `${succeeded}/1 of ${parallelism}`;
  return `${succeeded}/1`;
}

function jobDuration(job: JsonObject, now: Date): string {
  const start = get(job, 'status', 'startTime');
  if (typeof start !== 'string') return '';
  const end = get(job, 'status', 'completionTime');
  return humanDuration((typeof end === 'string' ? Date.parse(end) : now.getTime()) - Date.parse(start));
}

/** Upstream's formatEndpoints: `ip:port` pairs, the first three, then `+ N more...`. */
function endpointsText(endpoints: JsonObject): string {
  const pairs: string[] = [];
  let total = 0;
  for (const subset of list(get(endpoints, 'subsets'))) {
    const ports = list(get(subset, 'ports'));
    for (const address of list(get(subset, 'addresses'))) {
      const ip = str(get(address, 'ip'), '');
      if (ports.length === 0) {
        total++;
        if (pairs.length < 3) pairs.push(ip);
        continue;
      }
      for (const port of ports) {
        total++;
        if (pairs.length < 3) pairs.push(`${ip}:${num(get(port, 'port'))}`);
      }
    }
  }
  if (total === 0) return '<none>';
  return total > pairs.length ? `${pairs.join(',')} + ${total - pairs.length} more...` : pairs.join(',');
}

/** Upstream's EndpointSlice cells: the ports (`<unset>` for none) and the first three addresses. */
function sliceAddresses(slice: JsonObject): string {
  const addresses = list(get(slice, 'endpoints')).flatMap((e) => list(get(e, 'addresses')).map((a) => String(a)));
  if (addresses.length === 0) return '<none>';
  const shown = addresses.slice(0, 3).join(',');
  return addresses.length > 3 ? `${shown} + ${addresses.length - 3} more...` : shown;
}
function slicePorts(slice: JsonObject): string {
  const ports = list(get(slice, 'ports'));
  if (!Array.isArray(get(slice, 'ports'))) return '<unset>';
  if (ports.length === 0) return '<none>';
  return ports.map((p) => (typeof get(p, 'port') === 'number' ? String(get(p, 'port')) : '<unset>')).join(',');
}

/** RoleBinding/ClusterRoleBinding: the role, then (wide) the subjects by kind. */
const bindingColumns: Column[] = [
  nameColumn,
  { name: 'Role', description: 'Role references the Role or ClusterRole being granted.', cell: (o) => `${str(get(o, 'roleRef', 'kind'), '')}/${str(get(o, 'roleRef', 'name'), '')}` },
  ageColumn,
  ...(['User', 'Group', 'ServiceAccount'] as const).map((kind): Column => ({
    name: `${kind}s`, priority: 1, description: `${kind} subjects of the binding.`,
    cell: (o) =>
      list(get(o, 'subjects'))
        .filter((s) => get(s, 'kind') === kind)
        .map((s) => (kind === 'ServiceAccount' ? `${str(get(s, 'namespace'), '')}/${str(get(s, 'name'), '')}` : str(get(s, 'name'), '')))
        .join(', '),
  })),
];
export const createdAtColumn: Column = { name: 'Created At', type: 'date', description: 'Creation time.', cell: (o) => str(get(o, 'metadata', 'creationTimestamp'), '') };

function podStatus(pod: JsonObject): string {
  if (get(pod, 'metadata', 'deletionTimestamp')) return 'Terminating';
  const reason = get(pod, 'status', 'reason');
  let status = str(reason, str(get(pod, 'status', 'phase'), 'Unknown'));
  const statuses = get(pod, 'status', 'containerStatuses');
  for (const cs of Array.isArray(statuses) ? statuses : []) {
    const waiting = get(cs, 'state', 'waiting', 'reason');
    const terminated = get(cs, 'state', 'terminated', 'reason');
    if (typeof waiting === 'string' && waiting) status = waiting;
    else if (typeof terminated === 'string' && terminated) status = terminated;
  }
  return status;
}

const COLUMNS: Record<string, Column[]> = {
  Pod: [
    nameColumn,
    {
      name: 'Ready', description: 'The aggregate readiness state of this pod for accepting traffic.',
      cell: (o) => {
        const containers = get(o, 'spec', 'containers');
        const statuses = get(o, 'status', 'containerStatuses');
        const ready = (Array.isArray(statuses) ? statuses : []).filter((s) => get(s, 'ready') === true).length;
        return `${ready}/${Array.isArray(containers) ? containers.length : 0}`;
      },
    },
    { name: 'Status', description: 'The aggregate status of the containers in this pod.', cell: podStatus },
    {
      name: 'Restarts', type: 'string', description: 'The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.',
      cell: podRestarts,
    },
    ageColumn,
    { name: 'IP', priority: 1, description: 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', cell: (o) => str(get(o, 'status', 'podIP')) },
    { name: 'Node', priority: 1, description: "NodeName is a request to schedule this pod onto a specific node.", cell: (o) => str(get(o, 'spec', 'nodeName')) },
    { name: 'Nominated Node', priority: 1, description: 'The node a preempting pod is expected to run on.', cell: (o) => str(get(o, 'status', 'nominatedNodeName')) },
    {
      name: 'Readiness Gates', priority: 1, description: 'Extra conditions the pod needs to be ready.',
      cell: (o) => {
        const gates = list(get(o, 'spec', 'readinessGates'));
        if (gates.length === 0) return '<none>';
        const met = gates.filter((g) => hasCondition(o, str(get(g, 'conditionType'), ''))).length;
        return `${met}/${gates.length}`;
      },
    },
  ],
  Namespace: [
    nameColumn,
    { name: 'Status', description: 'The status of the namespace', cell: (o) => str(get(o, 'status', 'phase'), '') },
    ageColumn,
  ],
  Node: [
    nameColumn,
    {
      name: 'Status', description: 'The status of the node',
      cell: (o) => {
        const conditions = get(o, 'status', 'conditions');
        const ready = (Array.isArray(conditions) ? conditions : []).find((c) => get(c, 'type') === 'Ready');
        const base = ready ? (get(ready, 'status') === 'True' ? 'Ready' : 'NotReady') : 'Unknown';
        return get(o, 'spec', 'unschedulable') === true ? `${base},SchedulingDisabled` : base;
      },
    },
    {
      name: 'Roles', description: 'The roles of the node',
      cell: (o) => {
        const labels = get(o, 'metadata', 'labels');
        const roles = Object.keys(isJsonObject(labels) ? labels : {})
          .filter((k) => k.startsWith(names().labels.nodeRolePrefix))
          .map((k) => k.slice(names().labels.nodeRolePrefix.length))
          .sort();
        return roles.length ? roles.join(',') : '<none>';
      },
    },
    ageColumn,
    { name: 'Version', description: 'Agent version reported by the node.', cell: (o) => str(get(o, 'status', 'nodeInfo', 'kubeletVersion'), '') },
    { name: 'Internal-IP', priority: 1, description: "The node's internal address.", cell: (o) => nodeAddress(o, 'InternalIP') },
    { name: 'External-IP', priority: 1, description: "The node's external address.", cell: (o) => nodeAddress(o, 'ExternalIP') },
    { name: 'OS-Image', priority: 1, description: 'The operating system image of the node.', cell: (o) => str(get(o, 'status', 'nodeInfo', 'osImage'), '<unknown>') },
    { name: 'Kernel-Version', priority: 1, description: 'The kernel version of the node.', cell: (o) => str(get(o, 'status', 'nodeInfo', 'kernelVersion'), '<unknown>') },
    { name: 'Container-Runtime', priority: 1, description: 'The container runtime of the node.', cell: (o) => str(get(o, 'status', 'nodeInfo', 'containerRuntimeVersion'), '<unknown>') },
  ],
  Deployment: [
    nameColumn,
    { name: 'Ready', description: 'Number of the pod with ready state', cell: (o) => `${num(get(o, 'status', 'readyReplicas'))}/${num(get(o, 'spec', 'replicas'))}` },
    { name: 'Up-to-date', type: 'integer', description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', cell: (o) => num(get(o, 'status', 'updatedReplicas')) },
    { name: 'Available', type: 'integer', description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', cell: (o) => num(get(o, 'status', 'availableReplicas')) },
    ageColumn,
    ...workloadColumns,
  ],
  ReplicaSet: [
    nameColumn,
    { name: 'Desired', type: 'integer', description: 'Replicas is the number of desired replicas.', cell: (o) => num(get(o, 'spec', 'replicas')) },
    { name: 'Current', type: 'integer', description: 'Replicas is the most recently observed number of replicas.', cell: (o) => num(get(o, 'status', 'replicas')) },
    { name: 'Ready', type: 'integer', description: 'The number of ready replicas for this replica set.', cell: (o) => num(get(o, 'status', 'readyReplicas')) },
    ageColumn,
    ...workloadColumns,
  ],
  ReplicationController: [
    nameColumn,
    { name: 'Desired', type: 'integer', description: 'Replicas is the number of desired replicas.', cell: (o) => num(get(o, 'spec', 'replicas')) },
    { name: 'Current', type: 'integer', description: 'Replicas is the most recently observed number of replicas.', cell: (o) => num(get(o, 'status', 'replicas')) },
    { name: 'Ready', type: 'integer', description: 'The number of ready replicas for this replication controller.', cell: (o) => num(get(o, 'status', 'readyReplicas')) },
    ageColumn,
    ...templateColumns(['spec', 'template'], mapSelectorAt('spec', 'selector')),
  ],
  StatefulSet: [
    nameColumn,
    { name: 'Ready', description: 'Number of the pod with ready state', cell: (o) => `${num(get(o, 'status', 'readyReplicas'))}/${num(get(o, 'spec', 'replicas'))}` },
    ageColumn,
    ...workloadColumns.slice(0, 2),
  ],
  DaemonSet: [
    nameColumn,
    { name: 'Desired', type: 'integer', description: 'The total number of nodes that should be running the daemon pod.', cell: (o) => num(get(o, 'status', 'desiredNumberScheduled')) },
    { name: 'Current', type: 'integer', description: 'The number of nodes that are running at least one daemon pod and are supposed to.', cell: (o) => num(get(o, 'status', 'currentNumberScheduled')) },
    { name: 'Ready', type: 'integer', description: 'The number of nodes that should be running the daemon pod and have it running and ready.', cell: (o) => num(get(o, 'status', 'numberReady')) },
    { name: 'Up-to-date', type: 'integer', description: 'The total number of nodes that are running the updated daemon pod.', cell: (o) => num(get(o, 'status', 'updatedNumberScheduled')) },
    { name: 'Available', type: 'integer', description: 'The number of nodes that should be running the daemon pod and have it available.', cell: (o) => num(get(o, 'status', 'numberAvailable')) },
    { name: 'Node Selector', description: 'NodeSelector must be true for the pod to fit on a node.', cell: (o) => mapSelectorAt('spec', 'template', 'spec', 'nodeSelector')(o) || '<none>' },
    ageColumn,
    ...workloadColumns,
  ],
  Job: [
    nameColumn,
    { name: 'Status', description: 'Status of the job.', cell: jobStatus },
    { name: 'Completions', description: 'The desired number of successfully finished pods the job should be run with.', cell: jobCompletions },
    { name: 'Duration', description: 'Time required to complete the job.', cell: jobDuration },
    ageColumn,
    ...workloadColumns,
  ],
  CronJob: [
    nameColumn,
    { name: 'Schedule', description: 'The schedule in Cron format.', cell: (o) => str(get(o, 'spec', 'schedule'), '') },
    { name: 'Timezone', description: 'The time zone of the schedule.', cell: (o) => str(get(o, 'spec', 'timeZone')) },
    {
      name: 'Suspend', type: 'boolean', description: 'Whether later executions are suspended.',
      cell: (o) => {
        const suspend = get(o, 'spec', 'suspend');
        return typeof suspend === 'boolean' ? (suspend ? 'True' : 'False') : '<unset>';
      },
    },
    { name: 'Active', type: 'integer', description: 'The number of running jobs.', cell: (o) => list(get(o, 'status', 'active')).length },
    {
      name: 'Last Schedule', description: 'When the job was last scheduled.',
      cell: (o, now) => {
        const last = get(o, 'status', 'lastScheduleTime');
        return typeof last === 'string' ? since(last, now) : '<none>';
      },
    },
    ageColumn,
    ...templateColumns(['spec', 'jobTemplate', 'spec', 'template'], labelSelectorAt('spec', 'jobTemplate', 'spec', 'selector')),
  ],
  Event: [
    { name: 'Last Seen', description: 'The time at which the most recent occurrence of this event was recorded.', cell: (o, now) => eventTimes(o, now).last },
    { name: 'Type', description: 'Type of this event (Normal, Warning).', cell: (o) => str(get(o, 'type'), '') },
    { name: 'Reason', description: "A short, machine understandable string that gives the reason for the transition into the object's current status.", cell: (o) => str(get(o, 'reason'), '') },
    {
      name: 'Object', description: 'The object that this event is about.',
      cell: (o) => {
        const kind = str(get(o, 'involvedObject', 'kind'), '').toLowerCase();
        const name = str(get(o, 'involvedObject', 'name'), '');
        return name ? `${kind}/${name}` : kind;
      },
    },
    { name: 'Subobject', priority: 1, description: 'The part of the object this event is about.', cell: (o) => str(get(o, 'involvedObject', 'fieldPath'), '') },
    { name: 'Source', priority: 1, description: 'The component reporting this event.', cell: eventSource },
    { name: 'Message', description: 'A human-readable description of the status of this operation.', cell: (o) => str(get(o, 'message'), '').trim() },
    { name: 'First Seen', priority: 1, description: 'The time at which the event was first recorded.', cell: (o, now) => eventTimes(o, now).first },
    { name: 'Count', priority: 1, description: 'The number of times this event has occurred.', cell: (o, now) => eventTimes(o, now).count },
    { ...nameColumn, priority: 1 },
  ],
  ServiceAccount: [nameColumn, { name: 'Secrets', description: 'Secrets of this service account.', cell: (o) => list(get(o, 'secrets')).length }, ageColumn],
  Endpoints: [nameColumn, { name: 'Endpoints', description: 'Endpoints of the service.', cell: endpointsText }, ageColumn],
  EndpointSlice: [
    nameColumn,
    { name: 'AddressType', description: 'The type of address carried by this EndpointSlice.', cell: (o) => str(get(o, 'addressType'), '') },
    { name: 'Ports', description: 'The ports exposed by the endpoints.', cell: slicePorts },
    { name: 'Endpoints', description: 'The first addresses of the endpoints.', cell: sliceAddresses },
    ageColumn,
  ],
  Lease: [nameColumn, { name: 'Holder', description: 'The identity of the holder of the lease.', cell: (o) => str(get(o, 'spec', 'holderIdentity'), '') }, ageColumn],
  PriorityClass: [
    nameColumn,
    { name: 'Value', type: 'integer', description: 'The priority of pods of this class.', cell: (o) => num(get(o, 'value')) },
    { name: 'Global-Default', type: 'boolean', description: 'Whether this is the default class for pods without one.', cell: (o) => get(o, 'globalDefault') === true },
    ageColumn,
    { name: 'PreemptionPolicy', description: 'The policy for preempting pods with lower priority.', cell: (o) => str(get(o, 'preemptionPolicy'), 'PreemptLowerPriority') },
  ],
  Role: [nameColumn, createdAtColumn],
  ClusterRole: [nameColumn, createdAtColumn],
  RoleBinding: bindingColumns,
  ClusterRoleBinding: bindingColumns,
  Service: [
    nameColumn,
    { name: 'Type', description: 'The type of service.', cell: (o) => str(get(o, 'spec', 'type'), 'ClusterIP') },
    { name: 'Cluster-IP', description: 'The cluster IP of the service.', cell: (o) => str(get(o, 'spec', 'clusterIP')) },
    { name: 'External-IP', description: 'The external IP of the service.', cell: () => '<none>' },
    {
      name: 'Port(s)', description: 'The ports of the service.',
      cell: (o) => {
        const ports = get(o, 'spec', 'ports');
        const list = (Array.isArray(ports) ? ports : []).map((p) => `${num(get(p, 'port'))}/${str(get(p, 'protocol'), 'TCP')}`);
        return list.length ? list.join(',') : '<none>';
      },
    },
    ageColumn,
    { name: 'Selector', priority: 1, description: 'Route service traffic to pods with label keys and values matching this selector.', cell: (o) => mapSelectorAt('spec', 'selector')(o) || '<none>' },
  ],
  ConfigMap: [nameColumn, { name: 'Data', type: 'integer', description: 'Number of data items.', cell: (o) => count(o.data) + count(o.binaryData) }, ageColumn],
  Secret: [
    nameColumn,
    { name: 'Type', description: 'The type of the secret', cell: (o) => str(o.type, 'Opaque') },
    { name: 'Data', type: 'integer', description: 'Number of data items.', cell: (o) => count(o.data) },
    ageColumn,
  ],
  CustomResourceDefinition: [nameColumn, createdAtColumn],
};

function columnsFor(kind: string): Column[] {
  return COLUMNS[kind] ?? catalogColumns()[kind] ?? [nameColumn, ageColumn];
}

export function columnDefinitions(kind: string): ColumnDefinition[] {
  return columnsFor(kind).map((c) => ({
    name: c.name, type: c.type ?? 'string', format: c.format ?? '', description: c.description, priority: c.priority ?? 0,
  }));
}

export interface TableOptions {
  /** The Table's apiVersion as the client asked for it (`meta.k8s.io/v1`). */
  apiVersion: string;
  /** `None`, `Metadata` (default) or `Object`. */
  includeObject: string;
  now: Date;
  /** Leave out columnDefinitions (watch events after the first). */
  omitColumns?: boolean;
}

function rowObject(object: JsonObject, include: string, apiVersion: string): JsonValue | undefined {
  if (include === 'None') return undefined;
  if (include === 'Object') return object;
  return { kind: 'PartialObjectMetadata', apiVersion, metadata: isJsonObject(object.metadata) ? object.metadata : {} };
}

export function toTable(kind: string, objects: JsonObject[], listMetadata: JsonObject, options: TableOptions): JsonObject {
  const columns = columnsFor(kind);
  const table: JsonObject = { kind: 'Table', apiVersion: options.apiVersion, metadata: listMetadata };
  if (!options.omitColumns) table.columnDefinitions = columnDefinitions(kind) as unknown as JsonValue;
  table.rows = objects.map((object) => {
    const printable = kind === 'Event' ? asCoreEvent(object) : object;
    const row: JsonObject = { cells: columns.map((c) => c.cell(printable, options.now)) };
    const included = rowObject(object, options.includeObject, options.apiVersion);
    if (included !== undefined) row.object = included;
    return row;
  });
  return table;
}
