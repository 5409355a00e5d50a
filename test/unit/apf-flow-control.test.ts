/**
 * Priority and fairness's decisions apart from HTTP: classification against upstream's bootstrap
 * FlowSchemas, the levels' seats from the server's total (upstream's numbers for 600 seats), seat
 * borrowing, the Retry-After of rejections, and the debug dumps' layout.
 */
import {describe, expect, test} from '@jest/globals';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {names} from '../../src/api/names.js';
import {FlowControl} from '../../src/daemons/apiserver/filters/flowcontrol/flow-control.js';
import {mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels} from '../../src/daemons/apiserver/filters/flowcontrol/bootstrap.js';
import {computeLimits, SeatPool} from '../../src/daemons/apiserver/filters/flowcontrol/seat-pool.js';
import {DroppedRequestsTracker} from '../../src/daemons/apiserver/filters/flowcontrol/dropped-requests.js';
import {debugDump, tabulate} from '../../src/daemons/apiserver/filters/flowcontrol/debug.js';
import {estimateSeats} from '../../src/daemons/apiserver/filters/flowcontrol/work-estimate.js';
import type {RequestInfo} from '../../src/daemons/apiserver/filters/request-info.js';
import type {RequestDigest} from '../../src/daemons/apiserver/filters/flowcontrol/matching.js';

function bootstrapped(serverConcurrency = 600, clock = new FakeClock()) {
  const fc = new FlowControl({clock, serverConcurrency});
  fc.applyConfig([...mandatoryFlowSchemas(), ...suggestedFlowSchemas()], [...mandatoryPriorityLevels(), ...suggestedPriorityLevels()]);
  return fc;
}

function resource(verb: string, resourceName: string, namespace = '', apiGroup = ''): RequestInfo {
  return {isResourceRequest: true, verb, apiGroup, apiVersion: 'v1', namespace, resource: resourceName, subresource: '', name: ''};
}

function digest(user: string, groups: string[], info: RequestInfo, path = '/api/v1/x'): RequestDigest {
  return {info, path, user: {name: user, groups}};
}

const AUTHENTICATED = 'system:authenticated';

describe('classification', () => {
  const fc = bootstrapped();
  const n = names();
  test.each([
    ['an administrator', digest('admin', ['system:masters', AUTHENTICATED], resource('list', 'pods', 'default')), 'exempt', 'exempt', ''],
    ['any user', digest('alice', [AUTHENTICATED], resource('list', 'pods', 'default')), 'global-default', 'global-default', 'alice'],
    ['a node updating its status', digest(`${n.users.nodePrefix}n1`, [n.users.nodesGroup, AUTHENTICATED], resource('patch', 'nodes')), 'system-node-high', 'node-high', `${n.users.nodePrefix}n1`],
    ['a node reading pods', digest(`${n.users.nodePrefix}n1`, [n.users.nodesGroup, AUTHENTICATED], resource('list', 'pods', 'default')), 'system-nodes', 'system', `${n.users.nodePrefix}n1`],
    ['the controller manager', digest(n.users.controllerManager, [AUTHENTICATED], resource('list', 'pods', 'ns1')), 'kube-controller-manager', 'workload-high', 'ns1'],
    ['the controller manager renewing its lease', digest(n.users.controllerManager, [AUTHENTICATED], resource('update', 'leases', n.namespaces.system, n.groups.coordination)), 'system-leader-election', 'leader-election', n.users.controllerManager],
    ['a system service account', digest(`system:serviceaccount:${n.namespaces.system}:foo`, ['system:serviceaccounts', AUTHENTICATED], resource('get', 'pods', 'ns2')), 'kube-system-service-accounts', 'workload-high', 'ns2'],
    ['another service account', digest('system:serviceaccount:app:foo', ['system:serviceaccounts', AUTHENTICATED], resource('get', 'pods', 'app')), 'service-accounts', 'workload-low', 'system:serviceaccount:app:foo'],
    ['an anonymous probe', digest('system:anonymous', ['system:unauthenticated'], {...resource('get', ''), isResourceRequest: false}, '/readyz'), 'probes', 'exempt', ''],
    ['an anonymous other path', digest('system:anonymous', ['system:unauthenticated'], {...resource('get', ''), isResourceRequest: false}, '/version'), 'global-default', 'global-default', 'system:anonymous'],
  ])('%s', (_what, d, schema, level, distinguisher) => {
    const c = fc.classify(d)!;
    expect([c.schema.metadata.name, c.level.name, c.distinguisher]).toEqual([schema, level, distinguisher]);
  });

  test('a schema naming a missing level is skipped; without suggested objects, catch-all takes the rest', () => {
    const only = new FlowControl({clock: new FakeClock(), serverConcurrency: 10});
    const dangling = {...suggestedFlowSchemas().find((s) => s.metadata.name === 'global-default')!};
    only.applyConfig([...mandatoryFlowSchemas(), dangling], mandatoryPriorityLevels());
    const c = only.classify(digest('alice', [AUTHENTICATED], resource('get', 'pods', 'x')))!;
    expect([c.schema.metadata.name, c.level.name]).toEqual(['catch-all', 'catch-all']);
  });

  test('a cluster-scoped request matches only rules with clusterScope', () => {
    const c = fc.classify(digest(`${n.users.nodePrefix}n1`, [n.users.nodesGroup, AUTHENTICATED], resource('get', 'leases', 'x', n.groups.coordination)))!;
    expect(c.schema.metadata.name).toBe('system-node-high');
    const clusterLease = fc.classify(digest(`${n.users.nodePrefix}n1`, [n.users.nodesGroup, AUTHENTICATED], resource('get', 'leases', '', n.groups.coordination)))!;
    expect(clusterLease.schema.metadata.name).toBe('system-nodes');
  });
});

describe('seats', () => {
  test("each level's nominal seats out of 600, as upstream documents them", () => {
    const fc = bootstrapped(600);
    const nominal = Object.fromEntries([...fc.levels.keys()].filter((l) => l !== 'exempt').map((l) => [l, fc.limitsOf(l)!.nominal]));
    expect(nominal).toEqual({'catch-all': 13, system: 74, 'node-high': 98, 'leader-election': 25, 'workload-high': 98, 'workload-low': 245, 'global-default': 49});
  });

  test('lendable and borrowing limits from the percentages', () => {
    const limits = computeLimits(100, [
      {name: 'a', nominalConcurrencyShares: 1, lendablePercent: 50, borrowingLimitPercent: 100},
      {name: 'b', nominalConcurrencyShares: 3, lendablePercent: 0},
    ]);
    expect(limits.get('a')).toEqual({nominal: 25, lendable: 13, borrowingLimit: 25});
    expect(limits.get('b')).toEqual({nominal: 75, lendable: 0, borrowingLimit: Infinity});
  });

  test("a busy level borrows the others' idle lendable seats, and only those", () => {
    const pool = new SeatPool();
    pool.configure('busy', {nominal: 2, lendable: 0, borrowingLimit: Infinity});
    pool.configure('lender', {nominal: 4, lendable: 2, borrowingLimit: 0});
    const busy = pool.limiter('busy');
    const lender = pool.limiter('lender');
    for (let i = 0; i < 4; i++) {
      expect(busy.fits(1)).toBe(true);
      busy.take(1);
    }
    // Its 2 seats and the lender's 2 lendable ones are used.
    expect(busy.fits(1)).toBe(false);
    // The lender takes its own seats back as it needs them (the 2 it never lends, then the lent ones).
    lender.take(3);
    expect(lender.fits(1)).toBe(true);
    busy.release(2);
    expect(busy.fits(1)).toBe(true); // 2 in use of 2 nominal + 1 idle lendable
    busy.take(1);
    expect(busy.fits(1)).toBe(false);
  });

  test('a level with a borrowing limit stops there', () => {
    const pool = new SeatPool();
    pool.configure('a', {nominal: 1, lendable: 0, borrowingLimit: 1});
    pool.configure('b', {nominal: 10, lendable: 10, borrowingLimit: 0});
    const a = pool.limiter('a');
    a.take(2);
    expect(a.fits(1)).toBe(false);
  });

  test('list work estimate: one seat per 100 stored objects, 1 to 10', () => {
    const count = (n: number | undefined) => () => n;
    expect(estimateSeats(resource('list', 'pods'), count(50))).toBe(1);
    expect(estimateSeats(resource('list', 'pods'), count(250))).toBe(3);
    expect(estimateSeats(resource('watch', 'pods'), count(5000))).toBe(10);
    expect(estimateSeats(resource('list', 'widgets'), count(undefined))).toBe(1);
    expect(estimateSeats(resource('get', 'pods'), count(5000))).toBe(1);
    expect(estimateSeats(resource('create', 'pods'), count(5000))).toBe(1);
  });
});

describe('Retry-After of rejections', () => {
  test('starts at 1, doubles after 3 x Retry-After drops within Retry-After seconds, then decreases', () => {
    let now = 0;
    const tracker = new DroppedRequestsTracker(() => now);
    for (let i = 0; i < 3; i++) tracker.recordDropped('l');
    expect(tracker.retryAfter('l')).toBe(1);
    now = 1000;
    tracker.recordDropped('l');
    expect(tracker.retryAfter('l')).toBe(2);
    expect(tracker.retryAfter('other')).toBe(1);
    now = 10_000;
    tracker.recordDropped('l');
    expect(tracker.retryAfter('l')).toBe(1);
  });
});

describe('debug dumps', () => {
  test("cells are joined by ',' and padded as Go's tabwriter (minwidth 8, padding 1)", () => {
    expect(tabulate([['PriorityLevelName', 'X'], ['a', 'yy']])).toBe('PriorityLevelName, X\na,                 yy\n');
    expect(tabulate([['ab', 'c'], ['d', 'e']])).toBe('ab,     c\nd,      e\n');
  });

  test('dump_priority_levels lists every level by name; the exempt one has <none> columns', () => {
    const text = debugDump(bootstrapped(), '/debug/api_priority_and_fairness/dump_priority_levels', new URLSearchParams(), 0)!;
    const lines = text.trimEnd().split('\n');
    expect(lines[0]!.split(/,\s*/)).toEqual(['PriorityLevelName', 'ActiveQueues', 'IsIdle', 'IsQuiescing', 'WaitingRequests', 'ExecutingRequests', 'DispatchedRequests', 'RejectedRequests', 'TimedoutRequests', 'CancelledRequests']);
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['catch-all', 'exempt', 'global-default', 'leader-election', 'node-high', 'system', 'workload-high', 'workload-low']);
    expect(lines.find((l) => l.startsWith('exempt'))!.split(/,\s*/).slice(1)).toEqual(Array(9).fill('<none>'));
    expect(lines.find((l) => l.startsWith('global-default'))!.split(/,\s*/).slice(1)).toEqual(['0', 'true', 'false', '0', '0', '0', '0', '0', '0']);
  });

  test('dump_requests shows a waiting request with its flow, and with details its user and path', () => {
    const clock = new FakeClock(Date.parse('2026-01-02T03:04:05Z'));
    const fc = new FlowControl({clock, serverConcurrency: 1});
    // One seat for global-default and no level lending it any (catch-all lends nothing).
    fc.applyConfig([...mandatoryFlowSchemas(), ...suggestedFlowSchemas()], [...mandatoryPriorityLevels(), ...suggestedPriorityLevels().filter((l) => l.metadata.name === 'global-default')]);
    const d = digest('alice', [AUTHENTICATED], resource('list', 'pods', 'default'), '/api/v1/namespaces/default/pods');
    const c = fc.classify(d)!;
    const callbacks = {onDispatch: () => undefined, onReject: () => undefined};
    fc.admit(c, 1, 10_000, callbacks, {user: 'alice', verb: 'list', path: d.path});
    fc.admit(c, 1, 10_000, callbacks, {user: 'alice', verb: 'list', path: d.path, namespace: 'default', apiVersion: 'v1', resource: 'pods'});
    const plain = debugDump(fc, '/debug/api_priority_and_fairness/dump_requests', new URLSearchParams(), clock.now())!.trimEnd().split('\n');
    expect(plain).toHaveLength(2);
    expect(plain[1]!.split(/,\s*/)).toEqual(['global-default', 'global-default', expect.stringMatching(/^\d+$/), '0', 'alice', '2026-01-02T03:04:05.000Z', '1', '0', '0s']);
    const detailed = debugDump(fc, '/debug/api_priority_and_fairness/dump_requests', new URLSearchParams('includeRequestDetails=1'), clock.now())!.trimEnd().split('\n');
    expect(detailed[1]!.split(/,\s*/).slice(9)).toEqual(['alice', 'list', '/api/v1/namespaces/default/pods', 'default', '', 'v1', 'pods', '']);
  });
});
