import {describe, expect, it} from '@jest/globals';
import {
  formatTimestamp,
  generatedCertificateNames,
  onlyCpuAndMemory,
  parseContainerLogQuery,
  podList,
  renderContainerLog,
  routeRequest,
  runningPodList,
  serverConfigFromOptions,
  tailStart,
  unsupportedServerSettings,
  type Summary,
} from '../../src/daemons/agent/server/index.js';

const NOW = Date.parse('2024-05-01T10:00:00Z');
const cri = (lines: string[]) => Buffer.from(lines.map((l) => l + '\n').join(''));
const LOG = cri([
  '2024-05-01T09:59:00.100000000Z stdout F one',
  '2024-05-01T09:59:30.000000000Z stderr F two',
  '2024-05-01T09:59:50.123450000Z stdout P thr',
  '2024-05-01T09:59:50.123460000Z stdout F ee',
  '2024-05-01T09:59:59.000000000Z stdout F four',
]);

describe('container log query', () => {
  it.each([
    ['', {follow: false, previous: false, timestamps: false}],
    ['tailLines=2&limitBytes=10', {follow: false, previous: false, timestamps: false, tailLines: 2, limitBytes: 10}],
    ['tail=3', {follow: false, previous: false, timestamps: false, tailLines: 3}],
    ['tail=all&tailLines=3', {follow: false, previous: false, timestamps: false}],
    ['previous=true&follow=1&timestamps=yes', {follow: true, previous: true, timestamps: true}],
    ['previous=false&follow=0&timestamps=FALSE', {follow: false, previous: false, timestamps: false}],
    ['sinceSeconds=30', {follow: false, previous: false, timestamps: false, sinceMs: NOW - 30_000}],
    ['sinceTime=2024-05-01T09:00:00Z', {follow: false, previous: false, timestamps: false, sinceMs: Date.parse('2024-05-01T09:00:00Z')}],
    ['tailLines=', {follow: false, previous: false, timestamps: false}],
  ])('%s decodes', (query, options) => {
    expect(parseContainerLogQuery(new URLSearchParams(query), NOW)).toEqual({options});
  });

  it.each([
    ['tailLines=abc', 400, '{"message": "Unable to decode query."}'],
    ['limitBytes=1.5', 400, '{"message": "Unable to decode query."}'],
    ['sinceTime=yesterday', 400, '{"message": "Unable to decode query."}'],
    ['tailLines=-1', 422, '{"message": "Invalid request."}'],
    ['limitBytes=0', 422, '{"message": "Invalid request."}'],
    ['sinceSeconds=0', 422, '{"message": "Invalid request."}'],
    ['sinceSeconds=5&sinceTime=2024-05-01T09:00:00Z', 422, '{"message": "Invalid request."}'],
  ])('%s is refused with %d', (query, status, message) => {
    expect(parseContainerLogQuery(new URLSearchParams(query), NOW)).toEqual({status, message});
  });
});

describe('rendering a CRI log file', () => {
  it.each([
    ['everything, partial records joined', {}, 'one\ntwo\nthree\nfour\n'],
    ['the last two file lines', {tailLines: 2}, 'ee\nfour\n'],
    ['no lines', {tailLines: 0}, ''],
    ['more lines than the file has', {tailLines: 50}, 'one\ntwo\nthree\nfour\n'],
    ['at most 6 bytes', {limitBytes: 6}, 'one\ntw'],
    ['tail then limit', {tailLines: 1, limitBytes: 2}, 'fo'],
    ['records since a time', {sinceMs: Date.parse('2024-05-01T09:59:30Z')}, 'two\nthree\nfour\n'],
    [
      'with timestamps (trailing zeros trimmed)',
      {timestamps: true, tailLines: 3},
      '2024-05-01T09:59:50.12345Z thr2024-05-01T09:59:50.12346Z ee\n2024-05-01T09:59:59Z four\n',
    ],
  ])('%s', (_name, options, expected) => {
    expect(renderContainerLog(LOG, options).toString()).toBe(expected);
  });

  it('counts bytes, not characters, for limitBytes', () => {
    const out = renderContainerLog(cri(['2024-05-01T09:59:00Z stdout F héllo']), {limitBytes: 3});
    expect(out).toEqual(Buffer.from('héllo').subarray(0, 3));
  });

  it('skips lines that are not CRI records inside a CRI file', () => {
    const data = cri(['2024-05-01T09:59:00Z stdout F a', 'garbage', '2024-05-01T09:59:01Z stdout F b']);
    expect(renderContainerLog(data, {}).toString()).toBe('a\nb\n');
  });

  it('serves a plain text file line by line', () => {
    expect(renderContainerLog(Buffer.from('x\ny\nz\n'), {tailLines: 2}).toString()).toBe('y\nz\n');
  });

  it('keeps an empty complete line', () => {
    expect(renderContainerLog(cri(['2024-05-01T09:59:00Z stdout F ', '2024-05-01T09:59:00Z stdout F']), {}).toString()).toBe('\n\n');
  });

  it.each([
    ['a\nb\nc\n', 1, 4],
    ['a\nb\nc\n', 2, 2],
    ['a\nb\nc\n', 3, 0],
    ['a\nb\nc', 1, 4],
    ['', 3, 0],
  ])('tailStart(%j, %d) = %d', (text, lines, start) => {
    expect(tailStart(Buffer.from(text), lines)).toBe(start);
  });

  it.each([
    ['2024-05-01T09:59:50.123450000Z', '2024-05-01T09:59:50.12345Z'],
    ['2024-05-01T09:59:50.000000000Z', '2024-05-01T09:59:50Z'],
    ['2024-05-01T09:59:50.5+02:00', '2024-05-01T09:59:50.5+02:00'],
    ['2024-05-01T09:59:50Z', '2024-05-01T09:59:50Z'],
  ])('formats %s as %s', (input, output) => {
    expect(formatTimestamp(input)).toBe(output);
  });
});

describe('routes', () => {
  const on = {debuggingHandlers: true};
  const off = {debuggingHandlers: false};
  it.each([
    ['GET', '/healthz', on, {kind: 'healthz'}],
    ['GET', '/healthz/syncloop', off, {kind: 'healthz'}],
    ['GET', '/pods', off, {kind: 'pods'}],
    ['POST', '/pods', on, {kind: 'methodNotAllowed', allow: 'GET'}],
    ['GET', '/metrics', off, {kind: 'metrics'}],
    ['POST', '/stats/summary', off, {kind: 'statsSummary'}],
    ['DELETE', '/stats/summary', on, {kind: 'methodNotAllowed', allow: 'GET, POST'}],
    ['GET', '/runningpods/', on, {kind: 'runningPods'}],
    ['GET', '/runningpods/', off, {kind: 'debuggingDisabled'}],
    ['GET', '/containerLogs/ns/web/app', on, {kind: 'containerLogs', namespace: 'ns', pod: 'web', container: 'app'}],
    ['GET', '/containerLogs/ns/we%2Fb/app', on, {kind: 'containerLogs', namespace: 'ns', pod: 'we/b', container: 'app'}],
    ['GET', '/containerLogs/ns/web', on, {kind: 'notFound'}],
    ['GET', '/containerLogs/ns/web/app', off, {kind: 'debuggingDisabled'}],
    ['GET', '/exec/ns/web/app', off, {kind: 'debuggingDisabled'}],
    ['GET', '/exec/ns/web/app', on, {kind: 'exec', namespace: 'ns', pod: 'web', container: 'app'}],
    ['POST', '/exec/ns/web/0123-uid/app', on, {kind: 'exec', namespace: 'ns', pod: 'web', container: 'app'}],
    ['POST', '/attach/ns/web/app', on, {kind: 'attach', namespace: 'ns', pod: 'web', container: 'app'}],
    ['DELETE', '/attach/ns/web/app', on, {kind: 'methodNotAllowed', allow: 'GET, POST'}],
    ['POST', '/portForward/ns/web', on, {kind: 'portForward', namespace: 'ns', pod: 'web'}],
    ['GET', '/portForward/ns/web/uid/extra', on, {kind: 'notFound'}],
    ['POST', '/run/ns/web/app', on, {kind: 'run', namespace: 'ns', pod: 'web', container: 'app'}],
    ['GET', '/run/ns/web/app', on, {kind: 'methodNotAllowed', allow: 'POST'}],
    ['GET', '/exec/ns/web', on, {kind: 'notFound'}],
    ['GET', '/portForward/ns/web', off, {kind: 'debuggingDisabled'}],
    ['GET', '/nothing', on, {kind: 'notFound'}],
  ])('%s %s (%j) -> %j', (method, path, options, route) => {
    expect(routeRequest(method, path, options)).toEqual(route);
  });
});

describe('pod lists', () => {
  it('lists the agent pods without per-item kind, and an empty list as null items', () => {
    const pod = {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'a', namespace: 'ns'}, spec: {containers: [{name: 'c'}]}};
    expect(podList([pod])).toEqual({kind: 'PodList', apiVersion: 'v1', metadata: {}, items: [{metadata: {name: 'a', namespace: 'ns'}, spec: {containers: [{name: 'c'}]}}]});
    expect(podList([])).toEqual({kind: 'PodList', apiVersion: 'v1', metadata: {}, items: null});
  });

  it('reduces running pods to what the runtime knows', () => {
    expect(runningPodList([{uid: 'u1', name: 'a', namespace: 'ns', containers: [{name: 'c', image: 'busybox', state: 'running'}, {name: 'd'}]}]).items).toEqual([
      {
        metadata: {name: 'a', namespace: 'ns', uid: 'u1', creationTimestamp: null},
        spec: {containers: [{name: 'c', image: 'busybox', resources: {}}, {name: 'd', resources: {}}]},
        status: {},
      },
    ]);
  });
});

describe('summary', () => {
  it('keeps only cpu and memory when asked', () => {
    const t = '2024-05-01T10:00:00Z';
    const summary: Summary = {
      node: {nodeName: 'n1', startTime: t, cpu: {time: t, usageNanoCores: 5}, memory: {time: t, availableBytes: 10}, fs: {time: t, availableBytes: 1}},
      pods: [
        {
          podRef: {name: 'a', namespace: 'ns', uid: 'u'},
          startTime: t,
          containers: [{name: 'c', startTime: t, memory: {time: t, workingSetBytes: 3}, logs: {time: t, usedBytes: 9}}],
          'ephemeral-storage': {time: t, usedBytes: 9},
          memory: {time: t, workingSetBytes: 3},
        },
      ],
    };
    expect(onlyCpuAndMemory(summary)).toEqual({
      node: {nodeName: 'n1', startTime: t, cpu: {time: t, usageNanoCores: 5}, memory: {time: t, availableBytes: 10}},
      pods: [{podRef: {name: 'a', namespace: 'ns', uid: 'u'}, startTime: t, memory: {time: t, workingSetBytes: 3}, containers: [{name: 'c', startTime: t, memory: {time: t, workingSetBytes: 3}}]}],
    });
  });
});

describe('configuration', () => {
  it('reads the serving options by name', () => {
    const config = serverConfigFromOptions({
      address: '10.0.0.5',
      port: 11250,
      'read-only-port': 0,
      'healthz-port': 0,
      'enable-debugging-handlers': false,
      'tls-min-version': 'VersionTLS13',
      'tls-cipher-suites': [],
      'anonymous-auth': false,
      'client-ca-file': '/etc/ca.crt',
      'cert-dir': '/tmp/pki',
    });
    expect(config).toMatchObject({
      address: '10.0.0.5',
      port: 11250,
      readOnlyPort: 0,
      healthzPort: 0,
      healthzBindAddress: '127.0.0.1',
      enableServer: true,
      enableDebuggingHandlers: false,
      tlsMinVersion: 'VersionTLS13',
      tlsCipherSuites: undefined,
      anonymousAuth: false,
      clientCaFile: '/etc/ca.crt',
      certDir: '/tmp/pki',
      authorizationMode: 'AlwaysAllow',
    });
  });

  it.each([
    [{}, []],
    [{'authorization-mode': 'Webhook'}, [expect.stringContaining('--authorization-mode=Webhook asks the API server with SubjectAccessReviews: give the agent an --orchconfig')]],
    [{'authentication-token-webhook': true}, [expect.stringContaining('--authentication-token-webhook asks the API server with TokenReviews: give the agent an --orchconfig')]],
    [{'authorization-mode': 'Webhook', 'enable-server': false}, []],
  ])('start check of %j without an API server', (options, problems) => {
    expect(unsupportedServerSettings(serverConfigFromOptions(options))).toEqual(problems);
  });

  it('starts the Webhook modes when there is an API server to ask', () => {
    expect(unsupportedServerSettings(serverConfigFromOptions({'authorization-mode': 'Webhook', 'authentication-token-webhook': true}), true)).toEqual([]);
  });

  it('names the host and loopback in a generated certificate, and a specific bind address', () => {
    expect(generatedCertificateNames('Node-1', '0.0.0.0')).toEqual({hosts: ['node-1', 'localhost'], ips: ['127.0.0.1', '::1']});
    expect(generatedCertificateNames('node-1', '10.0.0.5').ips).toEqual(['10.0.0.5', '127.0.0.1', '::1']);
  });
});
