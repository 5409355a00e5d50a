/**
 * The server-side printer columns `kubectl get` shows: for each kind, the column names (wide ones
 * included) and the cells of a typical object, as upstream's printers compute them.
 */
import {describe, expect, it} from '@jest/globals';
import {columnDefinitions, toTable} from '../../src/api/table.js';
import type {JsonObject} from '../../src/patch/types.js';

const now = new Date('2026-11-22T12:00:00Z');
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
const meta = (name: string, extra: JsonObject = {}) => ({name, namespace: 'default', creationTimestamp: ago(300), ...extra});
const template = {metadata: {labels: {app: 'web'}}, spec: {containers: [{name: 'web', image: 'nginx:1.27'}, {name: 'log', image: 'busybox'}]}};

/** The cells of one object's row, keyed by column name. */
function row(kind: string, object: JsonObject): Record<string, unknown> {
  const table = toTable(kind, [object], {}, {apiVersion: 'meta.k8s.io/v1', includeObject: 'None', now});
  const cells = (table.rows as {cells: unknown[]}[])[0]!.cells;
  return Object.fromEntries(columnDefinitions(kind).map((c, i) => [c.name, cells[i]]));
}

describe('printer columns', () => {
  it.each<[string, JsonObject, Record<string, unknown>]>([
    [
      'Event',
      {kind: 'Event', metadata: meta('web.1'), involvedObject: {kind: 'Pod', name: 'web', fieldPath: 'spec.containers{web}'}, reason: 'Started', message: 'Started container web\n', type: 'Normal', source: {component: 'agent', host: 'node-1'}, firstTimestamp: ago(120), lastTimestamp: ago(30), count: 3},
      {'Last Seen': '30s', Type: 'Normal', Reason: 'Started', Object: 'pod/web', Subobject: 'spec.containers{web}', Source: 'agent, node-1', Message: 'Started container web', 'First Seen': '2m', Count: 3, Name: 'web.1'},
    ],
    [
      'Event',
      {kind: 'Event', metadata: meta('n.1'), involvedObject: {kind: 'Node'}, reason: 'NodeReady', type: 'Normal', reportingController: 'orch-agent', reportingInstance: 'node-1', eventTime: '2026-11-22T11:59:00.000000Z'},
      {'Last Seen': '60s', Object: 'node', Source: 'orch-agent, node-1', 'First Seen': '60s', Count: 1},
    ],
    [
      'Event',
      {kind: 'Event', metadata: meta('s.1'), involvedObject: {kind: 'Pod', name: 'p'}, reason: 'BackOff', type: 'Warning', firstTimestamp: ago(600), series: {count: 12, lastObservedTime: ago(5)}},
      {'Last Seen': '5s', 'First Seen': '10m', Count: 12},
    ],
    [
      'Deployment',
      {kind: 'Deployment', metadata: meta('web'), spec: {replicas: 3, selector: {matchLabels: {app: 'web'}, matchExpressions: [{key: 'tier', operator: 'In', values: ['front', 'api']}]}, template}, status: {readyReplicas: 2, updatedReplicas: 3, availableReplicas: 2}},
      {Ready: '2/3', 'Up-to-date': 3, Available: 2, Age: '5m', Containers: 'web,log', Images: 'nginx:1.27,busybox', Selector: 'app=web,tier in (api,front)'},
    ],
    [
      'ReplicationController',
      {kind: 'ReplicationController', metadata: meta('rc'), spec: {replicas: 2, selector: {b: '2', a: '1'}, template}, status: {replicas: 2, readyReplicas: 1}},
      {Desired: 2, Current: 2, Ready: 1, Selector: 'a=1,b=2', Containers: 'web,log'},
    ],
    [
      'StatefulSet',
      {kind: 'StatefulSet', metadata: meta('db'), spec: {replicas: 3, template}, status: {readyReplicas: 1}},
      {Ready: '1/3', Containers: 'web,log', Images: 'nginx:1.27,busybox'},
    ],
    [
      'DaemonSet',
      {kind: 'DaemonSet', metadata: meta('ds'), spec: {selector: {}, template: {...template, spec: {...template.spec, nodeSelector: {'orch.io/os': 'linux'}}}}, status: {desiredNumberScheduled: 4, currentNumberScheduled: 3, numberReady: 2, updatedNumberScheduled: 3, numberAvailable: 2}},
      {Desired: 4, Current: 3, Ready: 2, 'Up-to-date': 3, Available: 2, 'Node Selector': 'orch.io/os=linux', Selector: '<none>'},
    ],
    [
      'Job',
      {kind: 'Job', metadata: meta('once'), spec: {completions: 3, parallelism: 2, template}, status: {succeeded: 3, startTime: ago(200), completionTime: ago(75), conditions: [{type: 'Complete', status: 'True'}]}},
      {Status: 'Complete', Completions: '3/3', Duration: '2m5s'},
    ],
    [
      'Job',
      {kind: 'Job', metadata: meta('par'), spec: {parallelism: 4, template}, status: {succeeded: 1, startTime: ago(30)}},
      {Status: 'Running', Completions: '1/1 of 4', Duration: '30s'},
    ],
    [
      'Job',
      {kind: 'Job', metadata: meta('stuck'), spec: {template}, status: {conditions: [{type: 'Failed', status: 'True'}]}},
      {Status: 'Failed', Completions: '0/1', Duration: ''},
    ],
    [
      'CronJob',
      {kind: 'CronJob', metadata: meta('nightly'), spec: {schedule: '0 3 * * *', suspend: false, jobTemplate: {spec: {template}}}, status: {active: [{name: 'a'}], lastScheduleTime: ago(3600)}},
      {Schedule: '0 3 * * *', Timezone: '<none>', Suspend: 'False', Active: 1, 'Last Schedule': '60m', Containers: 'web,log'},
    ],
    [
      'Pod',
      {kind: 'Pod', metadata: meta('web'), spec: {nodeName: 'n1', containers: [{name: 'a'}, {name: 'b'}], readinessGates: [{conditionType: 'example.com/lb'}]}, status: {phase: 'Running', podIP: '10.0.0.5', conditions: [{type: 'example.com/lb', status: 'True'}], containerStatuses: [{ready: true, restartCount: 2, lastState: {terminated: {finishedAt: ago(90)}}}, {ready: false, restartCount: 1, lastState: {terminated: {finishedAt: ago(400)}}}]}},
      {Ready: '1/2', Status: 'Running', Restarts: '3 (90s ago)', IP: '10.0.0.5', Node: 'n1', 'Nominated Node': '<none>', 'Readiness Gates': '1/1'},
    ],
    [
      'Node',
      {kind: 'Node', metadata: meta('n1'), status: {conditions: [{type: 'Ready', status: 'True'}], addresses: [{type: 'Hostname', address: 'n1'}, {type: 'InternalIP', address: '192.0.2.7'}], nodeInfo: {kubeletVersion: 'v0.1.0', osImage: 'Debian GNU/Linux 12', kernelVersion: '6.1.0', containerRuntimeVersion: 'process://1'}}},
      {Status: 'Ready', 'Internal-IP': '192.0.2.7', 'External-IP': '<none>', 'OS-Image': 'Debian GNU/Linux 12', 'Kernel-Version': '6.1.0', 'Container-Runtime': 'process://1'},
    ],
    [
      'Service',
      {kind: 'Service', metadata: meta('web'), spec: {type: 'ClusterIP', clusterIP: '10.0.0.9', ports: [{port: 80, protocol: 'TCP'}], selector: {app: 'web'}}},
      {'Port(s)': '80/TCP', Selector: 'app=web'},
    ],
    [
      'Endpoints',
      {kind: 'Endpoints', metadata: meta('web'), subsets: [{addresses: [{ip: '10.0.0.1'}, {ip: '10.0.0.2'}], ports: [{port: 80}, {port: 443}]}]},
      {Endpoints: '10.0.0.1:80,10.0.0.1:443,10.0.0.2:80 + 1 more...'},
    ],
    ['Endpoints', {kind: 'Endpoints', metadata: meta('none')}, {Endpoints: '<none>'}],
    [
      'EndpointSlice',
      {kind: 'EndpointSlice', metadata: meta('web-abc'), addressType: 'IPv4', ports: [{port: 80}], endpoints: [{addresses: ['10.0.0.1']}, {addresses: ['10.0.0.2']}]},
      {AddressType: 'IPv4', Ports: '80', Endpoints: '10.0.0.1,10.0.0.2'},
    ],
    ['ServiceAccount', {kind: 'ServiceAccount', metadata: meta('default'), secrets: [{name: 't'}]}, {Secrets: 1}],
    ['Lease', {kind: 'Lease', metadata: meta('l'), spec: {holderIdentity: 'host_1'}}, {Holder: 'host_1'}],
    ['PriorityClass', {kind: 'PriorityClass', metadata: meta('high'), value: 1000, globalDefault: true}, {Value: 1000, 'Global-Default': true, PreemptionPolicy: 'PreemptLowerPriority'}],
    ['ClusterRole', {kind: 'ClusterRole', metadata: meta('view')}, {'Created At': ago(300)}],
    [
      'RoleBinding',
      {kind: 'RoleBinding', metadata: meta('rb'), roleRef: {kind: 'ClusterRole', name: 'view'}, subjects: [{kind: 'User', name: 'ann'}, {kind: 'Group', name: 'ops'}, {kind: 'ServiceAccount', namespace: 'ci', name: 'bot'}, {kind: 'User', name: 'bob'}]},
      {Role: 'ClusterRole/view', Users: 'ann, bob', Groups: 'ops', ServiceAccounts: 'ci/bot'},
    ],
  ])('%s', (kind, object, expected) => {
    expect(row(kind, object)).toMatchObject(expected);
  });

  it('marks the columns kubectl shows only with -o wide as priority 1', () => {
    const wide = (kind: string) => columnDefinitions(kind).filter((c) => c.priority === 1).map((c) => c.name);
    expect(wide('Event')).toEqual(['Subobject', 'Source', 'First Seen', 'Count', 'Name']);
    expect(wide('Deployment')).toEqual(['Containers', 'Images', 'Selector']);
    expect(wide('Pod')).toEqual(['IP', 'Node', 'Nominated Node', 'Readiness Gates']);
    expect(wide('RoleBinding')).toEqual(['Users', 'Groups', 'ServiceAccounts']);
  });

  it('falls back to NAME and AGE for a kind without printer columns', () => {
    expect(columnDefinitions('Widget').map((c) => c.name)).toEqual(['Name', 'Age']);
  });
});
