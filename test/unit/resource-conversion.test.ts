/**
 * Conversion between served and stored versions (src/daemons/apiserver/rest/conversion.ts):
 * autoscaling/v1 <-> v2 HorizontalPodAutoscalers through upstream's round-trip annotations, and
 * events/v1 <-> core v1 Events. Table-driven: every v2 metric source survives a trip through v1.
 */
import {describe, expect, it} from '@jest/globals';
import {nameSet} from '../../src/api/names.js';
import type {JsonObject} from '../../src/patch/types.js';
import type {ResourceInfo} from '../../src/api/resources.js';
import {fromStorage, toStorage} from '../../src/daemons/apiserver/rest/conversion.js';
import {builtinResources} from '../../src/api/resources.js';

const find = (group: string, version: string, plural: string) => builtinResources().find((r) => r.group === group && r.version === version && r.plural === plural) as ResourceInfo;
const hpaV1 = find('autoscaling', 'v1', 'horizontalpodautoscalers');
const eventsV1 = builtinResources().find((r) => r.plural === 'events' && r.group !== '') as ResourceInfo;
const prefix = `autoscaling.alpha.${nameSet('orch').labelDomain}`;

const base = {apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: {name: 'h', namespace: 'default', annotations: {keep: 'me'}}};
const ref = {apiVersion: 'apps/v1', kind: 'Deployment', name: 'web'};
const selector = {matchLabels: {a: 'b'}};

const METRICS: [string, JsonObject, JsonObject][] = [
  ['resource average value', {type: 'Resource', resource: {name: 'memory', target: {type: 'AverageValue', averageValue: '1Gi'}}},
    {type: 'Resource', resource: {name: 'memory', targetAverageValue: '1Gi'}}],
  ['container resource utilization', {type: 'ContainerResource', containerResource: {name: 'cpu', container: 'app', target: {type: 'Utilization', averageUtilization: 50}}},
    {type: 'ContainerResource', containerResource: {name: 'cpu', container: 'app', targetAverageUtilization: 50}}],
  ['pods', {type: 'Pods', pods: {metric: {name: 'qps', selector}, target: {type: 'AverageValue', averageValue: '10'}}},
    {type: 'Pods', pods: {metricName: 'qps', targetAverageValue: '10', selector}}],
  ['object value', {type: 'Object', object: {describedObject: {kind: 'Service', name: 's'}, metric: {name: 'hits'}, target: {type: 'Value', value: '5'}}},
    {type: 'Object', object: {target: {kind: 'Service', name: 's'}, metricName: 'hits', targetValue: '5'}}],
  ['external average', {type: 'External', external: {metric: {name: 'queue', selector}, target: {type: 'AverageValue', averageValue: '30'}}},
    {type: 'External', external: {metricName: 'queue', metricSelector: selector, targetAverageValue: '30'}}],
];

describe('HorizontalPodAutoscaler autoscaling/v2 (stored) <-> v1', () => {
  it.each(METRICS)('%s: v1 carries it in the metrics annotation and gives it back', (_name, v2metric, v1metric) => {
    const stored = {...base, spec: {scaleTargetRef: ref, minReplicas: 1, maxReplicas: 4, metrics: [v2metric]}};
    const v1 = fromStorage(hpaV1, stored);
    expect(v1.apiVersion).toBe('autoscaling/v1');
    expect(v1.spec).toEqual({scaleTargetRef: ref, minReplicas: 1, maxReplicas: 4});
    expect((v1.metadata as any).annotations.keep).toBe('me');
    expect(JSON.parse((v1.metadata as any).annotations[`${prefix}/metrics`])).toEqual([v1metric]);
    expect(toStorage(hpaV1, v1)).toEqual(stored);
  });

  it('maps the CPU utilization target to targetCPUUtilizationPercentage, and statuses and conditions through annotations', () => {
    const stored: any = {
      ...base,
      spec: {scaleTargetRef: ref, maxReplicas: 3, metrics: [{type: 'Resource', resource: {name: 'cpu', target: {type: 'Utilization', averageUtilization: 70}}}], behavior: {scaleUp: {selectPolicy: 'Disabled'}}},
      status: {
        currentReplicas: 2, desiredReplicas: 3,
        currentMetrics: [{type: 'Resource', resource: {name: 'cpu', current: {averageUtilization: 90, averageValue: '900m'}}}],
        conditions: [{type: 'AbleToScale', status: 'True', reason: 'ReadyForNewScale'}],
      },
    };
    const v1 = fromStorage(hpaV1, stored);
    expect(v1.spec).toEqual({scaleTargetRef: ref, maxReplicas: 3, targetCPUUtilizationPercentage: 70});
    expect(v1.status).toEqual({currentReplicas: 2, desiredReplicas: 3, currentCPUUtilizationPercentage: 90});
    const annotations = (v1.metadata as any).annotations;
    expect(annotations[`${prefix}/metrics`]).toBeUndefined();
    expect(JSON.parse(annotations[`${prefix}/conditions`])).toEqual(stored.status.conditions);
    expect(JSON.parse(annotations[`${prefix}/behavior`])).toEqual(stored.spec.behavior);
    expect(toStorage(hpaV1, v1)).toEqual(stored);
  });

  it('defaults a v1 object without any target to 80% CPU, and ignores a broken annotation', () => {
    const v1: JsonObject = {apiVersion: 'autoscaling/v1', kind: 'HorizontalPodAutoscaler', metadata: {name: 'h', annotations: {[`${prefix}/metrics`]: '{not json'}}, spec: {scaleTargetRef: ref, maxReplicas: 2}};
    expect(toStorage(hpaV1, v1)).toEqual({
      apiVersion: 'autoscaling/v2', kind: 'HorizontalPodAutoscaler', metadata: {name: 'h'},
      spec: {scaleTargetRef: ref, maxReplicas: 2, metrics: [{type: 'Resource', resource: {name: 'cpu', target: {type: 'Utilization', averageUtilization: 80}}}]},
    });
  });
});

describe('Event core v1 (stored) <-> events/v1', () => {
  it('renames the fields both ways', () => {
    const core: any = {
      apiVersion: 'v1', kind: 'Event', metadata: {name: 'e', namespace: 'default'}, involvedObject: {kind: 'Pod', name: 'p'}, message: 'm', reason: 'R', type: 'Normal',
      source: {component: 'agent'}, firstTimestamp: '2026-01-01T00:00:00Z', lastTimestamp: '2026-01-01T00:01:00Z', count: 2, reportingComponent: 'agent', reportingInstance: 'n1',
      eventTime: null, action: 'Started',
    };
    const v1 = fromStorage(eventsV1, core);
    expect(v1).toEqual({
      apiVersion: `${eventsV1.group}/v1`, kind: 'Event', metadata: core.metadata, regarding: core.involvedObject, note: 'm', reason: 'R', type: 'Normal',
      deprecatedSource: core.source, deprecatedFirstTimestamp: core.firstTimestamp, deprecatedLastTimestamp: core.lastTimestamp, deprecatedCount: 2,
      reportingController: 'agent', reportingInstance: 'n1', eventTime: null, action: 'Started',
    });
    expect(toStorage(eventsV1, v1)).toEqual(core);
  });
});

describe('dynamic resource allocation resource/v1 (stored) <-> v1beta1 and v1beta2', () => {
  const group = nameSet('orch').groups.resource;
  const info = (version: string, plural: string) => find(group, version, plural);
  const selectors = [{cel: {expression: 'device.driver == "gpu.example.com"'}}];
  const meta = {name: 'c', namespace: 'default'};

  it('moves a claim request\'s exact fields under `exactly` and back; firstAvailable requests stay as they are', () => {
    const beta: any = {
      apiVersion: `${group}/v1beta1`, kind: 'ResourceClaim', metadata: meta,
      spec: {devices: {requests: [
        {name: 'gpu', deviceClassName: 'gpu', selectors, allocationMode: 'ExactCount', count: 2, adminAccess: false},
        {name: 'any', firstAvailable: [{name: 'a', deviceClassName: 'small'}]},
      ], constraints: [{requests: ['gpu'], matchAttribute: 'x/y'}]}},
      status: {allocation: {devices: {results: [{request: 'gpu', driver: 'd', pool: 'p', device: 'd0'}]}}},
    };
    const stored = toStorage(info('v1beta1', 'resourceclaims'), beta);
    expect(stored).toEqual({
      apiVersion: `${group}/v1`, kind: 'ResourceClaim', metadata: meta,
      spec: {devices: {requests: [
        {name: 'gpu', exactly: {deviceClassName: 'gpu', selectors, allocationMode: 'ExactCount', count: 2, adminAccess: false}},
        {name: 'any', firstAvailable: [{name: 'a', deviceClassName: 'small'}]},
      ], constraints: beta.spec.devices.constraints}},
      status: beta.status,
    });
    expect(fromStorage(info('v1beta1', 'resourceclaims'), stored)).toEqual(beta);
    // v1beta2 has the v1 schema: only the apiVersion changes.
    expect(fromStorage(info('v1beta2', 'resourceclaims'), stored)).toEqual({...stored, apiVersion: `${group}/v1beta2`});
  });

  it('converts the requests of a claim template\'s embedded claim spec', () => {
    const stored = {apiVersion: `${group}/v1`, kind: 'ResourceClaimTemplate', metadata: meta, spec: {spec: {devices: {requests: [{name: 'r', exactly: {deviceClassName: 'gpu'}}]}}}};
    const beta = fromStorage(info('v1beta1', 'resourceclaimtemplates'), stored);
    expect(beta.spec).toEqual({spec: {devices: {requests: [{name: 'r', deviceClassName: 'gpu'}]}}});
    expect(toStorage(info('v1beta1', 'resourceclaimtemplates'), beta)).toEqual(stored);
  });

  it('unwraps a slice device\'s `basic` and drops v1beta1\'s zero nodeName and allNodes', () => {
    const beta: any = {
      apiVersion: `${group}/v1beta1`, kind: 'ResourceSlice', metadata: {name: 's'},
      spec: {driver: 'gpu.example.com', pool: {name: 'n1', generation: 1, resourceSliceCount: 1}, nodeName: '', allNodes: true,
        devices: [{name: 'd0', basic: {attributes: {model: {string: 'x'}}, capacity: {memory: {value: '8Gi'}}}}, {name: 'd1', basic: {}}]},
    };
    const stored = toStorage(info('v1beta1', 'resourceslices'), beta);
    expect(stored.spec).toEqual({
      driver: 'gpu.example.com', pool: beta.spec.pool, allNodes: true,
      devices: [{name: 'd0', attributes: {model: {string: 'x'}}, capacity: {memory: {value: '8Gi'}}}, {name: 'd1'}],
    });
    const back = fromStorage(info('v1beta1', 'resourceslices'), stored);
    const {nodeName: _empty, ...betaSpec} = beta.spec;
    expect(back).toStrictEqual({...beta, spec: betaSpec});
  });
});
