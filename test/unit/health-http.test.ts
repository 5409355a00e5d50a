import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:http';
import type {AddressInfo} from 'node:net';
import {createHealthHandler} from '../../src/daemons/shared/health/handler.js';
import {HealthRegistry} from '../../src/daemons/shared/health/registry.js';
import {namedCheck, pingCheck} from '../../src/daemons/shared/health/check.js';
import {LogCheck} from '../../src/daemons/shared/health/log-check.js';

describe('health endpoints on a real node:http server', () => {
  let server: Server;
  let base: string;
  let storeUp = true;
  const log = new LogCheck();

  beforeAll(async () => {
    const registry = new HealthRegistry();
    registry.addHealthChecks(
      pingCheck,
      log,
      namedCheck(
        'kvstore',
        () => {
          if (!storeUp) throw new Error('error getting data from kvstore: connection refused');
        },
        'kvstore',
      ),
    );
    registry.setShutdownCheck(namedCheck('shutdown', () => {}));
    const handle = createHealthHandler(registry);
    server = createServer((req, res) => {
      if (!handle(req, res)) {
        res.statusCode = 404;
        res.end('404 page not found\n');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    log.stop();
    await new Promise((resolve) => server.close(resolve));
  });

  it('serves ok, verbose, failures and individual checks end to end', async () => {
    const ok = await fetch(`${base}/readyz`);
    expect([ok.status, ok.headers.get('content-type'), ok.headers.get('x-content-type-options'), await ok.text()]).toEqual([
      200,
      'text/plain; charset=utf-8',
      'nosniff',
      'ok',
    ]);

    const verbose = await fetch(`${base}/readyz?verbose&exclude=kvstore&exclude=etcd`);
    expect(await verbose.text()).toBe(
      '[+]ping ok\n[+]log ok\n[+]kvstore excluded: ok\n[+]shutdown ok\n' +
        'warn: some health checks cannot be excluded: no matches for "etcd"\nreadyz check passed\n',
    );

    storeUp = false;
    const failed = await fetch(`${base}/livez`);
    expect([failed.status, await failed.text()]).toEqual([500, '[+]ping ok\n[+]log ok\n[-]kvstore failed: reason withheld\nlivez check failed\n']);
    const one = await fetch(`${base}/livez/kvstore`);
    expect([one.status, await one.text()]).toEqual([500, 'internal server error: error getting data from kvstore: connection refused\n']);
    storeUp = true;

    const missing = await fetch(`${base}/livez/shutdown`);
    expect(missing.status).toBe(404);
  });
});
