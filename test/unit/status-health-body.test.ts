/** `orch status` reads health bodies in upstream's format (shared/reference/health.md §2-3). */
import {describe, expect, it} from '@jest/globals';
import {parseCheckReason, parseHealthBody, type ParsedHealthBody} from '../../src/cmd/status/health-body.js';

describe('parseHealthBody on upstream bodies', () => {
  it.each<[string, string, ParsedHealthBody]>([
    ['non-verbose success: exactly "ok", no newline', 'ok', {verdict: 'passed', checks: [], warnings: []}],
    ['?verbose success', '[+]ping ok\nreadyz check passed\n', {verdict: 'passed', label: 'readyz', checks: [{name: 'ping', state: 'ok'}], warnings: []}],
    [
      'an excluded check',
      '[+]ping ok\n[+]bad excluded: ok\nlivez check passed\n',
      {verdict: 'passed', label: 'livez', checks: [{name: 'ping', state: 'ok'}, {name: 'bad', state: 'excluded'}], warnings: []},
    ],
    [
      'a check excluded with its group',
      '[+]ping ok\n[+]kvstore excluded: ok\n[+]kvstore-override-0 excluded with kvstore: ok\n[+]kvstore-readiness ok\nreadyz check passed\n',
      {
        verdict: 'passed',
        label: 'readyz',
        checks: [
          {name: 'ping', state: 'ok'},
          {name: 'kvstore', state: 'excluded'},
          {name: 'kvstore-override-0', state: 'excluded', group: 'kvstore'},
          {name: 'kvstore-readiness', state: 'ok'},
        ],
        warnings: [],
      },
    ],
    [
      'the warn line for unmatched exclusions',
      '[+]ping ok\nwarn: some health checks cannot be excluded: no matches for "bar","foo"\nreadyz check passed\n',
      {verdict: 'passed', label: 'readyz', checks: [{name: 'ping', state: 'ok'}], warnings: ['some health checks cannot be excluded: no matches for "bar","foo"']},
    ],
    [
      'failure: reason withheld',
      '[+]ping ok\n[-]bad failed: reason withheld\nreadyz check failed\n',
      {verdict: 'failed', label: 'readyz', checks: [{name: 'ping', state: 'ok'}, {name: 'bad', state: 'failed'}], warnings: []},
    ],
    [
      'a failure line with its reason (the server log format)',
      '[-]kvstore failed: error getting data from etcd: context deadline exceeded\nhealthz check failed\n',
      {verdict: 'failed', label: 'healthz', checks: [{name: 'kvstore', state: 'failed', reason: 'error getting data from etcd: context deadline exceeded'}], warnings: []},
    ],
    [
      'check names with slashes and a shutting-down server',
      '[+]ping ok\n[+]poststarthook/rbac/bootstrap-roles ok\n[-]poststarthook/start-apiextensions-controllers failed: reason withheld\n[-]shutdown failed: reason withheld\nreadyz check failed\n',
      {
        verdict: 'failed',
        label: 'readyz',
        checks: [
          {name: 'ping', state: 'ok'},
          {name: 'poststarthook/rbac/bootstrap-roles', state: 'ok'},
          {name: 'poststarthook/start-apiextensions-controllers', state: 'failed'},
          {name: 'shutdown', state: 'failed'},
        ],
        warnings: [],
      },
    ],
    ['an HTML page is no health body', '<html><body>hello</body></html>\n', {verdict: 'unknown', checks: [], warnings: []}],
    [
      'a Status object (403) is no health body',
      '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"forbidden","reason":"Forbidden","code":403}',
      {verdict: 'unknown', checks: [], warnings: []},
    ],
    ['a truncated body has checks but no verdict', '[+]ping ok\n[+]log ok\n', {verdict: 'unknown', checks: [{name: 'ping', state: 'ok'}, {name: 'log', state: 'ok'}], warnings: []}],
  ])('%s', (_title, body, expected) => {
    expect(parseHealthBody(body)).toEqual(expected);
  });
});

describe('parseCheckReason on single-check endpoints (§3)', () => {
  it.each<[string, number, string, string | undefined]>([
    ['a failing check reveals its error text', 500, 'internal server error: this will fail\n', 'this will fail'],
    ['kvstore failing', 500, 'internal server error: etcd client connection not yet established\n', 'etcd client connection not yet established'],
    ['a passing check has no reason', 200, 'ok', undefined],
    ['another error body is not a reason', 404, '404 page not found\n', undefined],
  ])('%s', (_title, status, body, reason) => {
    expect(parseCheckReason(status, body)).toBe(reason);
  });
});
