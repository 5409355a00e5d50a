/**
 * Printer columns of the catalog's kinds (src/api/printer-columns.ts): the cells upstream's
 * printers compute for typical objects, the edge cases included (HPA targets of every metric
 * type, CSR conditions, quota requests and limits, claim states).
 */
import {describe, expect, it} from '@jest/globals';
import {columnDefinitions, toTable} from '../../src/api/table.js';
import type {JsonObject} from '../../src/patch/types.js';

const now = new Date('2026-11-22T12:00:00Z');
const meta = (name: string, extra: JsonObject = {}) => ({name, creationTimestamp: '2026-11-22T11:55:00Z', ...extra});

function row(kind: string, object: JsonObject): Record<string, unknown> {
  const table = toTable(kind, [object], {}, {apiVersion: 'meta.k8s.io/v1', includeObject: 'None', now});
  const cells = (table.rows as {cells: unknown[]}[])[0]!.cells;
  return Object.fromEntries(columnDefinitions(kind).map((c, i) => [c.name, cells[i]]));
}

const cpu = (target: JsonObject) => ({type: 'Resource', resource: {name: 'cpu', target}});

describe('catalog printer columns', () => {
  it.each<[string, JsonObject, Record<string, unknown>]>([
    ['HorizontalPodAutoscaler', {metadata: meta('h'), spec: {scaleTargetRef: {kind: 'Deployment', name: 'web'}, maxReplicas: 5, metrics: [cpu({type: 'Utilization', averageUtilization: 50})]}, status: {currentReplicas: 2, currentMetrics: [{type: 'Resource', resource: {name: 'cpu', current: {averageUtilization: 31}}}]}},
      {Reference: 'Deployment/web', Targets: 'cpu: 31%/50%', MinPods: '<unset>', MaxPods: 5, Replicas: 2, Age: '5m'}],
    ['HorizontalPodAutoscaler', {metadata: meta('h'), spec: {scaleTargetRef: {kind: 'Deployment', name: 'web'}, minReplicas: 1, maxReplicas: 5, metrics: [
      {type: 'Pods', pods: {metric: {name: 'qps'}, target: {type: 'AverageValue', averageValue: '10'}}},
      {type: 'External', external: {metric: {name: 'queue'}, target: {type: 'AverageValue', averageValue: '30'}}},
      {type: 'Object', object: {metric: {name: 'hits'}, target: {type: 'Value', value: '5'}}},
    ]}},
      {Targets: '<unknown>/10, <unknown>/30 (avg) + 1 more...', MinPods: '1'}],
    ['HorizontalPodAutoscaler', {apiVersion: 'autoscaling/v1', metadata: meta('h'), spec: {scaleTargetRef: {kind: 'Deployment', name: 'web'}, maxReplicas: 5, targetCPUUtilizationPercentage: 40}, status: {currentCPUUtilizationPercentage: 12}},
      {Targets: 'cpu: 12%/40%'}],
    ['CertificateSigningRequest', {metadata: meta('c'), spec: {signerName: 's/x', username: 'jane', expirationSeconds: 86400}, status: {conditions: [{type: 'Approved'}, {type: 'Failed'}], certificate: 'Y2VydA=='}},
      {SignerName: 's/x', Requestor: 'jane', RequestedDuration: '24h', Condition: 'Approved,Failed,Issued'}],
    ['CertificateSigningRequest', {metadata: meta('c'), spec: {}}, {SignerName: '<none>', RequestedDuration: '<none>', Condition: 'Pending'}],
    ['ResourceQuota', {metadata: meta('q'), status: {hard: {pods: '10', 'limits.cpu': '4', 'requests.memory': '1Gi'}, used: {pods: '3'}}},
      {Request: 'pods: 3/10, requests.memory: 0/1Gi', Limit: 'limits.cpu: 0/4', Age: '5m'}],
    ['PodDisruptionBudget', {metadata: meta('p'), spec: {minAvailable: 2}, status: {disruptionsAllowed: 1}}, {'Min Available': '2', 'Max Unavailable': 'N/A', 'Allowed Disruptions': 1}],
    ['IngressClass', {metadata: meta('i'), spec: {controller: 'x.io/c', parameters: {apiGroup: 'k.x.io', kind: 'Params', name: 'p'}}}, {Controller: 'x.io/c', Parameters: 'Params.k.x.io/p'}],
    ['Ingress', {metadata: meta('i'), spec: {rules: [{host: 'a'}, {host: 'b'}, {host: 'c'}, {host: 'd'}]}, status: {loadBalancer: {ingress: [{ip: '10.0.0.2'}, {hostname: 'lb.example.com'}]}}},
      {Class: '<none>', Hosts: 'a,b,c + 1 more...', Address: '10.0.0.2,lb.e...', Ports: '80'}],
    ['ControllerRevision', {metadata: meta('r', {ownerReferences: [{apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db', controller: true}]}), revision: 3}, {Controller: 'statefulset.apps/db', Revision: 3}],
    ['NetworkPolicy', {metadata: meta('n'), spec: {podSelector: {}}}, {'Pod-Selector': '<none>'}],
    ['PersistentVolumeClaim', {metadata: meta('c', {annotations: {'volume.beta.orch.io/storage-class': 'old'}}), spec: {volumeName: 'pv1', storageClassName: 'new'}, status: {phase: 'Bound', capacity: {storage: '1Gi'}, accessModes: ['ReadWriteMany', 'ReadWriteOnce']}},
      {Status: 'Bound', Volume: 'pv1', Capacity: '1Gi', 'Access Modes': 'RWO,RWX', StorageClass: 'old', VolumeAttributesClass: '<unset>'}],
    ['CSIDriver', {metadata: meta('d'), spec: {tokenRequests: [{audience: 'a'}, {audience: 'b'}]}},
      {AttachRequired: true, PodInfoOnMount: false, StorageCapacity: false, TokenRequests: 'a,b', RequiresRepublish: false, Modes: '<none>'}],
    ['FlowSchema', {metadata: meta('f'), spec: {priorityLevelConfiguration: {name: 'pl'}, matchingPrecedence: 500}, status: {conditions: [{type: 'Dangling', status: 'False'}]}},
      {PriorityLevel: 'pl', MatchingPrecedence: 500, DistinguisherMethod: '<none>', MissingPL: 'False'}],
    ['PriorityLevelConfiguration', {metadata: meta('p'), spec: {type: 'Limited', limited: {nominalConcurrencyShares: 30, limitResponse: {type: 'Queue', queuing: {queues: 64, handSize: 8, queueLengthLimit: 50}}}}},
      {Type: 'Limited', NominalConcurrencyShares: 30, Queues: 64, HandSize: 8, QueueLengthLimit: 50}],
    ['PriorityLevelConfiguration', {metadata: meta('p'), spec: {type: 'Exempt'}}, {NominalConcurrencyShares: '<none>', Queues: '<none>'}],
    ['ResourceClaim', {metadata: meta('c'), status: {allocation: {}, reservedFor: [{name: 'p'}]}}, {State: 'allocated,reserved'}],
    ['ResourceClaim', {metadata: meta('c', {deletionTimestamp: '2026-11-22T11:59:00Z'})}, {State: 'deleted'}],
    ['APIService', {metadata: meta('v1.x'), spec: {service: {namespace: 'ns', name: 'svc'}}, status: {conditions: [{type: 'Available', status: 'False', reason: 'MissingEndpoints'}]}},
      {Service: 'ns/svc', Available: 'False (MissingEndpoints)'}],
    ['ValidatingAdmissionPolicyBinding', {metadata: meta('b'), spec: {policyName: 'p', paramRef: {name: 'x'}}}, {PolicyName: 'p', ParamRef: '*/x'}],
    ['ComponentStatus', {metadata: {name: 'etcd-0'}, conditions: [{type: 'Healthy', status: 'False', error: 'down'}]}, {Status: 'Unhealthy', Message: '', Error: 'down'}],
  ])('%s', (kind, object, expected) => {
    expect(row(kind, object)).toMatchObject(expected);
  });

  it('prints events/v1 Events with the Event columns', () => {
    expect(row('Event', {metadata: meta('e'), regarding: {kind: 'Pod', name: 'p'}, note: 'hi', reason: 'R', type: 'Normal', reportingController: 'c', reportingInstance: 'i', deprecatedCount: 4}))
      .toMatchObject({Object: 'pod/p', Message: 'hi', Source: 'c, i', Count: 4});
  });
});
