/**
 * The resource metrics API's pure parts under orch's own names: the paths it answers (metrics.orch.io),
 * the discovery entries, and metrics-server's objects and quantities from summary statistics.
 */
import {describe, expect, it} from '@jest/globals';
import {metricsResources, nodeMetrics, parseMetricsPath, podMetrics, usageOf, windowText} from '../../src/daemons/apiserver/resource-metrics/index.js';
import {names} from '../../src/api/names.js';

const time = '2024-05-01T10:00:00.123Z';
const now = new Date('2024-05-01T10:00:01Z');

describe('the metrics API paths and discovery under orch\'s names', () => {
  it('answers the nodes and pods paths of metrics.<domain>/v1beta1, and leaves discovery to the API handler', () => {
    const g = `/apis/${names().groups.metrics}/v1beta1`;
    expect(names().groups.metrics).toBe('metrics.orch.io');
    expect(parseMetricsPath(`${g}/nodes`)).toEqual({resource: 'nodes', name: undefined});
    expect(parseMetricsPath(`${g}/nodes/n1`)).toEqual({resource: 'nodes', name: 'n1'});
    expect(parseMetricsPath(`${g}/pods`)).toEqual({resource: 'pods'});
    expect(parseMetricsPath(`${g}/namespaces/ns/pods`)).toEqual({resource: 'pods', namespace: 'ns', name: undefined});
    expect(parseMetricsPath(`${g}/namespaces/ns/pods/p`)).toEqual({resource: 'pods', namespace: 'ns', name: 'p'});
    for (const other of [g, `/apis/${names().groups.metrics}`, '/apis/metrics.k8s.io/v1beta1/nodes', `${g}/namespaces/ns/pods/p/extra`, `${g}/services`]) {
      expect(parseMetricsPath(other)).toBeUndefined();
    }
  });

  it('lists NodeMetrics and PodMetrics with get and list only', () => {
    expect(metricsResources().map((r) => [r.group, r.version, r.plural, r.kind, r.namespaced, r.verbs])).toEqual([
      ['metrics.orch.io', 'v1beta1', 'nodes', 'NodeMetrics', false, ['get', 'list']],
      ['metrics.orch.io', 'v1beta1', 'pods', 'PodMetrics', true, ['get', 'list']],
    ]);
  });
});

describe('metrics-server\'s objects', () => {
  it('writes CPU in canonical nano-core quantities and memory as BinarySI bytes', () => {
    expect(usageOf({time, usageNanoCores: 137146813}, {time, workingSetBytes: 1863508 * 1024})).toEqual({cpu: '137146813n', memory: '1863508Ki'});
    expect(usageOf({time, usageNanoCores: 500_000_000}, {time, workingSetBytes: 1024 ** 2})).toEqual({cpu: '500m', memory: '1Mi'});
    expect(usageOf({time, usageNanoCores: 2e9}, {time, workingSetBytes: 1000})).toEqual({cpu: '2', memory: '1k'});
    expect(usageOf({time}, {time, workingSetBytes: 1})).toBeUndefined();
  });

  it('writes the window as Go\'s Duration does', () => {
    expect([10_000, 10_500, 60_000, 75_250].map(windowText)).toEqual(['10s', '10.5s', '1m0s', '1m15.25s']);
  });

  it('builds NodeMetrics and PodMetrics; a pod with a running container lacking stats has none', () => {
    const node = nodeMetrics({name: 'n1', labels: {a: 'b'}}, {nodeName: 'n1', startTime: time, cpu: {time, usageNanoCores: 1e9}, memory: {time, workingSetBytes: 2048}}, now);
    expect(node).toEqual({
      kind: 'NodeMetrics', apiVersion: 'metrics.orch.io/v1beta1',
      metadata: {name: 'n1', creationTimestamp: '2024-05-01T10:00:01Z', labels: {a: 'b'}},
      timestamp: '2024-05-01T10:00:00Z', window: '10s', usage: {cpu: '1', memory: '2Ki'},
    });
    const c = (name: string, cores?: number) => ({name, startTime: time, cpu: {time, usageNanoCores: cores}, memory: {time, workingSetBytes: 4096}});
    const ref = {name: 'p', namespace: 'ns', uid: 'u'};
    const pod = podMetrics({name: 'p', namespace: 'ns'}, {podRef: ref, startTime: time, containers: [c('a', 1e6), {name: 'ended', startTime: time}]}, now);
    expect(pod).toMatchObject({kind: 'PodMetrics', metadata: {name: 'p', namespace: 'ns'}, containers: [{name: 'a', usage: {cpu: '1m', memory: '4Ki'}}]});
    expect(podMetrics({name: 'p', namespace: 'ns'}, {podRef: ref, startTime: time, containers: [c('a', 1e6), c('no-rate')]}, now)).toBeUndefined();
    expect(podMetrics({name: 'p', namespace: 'ns'}, {podRef: ref, startTime: time, containers: []}, now)).toBeUndefined();
  });
});
