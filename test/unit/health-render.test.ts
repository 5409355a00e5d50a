import {describe, expect, it} from '@jest/globals';
import {evaluateRoot, parseHealthQuery} from '../../src/daemons/shared/health/render.js';
import {namedCheck, pingCheck, type HealthCheck} from '../../src/daemons/shared/health/check.js';

const bad = namedCheck('bad', () => {
  throw new Error('this will fail');
});
const good = (name: string, group?: string): HealthCheck => namedCheck(name, () => {}, group);

const query = (q: string) => parseHealthQuery(new URLSearchParams(q));

describe('root health bodies (health.md §2)', () => {
  it.each([
    ['no parameters: exactly "ok", no newline', [pingCheck], '', 200, 'ok'],
    ['?verbose', [pingCheck], 'verbose', 200, '[+]ping ok\nreadyz check passed\n'],
    ['?verbose=false is still verbose', [pingCheck], 'verbose=false', 200, '[+]ping ok\nreadyz check passed\n'],
    ['excluded check is reported, not run', [pingCheck, bad], 'verbose=true&exclude=bad', 200, '[+]ping ok\n[+]bad excluded: ok\nreadyz check passed\n'],
    [
      'unknown exclusion: warn line',
      [pingCheck],
      'verbose=true&exclude=dontexist',
      200,
      '[+]ping ok\nwarn: some health checks cannot be excluded: no matches for "dontexist"\nreadyz check passed\n',
    ],
    [
      'several unknown exclusions are sorted and quoted, no spaces',
      [pingCheck],
      'verbose&exclude=foo&exclude=bar',
      200,
      '[+]ping ok\nwarn: some health checks cannot be excluded: no matches for "bar","foo"\nreadyz check passed\n',
    ],
    ['warn line not in a non-verbose success', [pingCheck], 'exclude=nope', 200, 'ok'],
    ['failure: always verbose, reason withheld', [pingCheck, bad], '', 500, '[+]ping ok\n[-]bad failed: reason withheld\nreadyz check failed\n'],
    [
      'failure with an unknown exclusion carries the warn line',
      [pingCheck, bad],
      'exclude=zzz',
      500,
      '[+]ping ok\n[-]bad failed: reason withheld\nwarn: some health checks cannot be excluded: no matches for "zzz"\nreadyz check failed\n',
    ],
    [
      'exclusion by group',
      [pingCheck, good('kvstore'), good('kvstore-override-0', 'kvstore'), good('kvstore-readiness')],
      'verbose&exclude=kvstore',
      200,
      '[+]ping ok\n[+]kvstore excluded: ok\n[+]kvstore-override-0 excluded with kvstore: ok\n[+]kvstore-readiness ok\nreadyz check passed\n',
    ],
    [
      'repeated exclude',
      [pingCheck, good('log'), bad],
      'verbose&exclude=log&exclude=bad',
      200,
      '[+]ping ok\n[+]log excluded: ok\n[+]bad excluded: ok\nreadyz check passed\n',
    ],
  ])('%s', async (_title, checks, q, status, body) => {
    const result = await evaluateRoot('readyz', checks, query(q));
    expect(result.statusCode).toBe(status);
    expect(result.body).toBe(body);
  });

  it('writes the failure reasons to the log at verbosity 2, not to the body', async () => {
    const worse = namedCheck('kvstore', () => Promise.reject(new Error('error getting data from kvstore: context deadline exceeded')));
    const result = await evaluateRoot('livez', [pingCheck, bad, worse], query(''));
    expect(result.body).not.toContain('this will fail');
    expect(result.logs).toEqual([
      {
        verbosity: 2,
        message:
          'bad,kvstore check failed: livez\n[-]bad failed: this will fail\n[-]kvstore failed: error getting data from kvstore: context deadline exceeded\n',
      },
    ]);
  });

  it('logs unmatched exclusions at verbosity 6', async () => {
    const result = await evaluateRoot('livez', [pingCheck], query('exclude=shutdown'));
    expect(result.logs).toEqual([{verbosity: 6, message: 'cannot exclude some health checks, no health checks are installed matching "shutdown"'}]);
  });

  it('runs checks sequentially in registration order and never runs excluded ones', async () => {
    const order: string[] = [];
    const slow = namedCheck('slow', async () => {
      await new Promise((r) => setTimeout(r, 5));
      order.push('slow');
    });
    const fast = namedCheck('fast', () => void order.push('fast'));
    const skipped = namedCheck('skipped', () => void order.push('skipped'));
    await evaluateRoot('healthz', [slow, fast, skipped], query('exclude=skipped'));
    expect(order).toEqual(['slow', 'fast']);
  });
});
