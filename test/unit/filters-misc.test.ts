import {describe, expect, it} from '@jest/globals';
import {requestInfoOf} from '../../src/daemons/apiserver/filters/request-info.js';
import {failureStatus, statusJson, writeStatus} from '../../src/daemons/shared/http/status.js';
import {goawayFilter} from '../../src/daemons/apiserver/filters/goaway.js';
import {cacheControlFilter, hstsFilter} from '../../src/daemons/apiserver/filters/headers.js';
import {watchTimeoutMs} from '../../src/daemons/apiserver/filters/watch-timeout.js';
import {composeFilters, type Filter} from '../../src/daemons/shared/http/http-types.js';
import {FakeRequest, FakeResponse} from './filters-fake-http.js';

describe('request info', () => {
  it.each([
    ['GET', '/api/v1/pods', 'list', '', 'pods', ''],
    ['GET', '/api/v1/pods?watch=true', 'watch', '', 'pods', ''],
    ['GET', '/api/v1/pods?watch=1', 'watch', '', 'pods', ''],
    ['GET', '/api/v1/pods?watch=false', 'list', '', 'pods', ''],
    ['GET', '/api/v1/pods?watch=0', 'list', '', 'pods', ''],
    ['GET', '/api/v1/watch/namespaces/ns/pods', 'watch', 'ns', 'pods', ''],
    ['GET', '/api/v1/namespaces/ns/pods/web', 'get', 'ns', 'pods', ''],
    ['GET', '/api/v1/namespaces/ns/pods/web/log', 'get', 'ns', 'pods', 'log'],
    ['PUT', '/api/v1/namespaces/ns/status', 'update', 'ns', 'namespaces', 'status'],
    ['GET', '/api/v1/namespaces/ns', 'get', 'ns', 'namespaces', ''],
    ['POST', '/apis/apps/v1/namespaces/ns/deployments', 'create', 'ns', 'deployments', ''],
    ['DELETE', '/apis/apps/v1/namespaces/ns/deployments', 'deletecollection', 'ns', 'deployments', ''],
    ['DELETE', '/apis/apps/v1/namespaces/ns/deployments/web', 'delete', 'ns', 'deployments', ''],
    ['PATCH', '/apis/apps/v1/namespaces/ns/deployments/web/scale', 'patch', 'ns', 'deployments', 'scale'],
    ['GET', '/api/v1/proxy/namespaces/ns/pods/web/a/b', 'proxy', 'ns', 'pods', ''],
    ['GET', '/healthz', 'get', '', '', ''],
    ['POST', '/apis/apps', 'post', '', '', ''],
  ])('%s %s -> verb %s', (method, url, verb, namespace, resource, subresource) => {
    const info = requestInfoOf(new FakeRequest(url, method) as never);
    expect([info.verb, info.namespace, info.resource, info.subresource]).toEqual([verb, namespace, resource, subresource]);
  });
});

describe('Status writer', () => {
  it('writes a Failure Status in upstream key order, omitting empty fields', () => {
    const res = new FakeResponse();
    writeStatus(res as never, 429, 'TooManyRequests', 'slow down', {retryAfterSeconds: 1});
    expect([res.statusCode, res.headers, res.body]).toEqual([
      429,
      {'content-type': 'application/json', 'x-content-type-options': 'nosniff'},
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"slow down","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}\n',
    ]);
    expect(statusJson(failureStatus(500, '', 'boom'))).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"boom","code":500}\n',
    );
    expect(statusJson(failureStatus(404, 'NotFound', 'pods "x" not found', {name: 'x', group: '', kind: 'pods'}))).toBe(
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"pods \\"x\\" not found","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404}\n',
    );
  });
});

describe('goaway chance (--goaway-chance)', () => {
  function http2Request(closed: string[]) {
    const req = new FakeRequest('/api/v1/pods', 'GET', {}, '2.0');
    req.stream = {session: {close: () => void closed.push('goaway')}};
    return req;
  }

  it.each([
    // [chance, random draw, protocol, closes]
    [0.01, 0.005, '2.0', true],
    [0.01, 0.01, '2.0', false],
    [0.01, 0.5, '2.0', false],
    [0, 0, '2.0', false],
    [0.02, 0, '1.1', false],
  ])('chance %d, draw %d, HTTP/%s -> GOAWAY %s', (chance, draw, version, closes) => {
    const closed: string[] = [];
    const req = version === '2.0' ? http2Request(closed) : new FakeRequest('/api/v1/pods');
    const res = new FakeResponse();
    let served = false;
    goawayFilter({chance, random: () => draw})(req as never, res as never, () => (served = true));
    expect(served).toBe(true);
    expect(closed).toEqual([]); // only after the response is done
    res.end('{}');
    expect(closed).toEqual(closes ? ['goaway'] : []);
    expect(res.headers.connection).toBeUndefined();
  });
});

describe('response header filters', () => {
  it('sets Cache-Control unless the handler sets its own, and HSTS from the directives', () => {
    const handler = (_req: unknown, res: FakeResponse) => res.end();
    const chain = composeFilters([cacheControlFilter(), hstsFilter(['max-age=31536000', 'includeSubDomains'])], handler as never);
    const res = new FakeResponse();
    chain(new FakeRequest('/version') as never, res as never);
    expect(res.headers).toEqual({'cache-control': 'no-cache, private', 'strict-transport-security': 'max-age=31536000; includeSubDomains'});

    const own = composeFilters([cacheControlFilter(), hstsFilter([])], ((_req: unknown, r: FakeResponse) => {
      r.setHeader('Cache-Control', 'public, max-age=3600');
      r.end();
    }) as never);
    const res2 = new FakeResponse();
    own(new FakeRequest('/openapi/v2') as never, res2 as never);
    expect(res2.headers).toEqual({'cache-control': 'public, max-age=3600'});
  });

  it('composes filters outermost first and lets any of them answer', () => {
    const order: string[] = [];
    const tag =
      (name: string, stop = false): Filter =>
      (_req, res, next) => {
        order.push(name);
        if (stop) res.end(name);
        else next();
      };
    const chain = composeFilters([tag('a'), tag('b', true), tag('c')], () => order.push('handler'));
    chain(new FakeRequest('/') as never, new FakeResponse() as never);
    expect(order).toEqual(['a', 'b']);
  });
});

describe('watch timeout (--min-request-timeout)', () => {
  it.each([
    [30, 1800, 0.5, 30_000],
    [undefined, 1800, 0, 1_800_000],
    [undefined, 1800, 0.999, 1800 * 1000 * 1.999],
    [0, 1800, 0.5, 2_700_000],
    [undefined, 0, 0.5, 0],
  ])('timeoutSeconds %s, min %is, draw %d -> %ims', (timeoutSeconds, min, draw, expected) => {
    expect(watchTimeoutMs(timeoutSeconds, min, () => draw)).toBeCloseTo(expected);
  });
});
