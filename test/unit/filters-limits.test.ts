import {describe, expect, it} from '@jest/globals';
import {maxInFlightFilter} from '../../src/daemons/apiserver/filters/max-in-flight.js';
import {effectiveTimeoutMs, requestDeadline, requestTimeoutFilter} from '../../src/daemons/apiserver/filters/timeout.js';
import {FakeClock, settle} from '../../src/daemons/shared/clock.js';
import {FakeRequest, FakeResponse} from './filters-fake-http.js';
import type {Filter} from '../../src/daemons/shared/http/http-types.js';

function send(filter: Filter, url: string, method = 'GET', headers: Record<string, string> = {}) {
  const req = new FakeRequest(url, method, headers);
  const res = new FakeResponse();
  let served = false;
  filter(req as never, res as never, () => (served = true));
  return {req, res, served};
}

describe('max-in-flight (--max-requests-inflight, --max-mutating-requests-inflight)', () => {
  it('rejects the request over the read-only budget with 429, Retry-After: 1 and plain text', () => {
    const filter = maxInFlightFilter({maxRequestsInFlight: 2, maxMutatingRequestsInFlight: 1});
    const first = send(filter, '/api/v1/pods');
    send(filter, '/api/v1/namespaces/default/pods/web');
    const third = send(filter, '/healthz');
    expect(third.served).toBe(false);
    expect([third.res.statusCode, third.res.headers, third.res.body]).toEqual([
      429,
      {'retry-after': '1', 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff'},
      'Too many requests, please try again later.\n',
    ]);
    expect(filter.inFlight).toEqual({readOnly: 2, mutating: 0});
    first.res.end();
    expect(filter.inFlight).toEqual({readOnly: 1, mutating: 0});
    expect(send(filter, '/api/v1/pods').served).toBe(true);
  });

  it.each([
    // [method, url, counts as mutating]
    ['POST', '/api/v1/namespaces/default/pods', true],
    ['PUT', '/api/v1/namespaces/default/pods/web', true],
    ['PATCH', '/apis/apps/v1/namespaces/default/deployments/web', true],
    ['DELETE', '/api/v1/namespaces/default/pods', true],
    ['POST', '/some/non-resource', true],
    ['GET', '/api/v1/namespaces/default/pods/web', false],
    ['GET', '/api/v1/pods', false],
    ['GET', '/version', false],
    // Non-resource verbs are the lower-case method; only get/list/watch are read-only, as upstream.
    ['HEAD', '/version', true],
  ])('%s %s counts as mutating: %s', (method, url, mutating) => {
    const filter = maxInFlightFilter({maxRequestsInFlight: 1, maxMutatingRequestsInFlight: 1});
    expect(send(filter, url, method).served).toBe(true);
    expect(filter.inFlight).toEqual(mutating ? {readOnly: 0, mutating: 1} : {readOnly: 1, mutating: 0});
  });

  it.each([
    ['GET', '/api/v1/pods?watch=true'],
    ['GET', '/api/v1/watch/namespaces/default/pods'],
    ['POST', '/api/v1/namespaces/default/pods/web/exec'],
    ['GET', '/api/v1/namespaces/default/pods/web/log'],
    ['GET', '/api/v1/namespaces/default/pods/web/proxy/index.html'],
  ])('never counts long-running %s %s', (method, url) => {
    const filter = maxInFlightFilter({maxRequestsInFlight: 1, maxMutatingRequestsInFlight: 1});
    for (let i = 0; i < 3; i++) expect(send(filter, url, method).served).toBe(true);
    expect(filter.inFlight).toEqual({readOnly: 0, mutating: 0});
  });

  it('disables a budget with 0', () => {
    const filter = maxInFlightFilter({maxRequestsInFlight: 0, maxMutatingRequestsInFlight: 1});
    for (let i = 0; i < 5; i++) expect(send(filter, '/api/v1/pods').served).toBe(true);
    expect(send(filter, '/api/v1/namespaces/default/pods', 'POST').served).toBe(true);
    expect(send(filter, '/api/v1/namespaces/default/pods', 'POST').res.statusCode).toBe(429);
  });

  it('always serves system:masters and releases aborted requests', () => {
    const rejected: boolean[] = [];
    const filter = maxInFlightFilter({
      maxRequestsInFlight: 1,
      maxMutatingRequestsInFlight: 1,
      userGroups: (req) => (req.headers['x-test-groups'] as string | undefined)?.split(','),
      onReject: (_req, mutating) => rejected.push(mutating),
    });
    const held = send(filter, '/api/v1/pods');
    expect(send(filter, '/api/v1/pods', 'GET', {'x-test-groups': 'system:authenticated,system:masters'}).served).toBe(true);
    expect(send(filter, '/api/v1/pods', 'GET', {'x-test-groups': 'system:authenticated'}).served).toBe(false);
    expect(rejected).toEqual([false]);
    held.res.abort();
    expect(filter.inFlight.readOnly).toBe(0);
  });
});

describe('request timeout (--request-timeout, ?timeout=)', () => {
  it.each([
    // [default ms, query, effective ms]
    [60_000, '', 60_000],
    [60_000, '?timeout=10s', 10_000],
    [60_000, '?timeout=1m30s', 60_000], // can only shorten
    [60_000, '?timeout=0s', 60_000], // 0 means "no timeout of my own"
    [60_000, '?timeout=-5s', 60_000],
    [60_000, '?timeout=250ms', 250],
    [0, '?timeout=5s', 5_000],
    [0, '', 0],
  ])('default %ims with "%s" -> %ims', (defaultMs, query, expected) => {
    expect(effectiveTimeoutMs(new FakeRequest(`/api/v1/pods${query}`) as never, defaultMs)).toEqual({timeoutMs: expected});
  });

  it('answers a malformed ?timeout= with 400 BadRequest', () => {
    const filter = requestTimeoutFilter({requestTimeoutMs: 60_000, clock: new FakeClock()});
    const {res, served} = send(filter, '/api/v1/pods?timeout=abc');
    expect(served).toBe(false);
    expect([res.statusCode, res.headers['content-type'], res.body]).toEqual([
      400,
      'application/json',
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"invalid timeout specified in the request URL - time: invalid duration \\"abc\\"","reason":"BadRequest","code":400}\n',
    ]);
  });

  it('answers 504 with a Timeout Status when the handler is too slow, and drops its late writes', async () => {
    const clock = new FakeClock();
    const timeouts: string[] = [];
    const filter = requestTimeoutFilter({requestTimeoutMs: 60_000, clock, onTimeout: (req) => timeouts.push(req.url!)});
    const {req, res, served} = send(filter, '/api/v1/pods?timeout=5s');
    expect(served).toBe(true);
    const deadline = requestDeadline(req as never)!;
    expect(deadline.deadline).toBe(5000);
    await clock.advance(4999);
    expect(res.writableEnded).toBe(false);
    await clock.advance(1);
    expect(deadline.signal.aborted).toBe(true);
    expect([res.statusCode, res.headers, res.body]).toEqual([
      504,
      {'content-type': 'application/json', 'x-content-type-options': 'nosniff'},
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within requested timeout - context deadline exceeded","reason":"Timeout","details":{},"code":504}\n',
    ]);
    expect(timeouts).toEqual(['/api/v1/pods?timeout=5s']);
    // The handler finishing late changes nothing.
    res.setHeader('Content-Type', 'text/html');
    res.statusCode = 200;
    res.end('late');
    expect(res.body).not.toContain('late');
    expect(res.headers['content-type']).toBe('application/json');
  });

  it('leaves a request answered in time alone', async () => {
    const clock = new FakeClock();
    const filter = requestTimeoutFilter({requestTimeoutMs: 1000, clock});
    const {res} = send(filter, '/api/v1/pods');
    res.end('{"kind":"PodList"}');
    await clock.advance(5000);
    expect([res.statusCode, res.body]).toEqual([200, '{"kind":"PodList"}']);
    expect(clock.pending).toBe(0);
  });

  it('aborts a response whose head was already sent', async () => {
    const clock = new FakeClock();
    const filter = requestTimeoutFilter({requestTimeoutMs: 1000, clock});
    const {res} = send(filter, '/api/v1/pods');
    res.writeHead(200);
    res.write('{"kind":');
    await clock.advance(1000);
    expect(res.destroyed).toBe(true);
    res.write('"late"');
    expect(res.body).toBe('{"kind":');
  });

  it('does not time out long-running requests', async () => {
    const clock = new FakeClock();
    const filter = requestTimeoutFilter({requestTimeoutMs: 1000, clock});
    const {req, res} = send(filter, '/api/v1/pods?watch=true&timeout=1s');
    await clock.advance(10_000);
    expect(res.writableEnded).toBe(false);
    expect(requestDeadline(req as never)).toBeUndefined();
  });

  it('clears its timer when the client goes away', async () => {
    const clock = new FakeClock();
    const filter = requestTimeoutFilter({requestTimeoutMs: 1000, clock});
    send(filter, '/api/v1/pods').res.abort();
    await settle();
    expect(clock.pending).toBe(0);
  });
});
