/**
 * `orch status`: what a round finds (against canned HTTP answers), when it counts as ready (the exit
 * code CI branches on), the `-o json` document, and the printed table.
 */
import {describe, expect, it} from '@jest/globals';
import {collectStatus, type Endpoint, type FetchText, type StatusPlan, type StatusTarget, type TextResponse} from '../../src/cmd/status/collect.js';
import {buildReport, componentReady, exitCodeOf, formatStatusJson, statusDocument, type ComponentStatus, type ProbeResult} from '../../src/cmd/status/report.js';
import {formatStatusTable, leaderLine} from '../../src/cmd/status/format.js';
import {leaderFromLeaseResponse, leaderLeasePath} from '../../src/cmd/status/leader.js';

const LEASE_PATH = '/apis/coordination.orch.io/v1/namespaces/orch-system/leases/orch-controller-manager';

const endpoint = (url: string): Endpoint => ({url, verify: false, headers: {}});
const target = (name: StatusTarget['name'], url: string): StatusTarget => ({name, url, endpoint: endpoint(url)});

const API = 'https://127.0.0.1:6443';
const CM = 'https://127.0.0.1:10257';
const AGENT = 'https://127.0.0.1:10250';

function plan(...names: StatusTarget['name'][]): StatusPlan {
  const all = {apiserver: target('apiserver', API), 'controller-manager': target('controller-manager', CM), agent: target('agent', AGENT)};
  return {apiserver: all.apiserver, targets: names.map((n) => all[n])};
}

type Answer = TextResponse | Error;

/** A fake HTTP side: answers by full URL; an unknown URL is a refused connection. Records each request. */
function fakeFetch(answers: Record<string, Answer>): FetchText & {requests: string[]} {
  const requests: string[] = [];
  const fetch = async (e: Endpoint, path: string) => {
    requests.push(e.url + path);
    const answer = answers[e.url + path];
    if (answer === undefined) throw new Error(`dial tcp ${new URL(e.url).host}: connect: connection refused`);
    if (answer instanceof Error) throw answer;
    return answer;
  };
  return Object.assign(fetch, {requests});
}

const ok = (label: string, ...checks: string[]): TextResponse => ({statusCode: 200, body: `${checks.map((c) => `[+]${c} ok\n`).join('')}${label} check passed\n`});
const LEASE = {
  statusCode: 200,
  body: JSON.stringify({
    kind: 'Lease',
    apiVersion: 'coordination.orch.io/v1',
    metadata: {name: 'orch-controller-manager', namespace: 'orch-system'},
    spec: {holderIdentity: 'cp-1_6f1c2a', leaseDurationSeconds: 15, renewTime: '2024-05-01T09:59:58.000000Z', leaseTransitions: 3},
  }),
};

const healthy: Record<string, Answer> = {
  [`${API}/livez?verbose`]: ok('livez', 'ping', 'log', 'kvstore'),
  [`${API}/readyz?verbose`]: ok('readyz', 'ping', 'log', 'kvstore', 'kvstore-readiness', 'shutdown'),
  [`${CM}/livez?verbose`]: ok('livez', 'ping', 'log', 'leaderElection'),
  [`${CM}/readyz?verbose`]: ok('readyz', 'ping', 'log', 'leaderElection'),
  [`${AGENT}/healthz?verbose`]: ok('healthz', 'ping', 'log', 'syncloop'),
  [`${API}${LEASE_PATH}`]: LEASE,
};

describe('a round of checks', () => {
  it('reads the lease at the documented path', () => {
    expect(leaderLeasePath()).toBe(LEASE_PATH);
  });

  it('everything healthy: every component ready, the leader, exit code 0', async () => {
    const report = await collectStatus(plan('apiserver', 'controller-manager', 'agent'), fakeFetch(healthy));
    expect(report.components.map((c) => [c.name, c.reachable, c.ready, c.livez?.ok, c.readyz?.ok])).toEqual([
      ['apiserver', true, true, true, true],
      ['controller-manager', true, true, true, true],
      ['agent', true, true, true, true],
    ]);
    expect(report.leader).toEqual({holder: 'cp-1_6f1c2a', renewTime: '2024-05-01T09:59:58.000000Z', transitions: 3, leaseDurationSeconds: 15});
    expect(report.ready).toBe(true);
    expect(exitCodeOf(report)).toBe(0);
  });

  it('asks the agent once: it has only /healthz, which stands for both probes', async () => {
    const fetch = fakeFetch(healthy);
    const report = await collectStatus(plan('agent'), fetch);
    expect(fetch.requests.filter((r) => r.startsWith(AGENT))).toEqual([`${AGENT}/healthz?verbose`]);
    expect(report.components[0]!.livez?.path).toBe('/healthz?verbose');
    expect(report.components[0]!.readyz?.path).toBe('/healthz?verbose');
  });

  it('an absent component is unreachable with the connection error, and the round is not ready', async () => {
    const answers = {...healthy};
    delete answers[`${CM}/livez?verbose`];
    const report = await collectStatus(plan('apiserver', 'controller-manager'), fakeFetch(answers));
    expect(report.components[1]).toEqual({
      name: 'controller-manager',
      url: CM,
      reachable: false,
      ready: false,
      livez: null,
      readyz: null,
      error: 'dial tcp 127.0.0.1:10257: connect: connection refused',
    });
    expect(exitCodeOf(report)).toBe(1);
  });

  it('a failing readyz names the check and reads its reason from the single-check endpoint', async () => {
    const fetch = fakeFetch({
      ...healthy,
      [`${API}/readyz?verbose`]: {statusCode: 500, body: '[+]ping ok\n[-]kvstore-readiness failed: reason withheld\n[+]shutdown ok\nreadyz check failed\n'},
      [`${API}/readyz/kvstore-readiness`]: {statusCode: 500, body: 'internal server error: error getting data from etcd: context deadline exceeded\n'},
    });
    const report = await collectStatus(plan('apiserver'), fetch);
    const api = report.components[0]!;
    expect(api).toMatchObject({reachable: true, ready: false});
    expect(api.livez?.ok).toBe(true);
    expect(api.readyz).toMatchObject({httpStatus: 500, ok: false});
    expect(api.readyz?.checks.find((c) => !c.ok)).toEqual({name: 'kvstore-readiness', ok: false, reason: 'error getting data from etcd: context deadline exceeded'});
    expect(report.ready).toBe(false);
  });

  it('a failing check stays failing when its reason cannot be read', async () => {
    const report = await collectStatus(
      plan('controller-manager'),
      fakeFetch({...healthy, [`${CM}/readyz?verbose`]: {statusCode: 500, body: '[+]ping ok\n[-]leaderElection failed: reason withheld\nreadyz check failed\n'}}),
    );
    expect(report.components[0]!.readyz?.checks).toEqual([
      {name: 'ping', ok: true},
      {name: 'leaderElection', ok: false},
    ]);
    expect(report.ready).toBe(false);
  });

  it('an answer that is not a health body (401) leaves the component reachable but not ready, with the reason', async () => {
    const report = await collectStatus(plan('agent'), fakeFetch({...healthy, [`${AGENT}/healthz?verbose`]: {statusCode: 401, body: 'Unauthorized'}}));
    expect(report.components[0]).toMatchObject({reachable: true, ready: false, error: 'GET /healthz?verbose: HTTP 401: Unauthorized'});
  });

  it('a Status object answer is shown by its message', async () => {
    const forbidden = {statusCode: 403, body: JSON.stringify({kind: 'Status', message: 'forbidden: User "system:anonymous" cannot get path "/livez"', code: 403})};
    const report = await collectStatus(plan('apiserver'), fakeFetch({...healthy, [`${API}/livez?verbose`]: forbidden}));
    expect(report.components[0]!.error).toBe('GET /livez?verbose: HTTP 403: forbidden: User "system:anonymous" cannot get path "/livez"');
  });

  it('a timeout on readyz after livez answered: reachable, readyz null, the timeout as the error', async () => {
    const report = await collectStatus(plan('apiserver'), fakeFetch({...healthy, [`${API}/readyz?verbose`]: new Error('no answer within 5s (--request-timeout)')}));
    expect(report.components[0]).toMatchObject({reachable: true, ready: false, readyz: null, error: 'no answer within 5s (--request-timeout)'});
  });

  it('a broken orchconfig is the API server\'s error; the others are still checked and the lease is not read', async () => {
    const broken: StatusTarget = {name: 'apiserver', url: '', configError: 'invalid configuration: no server found for cluster "x"'};
    const fetch = fakeFetch(healthy);
    const report = await collectStatus({apiserver: broken, targets: [broken, target('controller-manager', CM)]}, fetch);
    expect(report.components.map((c) => [c.name, c.ready, c.error])).toEqual([
      ['apiserver', false, 'invalid configuration: no server found for cluster "x"'],
      ['controller-manager', true, undefined],
    ]);
    expect(report.leader).toBeNull();
    expect(fetch.requests.some((r) => r.includes('leases'))).toBe(false);
  });

  it('only the selected components decide readiness', async () => {
    const report = await collectStatus(plan('apiserver'), fakeFetch({[`${API}/livez?verbose`]: healthy[`${API}/livez?verbose`]!, [`${API}/readyz?verbose`]: healthy[`${API}/readyz?verbose`]!}));
    expect(report.components.map((c) => c.name)).toEqual(['apiserver']);
    expect(report.leader).toBeNull();
    expect(exitCodeOf(report)).toBe(0);
  });
});

describe('readiness', () => {
  const probe = (ok: boolean): ProbeResult => ({path: '/x', httpStatus: ok ? 200 : 500, ok, checks: [], warnings: []});
  it.each<[string, Parameters<typeof componentReady>[0], boolean]>([
    ['both probes pass', {reachable: true, livez: probe(true), readyz: probe(true)}, true],
    ['readyz fails', {reachable: true, livez: probe(true), readyz: probe(false)}, false],
    ['livez fails', {reachable: true, livez: probe(false), readyz: probe(true)}, false],
    ['unreachable', {reachable: false, livez: null, readyz: null}, false],
    ['readyz missing', {reachable: true, livez: probe(true), readyz: null}, false],
    ['an unusable answer', {reachable: true, livez: probe(true), readyz: probe(true), error: 'HTTP 401'}, false],
  ])('%s', (_title, c, ready) => {
    expect(componentReady(c)).toBe(ready);
  });

  it('no component checked is not ready', () => {
    expect(buildReport([], null).ready).toBe(false);
  });
});

describe('leader from the lease', () => {
  it.each<[string, number, unknown, ReturnType<typeof leaderFromLeaseResponse>['leader']]>([
    ['a held lease', 200, JSON.parse(LEASE.body), {holder: 'cp-1_6f1c2a', renewTime: '2024-05-01T09:59:58.000000Z', transitions: 3, leaseDurationSeconds: 15}],
    ['a released lease has no holder', 200, {spec: {holderIdentity: '', leaseDurationSeconds: 1, leaseTransitions: 4}}, {holder: null, renewTime: null, transitions: 4, leaseDurationSeconds: 1}],
    ['no lease', 404, {kind: 'Status', code: 404}, null],
    ['not allowed', 403, {kind: 'Status', message: 'forbidden', code: 403}, null],
  ])('%s', (_title, status, body, leader) => {
    expect(leaderFromLeaseResponse(status, body).leader).toEqual(leader);
  });
});

const T0 = Date.UTC(2024, 4, 1, 10, 0, 0);

function sampleReport() {
  const probe = (path: string, ok: boolean, checks: ProbeResult['checks']): ProbeResult => ({path, httpStatus: ok ? 200 : 500, ok, checks, warnings: []});
  const components: ComponentStatus[] = [
    {
      name: 'apiserver',
      url: API,
      reachable: true,
      ready: false,
      livez: probe('/livez?verbose', true, [{name: 'ping', ok: true}]),
      readyz: probe('/readyz?verbose', false, [{name: 'ping', ok: true}, {name: 'kvstore-readiness', ok: false, reason: 'error getting data from etcd: timeout'}]),
    },
    {name: 'agent', url: AGENT, reachable: false, ready: false, livez: null, readyz: null, error: 'dial tcp 127.0.0.1:10250: connect: connection refused'},
  ];
  return buildReport(components, {holder: 'cp-1_6f1c2a', renewTime: '2024-05-01T09:59:58.000000Z', transitions: 3, leaseDurationSeconds: 15});
}

describe('-o json', () => {
  it('prints the documented document: fixed keys in a fixed order, optional ones omitted', () => {
    const text = formatStatusJson(sampleReport());
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(text)).toEqual({
      components: [
        {
          name: 'apiserver',
          url: API,
          reachable: true,
          ready: false,
          livez: {path: '/livez?verbose', httpStatus: 200, ok: true, checks: [{name: 'ping', ok: true}]},
          readyz: {
            path: '/readyz?verbose',
            httpStatus: 500,
            ok: false,
            checks: [{name: 'ping', ok: true}, {name: 'kvstore-readiness', ok: false, reason: 'error getting data from etcd: timeout'}],
          },
        },
        {name: 'agent', url: AGENT, reachable: false, ready: false, livez: null, readyz: null, error: 'dial tcp 127.0.0.1:10250: connect: connection refused'},
      ],
      leader: {holder: 'cp-1_6f1c2a', renewTime: '2024-05-01T09:59:58.000000Z', transitions: 3, leaseDurationSeconds: 15},
      ready: false,
    });
    const document = statusDocument(sampleReport());
    expect(Object.keys(document)).toEqual(['components', 'leader', 'ready']);
    expect(Object.keys(document.components[0]!)).toEqual(['name', 'url', 'reachable', 'ready', 'livez', 'readyz']);
    expect(Object.keys(document.components[1]!)).toEqual(['name', 'url', 'reachable', 'ready', 'livez', 'readyz', 'error']);
  });

  it('leaves out what is internal (warnings, the leader note)', () => {
    const report = {...sampleReport(), leader: null, leaderNote: 'lease not found'};
    report.components[0]!.livez!.warnings = ['some health checks cannot be excluded'];
    const document = JSON.parse(formatStatusJson(report));
    expect(document.leader).toBeNull();
    expect(JSON.stringify(document)).not.toContain('warn');
    expect(JSON.stringify(document)).not.toContain('lease not found');
  });
});

describe('the table', () => {
  it('one row per component with probes, failing checks and detail, then the leader and the verdict', () => {
    expect(formatStatusTable(sampleReport(), T0)).toBe(
      [
        'COMPONENT  ENDPOINT                 LIVEZ  READYZ  FAILING CHECKS     DETAIL',
        'apiserver  https://127.0.0.1:6443   ok     failed  kvstore-readiness  kvstore-readiness: error getting data from etcd: timeout',
        'agent      https://127.0.0.1:10250  -      -                          dial tcp 127.0.0.1:10250: connect: connection refused',
        '',
        'Leader: cp-1_6f1c2a (renewed 2s ago, 3 transitions)',
        'Ready: no',
        '',
      ].join('\n'),
    );
  });

  it.each<[string, Parameters<typeof leaderLine>, string]>([
    ['a holder', [{holder: 'cp-2', renewTime: '2024-05-01T09:58:00Z', transitions: 1, leaseDurationSeconds: 15}, undefined, T0], 'Leader: cp-2 (renewed 2m ago, 1 transition)'],
    ['a released lease', [{holder: null, renewTime: null, transitions: 4, leaseDurationSeconds: 1}, undefined, T0], 'Leader: none (lease released; 4 transitions)'],
    ['no lease, with the reason', [null, 'lease orch-system/orch-controller-manager not found', T0], 'Leader: none (lease orch-system/orch-controller-manager not found)'],
  ])('leader line: %s', (_title, args, line) => {
    expect(leaderLine(...args)).toBe(line);
  });
});
