/**
 * The scheduler controller. Table tests of the pure decision (requests, node affinity operators,
 * taints and tolerations, filters, the LeastAllocated score, upstream's FitError message), then the
 * controller against the real REST API (startTestApi): pods land on the node their selector,
 * affinity, tolerations and requests allow, best-effort pods spread over equal nodes, a pod no node
 * fits gets a FailedScheduling event with upstream's message and PodScheduled=False, and is bound
 * once a node that fits appears or a bound pod goes away; repeated failures bump one event's count.
 */
import { describe, expect, it } from '@jest/globals';
import type { RunningController } from '../../src/daemons/controller-manager/controllers/types.js';
import { eventually, pause, useControllerHarness } from '../helpers/controller-harness.js';
import { clientListWatcher } from '../../src/client/informers/index.js';
import { selectControllers } from '../../src/daemons/controller-manager/controllers/index.js';
import {
  affinityNodeNames,
  allocatableOf,
  backoffMs,
  createSchedulerController,
  effectiveTaints,
  filterNode,
  leastAllocatedScore,
  matchesRequiredNodeAffinity,
  needsScheduling,
  nodeChangeMayHelp,
  nodeSelectorTermsMatch,
  nodeUsage,
  podRequests,
  schedulePod,
  schedulerController,
  toleratesTaint,
  untoleratedTaint,
  type Container,
  type Node,
  type NodeSelectorRequirement,
  type Pod,
  type Taint,
  type Toleration,
} from '../../src/daemons/controller-manager/controllers/scheduler.js';
import { call } from '../helpers/memory-store.js';

const Mi = 1024 * 1024;
const Gi = 1024 * Mi;

// ---------------------------------------------------------------------------------------------
// Builders.

interface NodeFields {
  cpu?: string;
  memory?: string;
  pods?: string;
  labels?: Record<string, string>;
  taints?: Taint[];
  unschedulable?: boolean;
  /** The Ready condition's status; undefined: no conditions at all. */
  ready?: 'True' | 'False' | 'Unknown' | undefined;
}

function node(name: string, fields: NodeFields = {}): Node {
  const ready = 'ready' in fields ? fields.ready : 'True';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: fields.labels ?? {} },
    spec: { ...(fields.taints ? { taints: fields.taints } : {}), ...(fields.unschedulable ? { unschedulable: true } : {}) },
    status: {
      allocatable: { cpu: fields.cpu ?? '4', memory: fields.memory ?? '8Gi', pods: fields.pods ?? '110' },
      ...(ready ? { conditions: [{ type: 'Ready', status: ready }] } : {}),
    },
  };
}

interface PodFields {
  cpu?: string;
  memory?: string;
  nodeName?: string;
  phase?: string;
  nodeSelector?: Record<string, string>;
  terms?: { matchExpressions?: NodeSelectorRequirement[]; matchFields?: NodeSelectorRequirement[] }[];
  tolerations?: Toleration[];
  schedulerName?: string;
  preemptionPolicy?: string;
}

function pod(name: string, fields: PodFields = {}): Pod {
  const requests = { ...(fields.cpu ? { cpu: fields.cpu } : {}), ...(fields.memory ? { memory: fields.memory } : {}) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: 'default' },
    spec: {
      containers: [{ name: 'c', resources: { requests } }],
      ...(fields.nodeName ? { nodeName: fields.nodeName } : {}),
      ...(fields.nodeSelector ? { nodeSelector: fields.nodeSelector } : {}),
      ...(fields.terms ? { affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: fields.terms } } } } : {}),
      ...(fields.tolerations ? { tolerations: fields.tolerations } : {}),
      ...(fields.schedulerName ? { schedulerName: fields.schedulerName } : {}),
      ...(fields.preemptionPolicy ? { preemptionPolicy: fields.preemptionPolicy } : {}),
    },
    status: { phase: fields.phase ?? 'Pending' },
  };
}

const container = (requests: Record<string, string> = {}, extra: Partial<Container> & { limits?: Record<string, string> } = {}): Container => ({
  name: 'c',
  ...(extra.restartPolicy ? { restartPolicy: extra.restartPolicy } : {}),
  resources: { requests, ...(extra.limits ? { limits: extra.limits } : {}) },
});

// ---------------------------------------------------------------------------------------------
// Pure.

describe('needsScheduling', () => {
  it.each<[string, Pod, boolean]>([
    ['a pending pod without a node', pod('p'), true],
    ['a pod without a phase yet', { ...pod('p'), status: {} }, true],
    ['a pod already bound', pod('p', { nodeName: 'n' }), false],
    ['a pod being deleted', { ...pod('p'), metadata: { name: 'p', namespace: 'default', deletionTimestamp: '2024-01-01T00:00:00Z' } }, false],
    ['a pod that failed', pod('p', { phase: 'Failed' }), false],
    ['a pod for default-scheduler', pod('p', { schedulerName: 'default-scheduler' }), true],
    ['a pod for another scheduler', pod('p', { schedulerName: 'my-scheduler' }), false],
    ['a pod with scheduling gates', { ...pod('p'), spec: { ...pod('p').spec, schedulingGates: [{ name: 'wait' }] } }, false],
  ])('%s: %s', (_what, p, expected) => {
    expect(needsScheduling(p)).toBe(expected);
  });
});

describe('podRequests (upstream resourcehelper.PodRequests)', () => {
  const withContainers = (containers: Container[], initContainers: Container[] = [], overhead?: Record<string, string>): Pod => ({
    metadata: { name: 'p' },
    spec: { containers, initContainers, ...(overhead ? { overhead } : {}) },
  });
  it.each<[string, Pod, boolean, { milliCpu: number; memory: number }]>([
    ['containers add up', withContainers([container({ cpu: '100m', memory: '64Mi' }), container({ cpu: '200m', memory: '64Mi' })]), false, { milliCpu: 300, memory: 128 * Mi }],
    ['decimal cpu without float noise', withContainers([container({ cpu: '0.1' })]), false, { milliCpu: 100, memory: 0 }],
    ['a bigger init container sets the pod request', withContainers([container({ cpu: '100m' })], [container({ cpu: '1', memory: '1Gi' })]), false, { milliCpu: 1000, memory: Gi }],
    ['a smaller init container does not add', withContainers([container({ cpu: '500m' })], [container({ cpu: '100m' })]), false, { milliCpu: 500, memory: 0 }],
    [
      'sidecars add to the sum and to later init containers',
      withContainers([container({ cpu: '100m' })], [container({ cpu: '200m' }, { restartPolicy: 'Always' }), container({ cpu: '500m' })]),
      false,
      { milliCpu: 700, memory: 0 },
    ],
    ['limits stand in for missing requests', withContainers([container({}, { limits: { cpu: '250m', memory: '1Gi' } })]), false, { milliCpu: 250, memory: Gi }],
    ['overhead is added', withContainers([container({ cpu: '100m' })], [], { cpu: '50m', memory: '10Mi' }), false, { milliCpu: 150, memory: 10 * Mi }],
    ['no requests: zero', withContainers([container()]), false, { milliCpu: 0, memory: 0 }],
    ['no requests, for scoring: 100m and 200Mi per container', withContainers([container(), container({ cpu: '1' })]), true, { milliCpu: 1100, memory: 400 * Mi }],
    ['an explicit zero stays zero for scoring', withContainers([container({ cpu: '0', memory: '0' })]), true, { milliCpu: 0, memory: 0 }],
  ])('%s', (_what, p, nonZero, expected) => {
    expect(podRequests(p, nonZero)).toEqual(expected);
  });

  it('counts on a node only the pods bound to it that have not finished', () => {
    const usage = nodeUsage([
      pod('a', { nodeName: 'n1', cpu: '1', memory: '1Gi', phase: 'Running' }),
      pod('b', { nodeName: 'n1', cpu: '500m' }),
      pod('c', { nodeName: 'n1', cpu: '8', phase: 'Succeeded' }),
      pod('d', { nodeName: 'n2', cpu: '2', phase: 'Failed' }),
      pod('e', { cpu: '4' }),
    ]);
    expect(usage.get('n1')).toEqual({ requested: { milliCpu: 1500, memory: Gi }, nonZeroRequested: { milliCpu: 1500, memory: Gi + 200 * Mi }, pods: 2 });
    expect(usage.has('n2')).toBe(false);
    expect([...usage.keys()]).toEqual(['n1']);
  });

  it('reads allocatable cpu, memory and pods', () => {
    expect(allocatableOf(node('n', { cpu: '3500m', memory: '2Gi', pods: '10' }))).toEqual({ milliCpu: 3500, memory: 2 * Gi, pods: 10 });
    expect(allocatableOf({ metadata: { name: 'bare' } })).toEqual({ milliCpu: 0, memory: 0, pods: 0 });
  });
});

describe('node affinity', () => {
  const labelled = node('node-1', { labels: { zone: 'a', gen: '5', ssd: '', word: 'five' } });
  const expr = (key: string, operator: string, values?: string[]): NodeSelectorRequirement => ({ key, operator, ...(values ? { values } : {}) });
  it.each<[string, NodeSelectorRequirement, boolean]>([
    ['In, value listed', expr('zone', 'In', ['b', 'a']), true],
    ['In, value not listed', expr('zone', 'In', ['b']), false],
    ['In, label missing', expr('rack', 'In', ['a']), false],
    ['In without values is malformed', expr('zone', 'In', []), false],
    ['NotIn, value not listed', expr('zone', 'NotIn', ['b']), true],
    ['NotIn, value listed', expr('zone', 'NotIn', ['a']), false],
    ['NotIn, label missing', expr('rack', 'NotIn', ['a']), true],
    ['Exists, empty value', expr('ssd', 'Exists'), true],
    ['Exists, label missing', expr('rack', 'Exists'), false],
    ['Exists with values is malformed', expr('ssd', 'Exists', ['x']), false],
    ['DoesNotExist, label missing', expr('rack', 'DoesNotExist'), true],
    ['DoesNotExist, label present', expr('zone', 'DoesNotExist'), false],
    ['Gt, greater', expr('gen', 'Gt', ['4']), true],
    ['Gt, equal', expr('gen', 'Gt', ['5']), false],
    ['Lt, smaller', expr('gen', 'Lt', ['6']), true],
    ['Lt, equal', expr('gen', 'Lt', ['5']), false],
    ['Gt on a label that is not an integer', expr('word', 'Gt', ['1']), false],
    ['Gt on a missing label', expr('rack', 'Gt', ['1']), false],
    ['Gt with two values is malformed', expr('gen', 'Gt', ['1', '2']), false],
    ['an unknown operator', expr('zone', 'Like', ['a']), false],
  ])('matchExpressions %s', (_what, requirement, expected) => {
    expect(nodeSelectorTermsMatch([{ matchExpressions: [requirement] }], labelled)).toBe(expected);
  });

  it.each<[string, NodeSelectorRequirement, boolean]>([
    ['metadata.name In, this node', expr('metadata.name', 'In', ['node-1']), true],
    ['metadata.name In, another node', expr('metadata.name', 'In', ['node-2']), false],
    ['metadata.name NotIn, another node', expr('metadata.name', 'NotIn', ['node-2']), true],
    ['metadata.name NotIn, this node', expr('metadata.name', 'NotIn', ['node-1']), false],
    ['metadata.name In with two values is malformed', expr('metadata.name', 'In', ['node-1', 'node-2']), false],
    ['metadata.name Exists is malformed', expr('metadata.name', 'Exists'), false],
  ])('matchFields %s', (_what, requirement, expected) => {
    expect(nodeSelectorTermsMatch([{ matchFields: [requirement] }], labelled)).toBe(expected);
  });

  it.each<[string, Parameters<typeof nodeSelectorTermsMatch>[0], boolean]>([
    ['no terms match nothing', [], false],
    ['an empty term matches nothing', [{}], false],
    ['expressions of a term are ANDed (one fails)', [{ matchExpressions: [expr('zone', 'In', ['a']), expr('gen', 'Gt', ['9'])] }], false],
    ['expressions of a term are ANDed (all hold)', [{ matchExpressions: [expr('zone', 'In', ['a']), expr('gen', 'Gt', ['1'])] }], true],
    ['expressions and fields are ANDed', [{ matchExpressions: [expr('zone', 'In', ['a'])], matchFields: [expr('metadata.name', 'In', ['node-2'])] }], false],
    ['terms are ORed', [{ matchExpressions: [expr('zone', 'In', ['z'])] }, { matchExpressions: [expr('ssd', 'Exists')] }], true],
    ['a malformed term does not spoil the others', [{ matchExpressions: [expr('zone', 'In', [])] }, { matchExpressions: [expr('zone', 'In', ['a'])] }], true],
  ])('%s', (_what, terms, expected) => {
    expect(nodeSelectorTermsMatch(terms, labelled)).toBe(expected);
  });

  it.each<[string, PodFields, boolean]>([
    ['nodeSelector matching every label', { nodeSelector: { zone: 'a', gen: '5' } }, true],
    ['nodeSelector with one label off', { nodeSelector: { zone: 'a', gen: '6' } }, false],
    ['nodeSelector and matching terms', { nodeSelector: { zone: 'a' }, terms: [{ matchExpressions: [expr('ssd', 'Exists')] }] }, true],
    ['nodeSelector matching, terms not', { nodeSelector: { zone: 'a' }, terms: [{ matchExpressions: [expr('ssd', 'DoesNotExist')] }] }, false],
    ['neither', {}, true],
  ])('required node affinity: %s', (_what, fields, expected) => {
    expect(matchesRequiredNodeAffinity(pod('p', fields), labelled)).toBe(expected);
  });

  it.each<[string, PodFields['terms'], string[] | 'conflict' | undefined]>([
    ['no affinity', undefined, undefined],
    ['every term names nodes', [{ matchFields: [expr('metadata.name', 'In', ['a'])] }, { matchFields: [expr('metadata.name', 'In', ['b'])] }], ['a', 'b']],
    ['one term names no node (any node may do)', [{ matchFields: [expr('metadata.name', 'In', ['a'])] }, { matchExpressions: [expr('zone', 'Exists')] }], undefined],
    ['names within a term intersect', [{ matchFields: [expr('metadata.name', 'In', ['a', 'b']), expr('metadata.name', 'In', ['b', 'c'])] }], ['b']],
    ['no name left', [{ matchFields: [expr('metadata.name', 'In', ['a']), expr('metadata.name', 'In', ['b'])] }], 'conflict'],
  ])('node names of the affinity: %s', (_what, terms, expected) => {
    const names = affinityNodeNames(pod('p', terms ? { terms } : {}));
    expect(names instanceof Set ? [...names].sort() : names).toEqual(expected);
  });
});

describe('taints and tolerations', () => {
  const taint: Taint = { key: 'dedicated', value: 'gpu', effect: 'NoSchedule' };
  it.each<[string, Toleration, boolean]>([
    ['Equal with key, value and effect', { key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }, true],
    ['no operator means Equal', { key: 'dedicated', value: 'gpu' }, true],
    ['Equal with another value', { key: 'dedicated', operator: 'Equal', value: 'cpu' }, false],
    ['Exists with the key, any value', { key: 'dedicated', operator: 'Exists' }, true],
    ['Exists with another key', { key: 'other', operator: 'Exists' }, false],
    ['another effect', { key: 'dedicated', operator: 'Exists', effect: 'NoExecute' }, false],
    ['empty key with Exists tolerates everything', { operator: 'Exists' }, true],
    ['an unknown operator', { key: 'dedicated', operator: 'Like', value: 'gpu' }, false],
  ])('%s', (_what, toleration, expected) => {
    expect(toleratesTaint(toleration, taint)).toBe(expected);
  });

  it('finds the first NoSchedule/NoExecute taint no toleration covers, ignoring PreferNoSchedule', () => {
    const taints: Taint[] = [
      { key: 'soft', effect: 'PreferNoSchedule' },
      { key: 'a', value: '1', effect: 'NoSchedule' },
      { key: 'b', effect: 'NoExecute' },
    ];
    expect(untoleratedTaint(taints, [])).toEqual(taints[1]);
    expect(untoleratedTaint(taints, [{ key: 'a', operator: 'Exists' }])).toEqual(taints[2]);
    expect(untoleratedTaint(taints, [{ key: 'a', operator: 'Exists' }, { key: 'b', operator: 'Exists', effect: 'NoExecute' }])).toBeUndefined();
  });

  it.each<[string, NodeFields, Taint[]]>([
    ['a Ready node keeps its taints', { taints: [{ key: 'x', effect: 'NoSchedule' }] }, [{ key: 'x', effect: 'NoSchedule' }]],
    ['Ready=False adds not-ready', { ready: 'False' }, [{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }]],
    ['Ready=Unknown adds unreachable', { ready: 'Unknown' }, [{ key: 'node.orch.io/unreachable', effect: 'NoSchedule' }]],
    ['no status yet adds not-ready', { ready: undefined }, [{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }]],
    ['the lifecycle taint is not doubled', { ready: 'False', taints: [{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }] }, [{ key: 'node.orch.io/not-ready', effect: 'NoSchedule' }]],
  ])('effective taints: %s', (_what, fields, expected) => {
    expect(effectiveTaints(node('n', fields))).toEqual(expected);
  });
});

describe('filterNode (first failing filter, in upstream order)', () => {
  const tainted = { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] };
  it.each<[string, PodFields, NodeFields, Pod[], string[] | undefined]>([
    ['a plain pod on a plain node fits', {}, {}, [], undefined],
    ['a cordoned node', {}, { unschedulable: true }, [], ['node(s) were unschedulable']],
    ['a cordoned node, tolerated', { tolerations: [{ key: 'node.orch.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }] }, { unschedulable: true }, [], undefined],
    ['cordon is checked before taints', {}, { unschedulable: true, ...tainted }, [], ['node(s) were unschedulable']],
    ['an untolerated taint', {}, tainted, [], ['node(s) had untolerated taint {dedicated: gpu}']],
    ['a tolerated taint', { tolerations: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }, tainted, [], undefined],
    ['a node that is not Ready', {}, { ready: 'False' }, [], ['node(s) had untolerated taint {node.orch.io/not-ready: }']],
    ['a node that is not Ready, tolerated by a tolerate-all pod', { tolerations: [{ operator: 'Exists' }] }, { ready: 'False' }, [], undefined],
    ['taints are checked before affinity', { nodeSelector: { zone: 'x' } }, tainted, [], ['node(s) had untolerated taint {dedicated: gpu}']],
    ['a node selector not matching', { nodeSelector: { zone: 'x' } }, { labels: { zone: 'y' } }, [], ["node(s) didn't match Pod's node affinity/selector"]],
    ['affinity is checked before resources', { nodeSelector: { zone: 'x' }, cpu: '64' }, {}, [], ["node(s) didn't match Pod's node affinity/selector"]],
    ['too much cpu and memory: both reasons', { cpu: '5', memory: '9Gi' }, {}, [], ['Insufficient cpu', 'Insufficient memory']],
    ['exactly the allocatable fits', { cpu: '4', memory: '8Gi' }, {}, [], undefined],
    ['requests of bound pods count', { cpu: '2' }, {}, [pod('a', { nodeName: 'n', cpu: '2500m' })], ['Insufficient cpu']],
    ['finished pods do not count', { cpu: '2' }, {}, [pod('a', { nodeName: 'n', cpu: '4', phase: 'Succeeded' })], undefined],
    ['the pod count is full', {}, { pods: '1' }, [pod('a', { nodeName: 'n' })], ['Too many pods']],
    ['a full node with too little cpu too', { cpu: '8' }, { pods: '1' }, [pod('a', { nodeName: 'n' })], ['Too many pods', 'Insufficient cpu']],
    ['a best-effort pod needs only a pod slot', {}, { cpu: '0', memory: '0' }, [], undefined],
  ])('%s', (_what, podFields, nodeFields, bound, expected) => {
    const status = filterNode(pod('p', podFields), node('n', nodeFields), nodeUsage(bound).get('n'));
    expect(status?.reasons).toEqual(expected);
  });
});

describe('leastAllocatedScore (upstream NodeResourcesFit LeastAllocated)', () => {
  it.each<[string, { milliCpu: number; memory: number }, Pod[], NodeFields, number]>([
    ['an empty node, a small pod', { milliCpu: 1000, memory: 2 * Gi }, [], { cpu: '4', memory: '8Gi' }, 75],
    ['cpu and memory are averaged', { milliCpu: 2000, memory: 0 }, [], { cpu: '4', memory: '8Gi' }, 75],
    ['what is bound counts', { milliCpu: 1000, memory: 0 }, [pod('a', { nodeName: 'n', cpu: '1', memory: '4Gi' })], { cpu: '4', memory: '8Gi' }, 50],
    ['integer division as upstream', { milliCpu: 1000, memory: 0 }, [], { cpu: '3', memory: '8Gi' }, 83],
    ['overcommitted: zero for that resource', { milliCpu: 5000, memory: 0 }, [], { cpu: '4', memory: '8Gi' }, 50],
    ['a resource the node has none of is left out', { milliCpu: 1000, memory: 0 }, [], { cpu: '4', memory: '0' }, 75],
  ])('%s', (_what, request, bound, nodeFields, expected) => {
    expect(leastAllocatedScore(request, nodeUsage(bound).get('n'), allocatableOf(node('n', nodeFields)))).toBe(expected);
  });
});

describe('schedulePod', () => {
  it('binds to the least allocated node that fits', () => {
    const nodes = [node('small', { cpu: '2', memory: '4Gi' }), node('big', { cpu: '8', memory: '16Gi' }), node('busy', { cpu: '8', memory: '16Gi' })];
    const bound = [pod('x', { nodeName: 'busy', cpu: '4', memory: '8Gi' })];
    expect(schedulePod(pod('p', { cpu: '1', memory: '1Gi' }), nodes, bound)).toEqual({ node: 'big', score: 90 });
  });

  it('breaks a tie by node name', () => {
    const nodes = [node('w2'), node('w3'), node('w1')];
    expect(schedulePod(pod('p'), nodes, [])).toMatchObject({ node: 'w1' });
  });

  it('spreads best-effort pods by counting them at the non-zero defaults', () => {
    const nodes = [node('w1'), node('w2')];
    expect(schedulePod(pod('p'), nodes, [pod('first', { nodeName: 'w1' })])).toMatchObject({ node: 'w2' });
  });

  it("says why no node fits in upstream's words: sorted counts of reasons, then preemption's", () => {
    const nodes = [
      node('a', { cpu: '1', labels: { zone: 'a' } }),
      node('b', { cpu: '1', labels: { zone: 'b' } }),
      node('c', { cpu: '8', labels: { zone: 'c' } }),
    ];
    const p = pod('p', { cpu: '2', terms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['c'] }] }] });
    expect(schedulePod(p, nodes, [])).toEqual({
      message:
        "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu. " +
        'preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..',
    });
  });

  it.each<[string, Node[], Pod, Pod[], string]>([
    ['no nodes at all', [], pod('p'), [], 'no nodes available to schedule pods'],
    [
      'every reason of a node counts, and reasons of different filters mix',
      [node('a', { cpu: '1', memory: '1Gi' }), node('b', { unschedulable: true }), node('c', { taints: [{ key: 'k', value: 'v', effect: 'NoExecute' }] })],
      pod('p', { cpu: '2', memory: '2Gi' }),
      [],
      '0/3 nodes are available: 1 Insufficient cpu, 1 Insufficient memory, 1 node(s) had untolerated taint {k: v}, 1 node(s) were unschedulable. ' +
        'preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..',
    ],
    [
      'a full node',
      [node('a', { pods: '1' })],
      pod('p'),
      [pod('x', { nodeName: 'a' })],
      '0/1 nodes are available: 1 Too many pods. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..',
    ],
    [
      'a pod that may not preempt',
      [node('a', { cpu: '1' })],
      pod('p', { cpu: '2', preemptionPolicy: 'Never' }),
      [],
      '0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..',
    ],
    [
      'affinity naming nodes leaves the others out',
      [node('a'), node('b'), node('c', { cpu: '1' })],
      pod('p', { cpu: '2', terms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['c'] }] }] }),
      [],
      "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't satisfy plugin(s) [NodeAffinity]. " +
        'preemption: 0/3 nodes are available: 1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling..',
    ],
    [
      'affinity terms naming no node',
      [node('a'), node('b')],
      pod('p', { terms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }, { key: 'metadata.name', operator: 'In', values: ['b'] }] }] }),
      [],
      '0/2 nodes are available: pod affinity terms conflict. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..',
    ],
  ])('unschedulable: %s', (_what, nodes, p, bound, message) => {
    expect(schedulePod(p, nodes, bound)).toEqual({ message });
  });

  it('places a pod on a node named by its affinity', () => {
    const p = pod('p', { terms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['b'] }] }] });
    expect(schedulePod(p, [node('a'), node('b'), node('c')], [])).toMatchObject({ node: 'b' });
  });
});

describe('retry rules', () => {
  it.each<[string, NodeFields, NodeFields, boolean]>([
    ['a heartbeat (nothing the filters read)', {}, {}, false],
    ['more allocatable cpu', { cpu: '1' }, { cpu: '2' }, true],
    ['a new label', {}, { labels: { zone: 'a' } }, true],
    ['a taint removed', { taints: [{ key: 'k', effect: 'NoSchedule' }] }, {}, true],
    ['uncordoned', { unschedulable: true }, {}, true],
    ['became Ready', { ready: 'False' }, { ready: 'True' }, true],
  ])('a node change may let a pod fit: %s', (_what, before, after, expected) => {
    expect(nodeChangeMayHelp(node('n', before), node('n', after))).toBe(expected);
  });

  it.each([
    [1, 1000],
    [2, 2000],
    [4, 8000],
    [5, 10_000],
    [50, 10_000],
  ])('back-off after %i failed attempts: %i ms', (attempts, expected) => {
    expect(backoffMs(attempts, 1000, 10_000)).toBe(expected);
  });
});

describe('registration', () => {
  it('is off by default and turned on by --controllers=*,scheduler', () => {
    expect(schedulerController.enabledByDefault).toBe(false);
    expect(selectControllers(['*']).map((c) => c.name)).not.toContain('scheduler');
    expect(selectControllers(['*', 'scheduler']).map((c) => c.name)).toContain('scheduler');
  });
});

// ---------------------------------------------------------------------------------------------
// The controller against the REST API.

const PODS = '/api/v1/namespaces/default/pods';

describe('scheduler controller', () => {
  const h = useControllerHarness();

  async function startScheduler(timing = { initialBackoffMs: 20, maxBackoffMs: 100, maxInUnschedulableMs: 60_000 }): Promise<RunningController> {
    return h.start(createSchedulerController(timing));
  }

  async function createNode(n: Node): Promise<void> {
    const created = await call(h.api, 'POST', '/api/v1/nodes', { body: { ...n, status: undefined } });
    if (created.status !== 201) throw new Error(`create node: ${created.status} ${created.text}`);
    const patched = await call(h.api, 'PATCH', `/api/v1/nodes/${n.metadata?.name}/status`, { body: { status: n.status }, contentType: 'application/merge-patch+json' });
    if (patched.status !== 200) throw new Error(`node status: ${patched.status} ${patched.text}`);
  }

  async function createPod(p: Pod): Promise<void> {
    const { status: _status, ...body } = p;
    const reply = await call(h.api, 'POST', PODS, { body: { ...body, spec: { ...body.spec, containers: body.spec?.containers?.map((c) => ({ ...c, image: 'busybox' })) } } });
    if (reply.status !== 201) throw new Error(`create pod: ${reply.status} ${reply.text}`);
  }

  async function getPod(name: string): Promise<Pod> {
    return (await call(h.api, 'GET', `${PODS}/${name}`)).body as Pod;
  }

  const boundNode = async (name: string) => (await getPod(name)).spec?.nodeName;

  async function eventsOf(name: string): Promise<{ type: string; reason: string; message: string; count: number; source?: { component?: string } }[]> {
    const list = (await call(h.api, 'GET', '/api/v1/namespaces/default/events')).body as { items: any[] };
    return list.items.filter((e) => e.involvedObject?.name === name && e.involvedObject?.kind === 'Pod');
  }

  it('binds each pod to the node its selector, affinity, tolerations and requests allow', async () => {
    await createNode(node('gpu', { labels: { accelerator: 'gpu', zone: 'a' }, taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] }));
    await createNode(node('small', { labels: { zone: 'a' }, cpu: '1', memory: '1Gi' }));
    await createNode(node('big', { labels: { zone: 'b' }, cpu: '8', memory: '16Gi' }));
    await createNode(node('cordoned', { cpu: '64', unschedulable: true }));
    await createNode(node('down', { cpu: '64', ready: 'False' }));
    await startScheduler();

    const placements: [Pod, string][] = [
      [pod('wants-gpu', { nodeSelector: { accelerator: 'gpu' }, tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }] }), 'gpu'],
      // Zone a without the gpu toleration: only `small`.
      [pod('zone-a', { terms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }] }), 'small'],
      // Six cores fit only `big` among the usable nodes.
      [pod('six-cores', { cpu: '6' }), 'big'],
      // Thirty-two cores fit only the cordoned node, and this pod tolerates the cordon.
      [pod('tolerates-cordon', { cpu: '32', tolerations: [{ key: 'node.orch.io/unschedulable', operator: 'Exists' }] }), 'cordoned'],
    ];
    for (const [p] of placements) await createPod(p);
    await createPod(pod('other-scheduler', { schedulerName: 'my-scheduler' }));

    for (const [p, expected] of placements) expect(await eventually(() => boundNode(p.metadata!.name!))).toBe(expected);
    const bound = await getPod('wants-gpu');
    expect(bound.status?.conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'PodScheduled', status: 'True' })]));
    expect(await eventually(async () => (await eventsOf('wants-gpu')).find((e) => e.reason === 'Scheduled'))).toMatchObject({
      type: 'Normal',
      message: 'Successfully assigned default/wants-gpu to gpu',
      source: { component: 'default-scheduler' },
    });
    await pause(200);
    expect(await boundNode('other-scheduler')).toBeUndefined();
    expect(h.running!.snapshot()).toMatchObject({ name: 'scheduler', details: { scheduled: 4 } });
  });

  it('spreads best-effort pods over equal nodes, the first to the first name', async () => {
    await createNode(node('w2'));
    await createNode(node('w1'));
    await startScheduler();
    const placed: string[] = [];
    for (const name of ['p1', 'p2', 'p3', 'p4']) {
      await createPod(pod(name));
      placed.push(await eventually(() => boundNode(name)));
    }
    expect(placed).toEqual(['w1', 'w2', 'w1', 'w2']);
  });

  it('records FailedScheduling when no node fits, and binds once a node that fits appears', async () => {
    await createNode(node('a', { cpu: '1', labels: { zone: 'a' } }));
    await createNode(node('b', { cpu: '1', labels: { zone: 'b' } }));
    await createNode(node('c', { cpu: '8', labels: { zone: 'c' } }));
    await startScheduler();
    await createPod(pod('picky', { cpu: '2', terms: [{ matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['c'] }] }] }));

    const message =
      "0/3 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, 2 Insufficient cpu. " +
      'preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..';
    const failed = await eventually(async () => (await eventsOf('picky')).find((e) => e.reason === 'FailedScheduling'));
    expect(failed).toMatchObject({ type: 'Warning', message, source: { component: 'default-scheduler' } });
    const pending = await eventually(async () => {
      const p = await getPod('picky');
      return p.status?.conditions?.some((c) => c.type === 'PodScheduled') && p;
    });
    expect(pending.status?.conditions).toContainEqual(expect.objectContaining({ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }));
    expect(pending.spec?.nodeName).toBeUndefined();

    await createNode(node('d', { cpu: '4', labels: { zone: 'd' } }));
    expect(await eventually(() => boundNode('picky'))).toBe('d');
    expect(await eventually(async () => (await getPod('picky')).status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'True'))).toBeTruthy();
  });

  it('counts the pods it just bound, and places a waiting pod once a bound one goes away', async () => {
    await createNode(node('a', { cpu: '1' }));
    await createNode(node('b', { cpu: '1' }));
    await startScheduler();
    for (const name of ['first', 'second', 'third']) await createPod(pod(name, { cpu: '600m' }));

    const message = '0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..';
    await eventually(async () => (await eventsOf('third')).find((e) => e.message === message));
    const nodes = [await boundNode('first'), await boundNode('second')];
    expect(nodes.sort()).toEqual(['a', 'b']);
    expect(await boundNode('third')).toBeUndefined();

    const freed = await boundNode('first');
    const deleted = await call(h.api, 'DELETE', `${PODS}/first`, { body: { kind: 'DeleteOptions', apiVersion: 'v1', gracePeriodSeconds: 0 } });
    expect(deleted.status).toBe(200);
    expect(await eventually(() => boundNode('third'))).toBe(freed);
  });

  it('counts a pod it bound before the pod watch shows it bound', async () => {
    // A pod watch that lags 300ms behind the store: the cache still shows the first pod unbound
    // when the second is scheduled, so only the scheduler's own record keeps both off one node.
    await h.replaceListWatcher((_ref, path) => {
        const inner = clientListWatcher(h.client, path);
        if (!path.endsWith('/pods')) return inner;
        return {
          list: (options) => inner.list(options),
          watch(options, onEvent, onEnd) {
            let closed = false;
            const handle = inner.watch(options, (event) => void setTimeout(() => !closed && onEvent(event), 300), onEnd);
            return { close: () => ((closed = true), handle.close()) };
          },
        };
    });
    await createNode(node('a', { cpu: '1' }));
    await createNode(node('b', { cpu: '1' }));
    await startScheduler();
    await createPod(pod('first', { cpu: '600m' }));
    await createPod(pod('second', { cpu: '600m' }));
    const nodes = [await eventually(() => boundNode('first')), await eventually(() => boundNode('second'))];
    expect(nodes.sort()).toEqual(['a', 'b']);
  });

  it('places a waiting pod once a bound pod on a full node finishes', async () => {
    await createNode(node('one', { pods: '1' }));
    await startScheduler();
    await createPod(pod('runner'));
    expect(await eventually(() => boundNode('runner'))).toBe('one');
    await createPod(pod('waiter'));
    await eventually(async () => (await eventsOf('waiter')).find((e) => e.message.startsWith('0/1 nodes are available: 1 Too many pods.')));

    const finished = await call(h.api, 'PATCH', `${PODS}/runner/status`, { body: { status: { phase: 'Succeeded' } }, contentType: 'application/merge-patch+json' });
    expect(finished.status).toBe(200);
    expect(await eventually(() => boundNode('waiter'))).toBe('one');
  });

  it('retries an unschedulable pod with back-off and counts repeats on one event', async () => {
    await createNode(node('tiny', { cpu: '1' }));
    await startScheduler({ initialBackoffMs: 20, maxBackoffMs: 100, maxInUnschedulableMs: 150 });
    await createPod(pod('huge', { cpu: '2' }));
    const repeated = await eventually(async () => {
      const failures = (await eventsOf('huge')).filter((e) => e.reason === 'FailedScheduling');
      return failures.length === 1 && failures[0].count >= 3 && failures;
    });
    expect(repeated[0].message).toBe('0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..');
    expect(h.running!.snapshot().details).toMatchObject({ unschedulable: 1 });
  });

  it('leaves a pod alone when no node exists, saying so, and binds it when a Ready node registers', async () => {
    await startScheduler();
    await createPod(pod('early'));
    expect(await eventually(async () => (await eventsOf('early')).find((e) => e.reason === 'FailedScheduling'))).toMatchObject({ message: 'no nodes available to schedule pods' });
    await createNode(node('late', { ready: 'False' }));
    await pause(150);
    expect(await boundNode('early')).toBeUndefined();
    const ready = await call(h.api, 'PATCH', '/api/v1/nodes/late/status', { body: { status: { conditions: [{ type: 'Ready', status: 'True' }] } }, contentType: 'application/merge-patch+json' });
    expect(ready.status).toBe(200);
    expect(await eventually(() => boundNode('early'))).toBe('late');
  });

  it('stops when aborted', async () => {
    const controller = await startScheduler();
    h.abort();
    await expect(controller.done).resolves.toBeUndefined();
  });
});
