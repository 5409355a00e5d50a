/**
 * Server-side `Table` rendering for `kubectl get` (meta/v1 Table): the printer columns of the
 * common kinds (pkg/printers/internalversion upstream, a subset), and NAME/AGE for the rest.
 * Ages are computed here, as upstream servers do (duration.HumanDuration).
 */
import { isJsonObject, type JsonObject, type JsonValue } from '../patch/types.js';

export interface ColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

interface Column {
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

const get = (object: JsonValue | undefined, ...path: string[]): JsonValue | undefined => {
  let node: JsonValue | undefined = object;
  for (const p of path) node = isJsonObject(node) ? node[p] : undefined;
  return node;
};
const str = (v: JsonValue | undefined, fallback = '<none>') => (typeof v === 'string' && v !== '' ? v : fallback);
const num = (v: JsonValue | undefined) => (typeof v === 'number' ? v : 0);
const count = (v: JsonValue | undefined) => (isJsonObject(v) ? Object.keys(v).length : 0);

const nameColumn: Column = {
  name: 'Name', format: 'name',
  description: 'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://orch.io/docs/concepts/overview/working-with-objects/names#names',
  cell: (o) => str(get(o, 'metadata', 'name'), ''),
};
const ageColumn: Column = {
  name: 'Age', description: 'CreationTimestamp is a timestamp representing the server time when this object was created.',
  cell: (o, now) => {
    const created = get(o, 'metadata', 'creationTimestamp');
    return typeof created === 'string' ? humanDuration(now.getTime() - Date.parse(created)) : '<unknown>';
  },
};

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
      cell: (o) => {
        const statuses = get(o, 'status', 'containerStatuses');
        return String((Array.isArray(statuses) ? statuses : []).reduce((n: number, s) => n + num(get(s, 'restartCount')), 0));
      },
    },
    ageColumn,
    { name: 'IP', priority: 1, description: 'IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.', cell: (o) => str(get(o, 'status', 'podIP')) },
    { name: 'Node', priority: 1, description: "NodeName is a request to schedule this pod onto a specific node.", cell: (o) => str(get(o, 'spec', 'nodeName')) },
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
          .filter((k) => k.startsWith('node-role.orch.io/'))
          .map((k) => k.slice('node-role.orch.io/'.length))
          .sort();
        return roles.length ? roles.join(',') : '<none>';
      },
    },
    ageColumn,
    { name: 'Version', description: 'Agent version reported by the node.', cell: (o) => str(get(o, 'status', 'nodeInfo', 'kubeletVersion'), '') },
  ],
  Deployment: [
    nameColumn,
    { name: 'Ready', description: 'Number of the pod with ready state', cell: (o) => `${num(get(o, 'status', 'readyReplicas'))}/${num(get(o, 'spec', 'replicas'))}` },
    { name: 'Up-to-date', type: 'integer', description: 'Total number of non-terminated pods targeted by this deployment that have the desired template spec.', cell: (o) => num(get(o, 'status', 'updatedReplicas')) },
    { name: 'Available', type: 'integer', description: 'Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.', cell: (o) => num(get(o, 'status', 'availableReplicas')) },
    ageColumn,
  ],
  ReplicaSet: [
    nameColumn,
    { name: 'Desired', type: 'integer', description: 'Replicas is the number of desired replicas.', cell: (o) => num(get(o, 'spec', 'replicas')) },
    { name: 'Current', type: 'integer', description: 'Replicas is the most recently observed number of replicas.', cell: (o) => num(get(o, 'status', 'replicas')) },
    { name: 'Ready', type: 'integer', description: 'The number of ready replicas for this replica set.', cell: (o) => num(get(o, 'status', 'readyReplicas')) },
    ageColumn,
  ],
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
  ],
  ConfigMap: [nameColumn, { name: 'Data', type: 'integer', description: 'Number of data items.', cell: (o) => count(o.data) + count(o.binaryData) }, ageColumn],
  Secret: [
    nameColumn,
    { name: 'Type', description: 'The type of the secret', cell: (o) => str(o.type, 'Opaque') },
    { name: 'Data', type: 'integer', description: 'Number of data items.', cell: (o) => count(o.data) },
    ageColumn,
  ],
  CustomResourceDefinition: [
    nameColumn,
    { name: 'Created At', type: 'date', description: 'Creation time.', cell: (o) => str(get(o, 'metadata', 'creationTimestamp'), '') },
  ],
};

function columnsFor(kind: string): Column[] {
  return COLUMNS[kind] ?? [nameColumn, ageColumn];
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
    const row: JsonObject = { cells: columns.map((c) => c.cell(object, options.now)) };
    const included = rowObject(object, options.includeObject, options.apiVersion);
    if (included !== undefined) row.object = included;
    return row;
  });
  return table;
}
