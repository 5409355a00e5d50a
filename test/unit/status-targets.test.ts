/**
 * `orch status`: its options (components, URLs), how it finds the API server (orchconfig, then the
 * admin orchconfig), and its HTTP side (bodies of any status, timeouts, self-signed servers).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer as createHttpServer, type Server} from 'node:http';
import {createServer as createHttpsServer} from 'node:https';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {apiServerTarget, checkUrl, parseComponents, unverifiedEndpoint} from '../../src/cmd/status/targets.js';
import {endpointUrl, httpFetcher} from '../../src/cmd/status/http.js';
import {writeAdminOrchconfig} from '../../src/client/orchconfig.js';
import {ensureServingCertificates} from '../../src/daemons/shared/pki/cert-dir.js';
import {servingCertificateNames} from '../../src/daemons/shared/pki/serving-names.js';
import {freePort} from '../helpers/apiserver.js';

describe('--components', () => {
  it.each<[string, string[]]>([
    ['apiserver,controller-manager,agent', ['apiserver', 'controller-manager', 'agent']],
    ['agent,apiserver', ['apiserver', 'agent']],
    [' apiserver , apiserver ', ['apiserver']],
  ])('%j selects %j (display order, each once)', (text, names) => {
    expect(parseComponents(text)).toEqual(names);
  });

  it.each<[string, string]>([
    ['apiserver,scheduler', 'unknown component "scheduler" in --components: expected apiserver, controller-manager, agent'],
    ['', '--components is empty: expected some of apiserver, controller-manager, agent'],
  ])('refuses %j', (text, message) => {
    expect(() => parseComponents(text)).toThrow(message);
  });
});

describe('URL options', () => {
  it('accepts http and https, without a trailing slash', () => {
    expect(checkUrl('agent-url', 'http://127.0.0.1:10248/')).toBe('http://127.0.0.1:10248');
  });
  it.each([
    ['127.0.0.1:10257', '--controller-manager-url: "127.0.0.1:10257" is not a URL (expected https://host:port)'],
    ['ftp://host', '--controller-manager-url: "ftp://host" must be an http:// or https:// URL'],
  ])('refuses %s', (value, message) => {
    expect(() => checkUrl('controller-manager-url', value)).toThrow(message);
  });
  it('keeps a path prefix of the base URL before the health path and its query', () => {
    expect(endpointUrl('https://h:1/proxy/', '/readyz?verbose').toString()).toBe('https://h:1/proxy/readyz?verbose');
    expect(endpointUrl('https://h:1', '/readyz/poststarthook/rbac/bootstrap-roles').toString()).toBe('https://h:1/readyz/poststarthook/rbac/bootstrap-roles');
  });
});

describe('the API server address', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-status-'));
  const admin = join(dir, 'admin.orchconfig');
  const saved = process.env.ORCHCONFIG;
  beforeAll(async () => {
    await writeAdminOrchconfig(admin, {server: 'https://127.0.0.1:7443', caPem: 'ca', certPem: 'cert', keyPem: 'key'});
  });
  afterAll(() => {
    if (saved === undefined) delete process.env.ORCHCONFIG;
    else process.env.ORCHCONFIG = saved;
    rmSync(dir, {recursive: true, force: true});
  });

  it('falls back to the admin orchconfig when no orchconfig exists', async () => {
    process.env.ORCHCONFIG = join(dir, 'missing-config');
    const target = await apiServerTarget({}, admin);
    expect(target.url).toBe('https://127.0.0.1:7443');
    expect(target.endpoint).toMatchObject({ca: 'ca', cert: 'cert', key: 'key', verify: true});
  });

  it('an orchconfig that exists wins over the admin one', async () => {
    const own = join(dir, 'own.orchconfig');
    await writeAdminOrchconfig(own, {server: 'https://10.0.0.1:6443', caPem: 'ca', certPem: 'cert', keyPem: 'key'});
    process.env.ORCHCONFIG = own;
    expect((await apiServerTarget({}, admin)).url).toBe('https://10.0.0.1:6443');
  });

  it('a missing --orchconfig is the component\'s error, not a fallback', async () => {
    const target = await apiServerTarget({orchconfig: join(dir, 'nope')}, admin);
    expect(target.endpoint).toBeUndefined();
    expect(target.configError).toBe(`stat ${join(dir, 'nope')}: no such file or directory`);
  });
});

describe('the HTTP side', () => {
  const servers: Server[] = [];
  const listen = (server: Server) =>
    new Promise<string>((resolve) => {
      servers.push(server);
      server.listen(0, '127.0.0.1', () => resolve(`127.0.0.1:${(server.address() as {port: number}).port}`));
    });
  afterAll(() => {
    for (const s of servers) {
      s.closeAllConnections();
      s.close();
    }
  });
  const fetch = httpFetcher(300, '300ms');

  it('returns the body of a 500 (a failing readyz lists its checks there)', async () => {
    const body = '[+]ping ok\n[-]shutdown failed: reason withheld\nreadyz check failed\n';
    const host = await listen(createHttpServer((_req, res) => res.writeHead(500).end(body)));
    expect(await fetch(unverifiedEndpoint(`http://${host}`), '/readyz?verbose')).toEqual({statusCode: 500, body});
  });

  it('says a refused connection in Go\'s words', async () => {
    const port = await freePort();
    await expect(fetch(unverifiedEndpoint(`https://127.0.0.1:${port}`), '/livez?verbose')).rejects.toThrow(`dial tcp 127.0.0.1:${port}: connect: connection refused`);
  });

  it('gives up after --request-timeout on a server that never answers', async () => {
    const host = await listen(createHttpServer(() => undefined));
    const started = Date.now();
    await expect(fetch(unverifiedEndpoint(`http://${host}`), '/livez?verbose')).rejects.toThrow('no answer within 300ms (--request-timeout)');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('talks to a self-signed server without verifying it; verification would refuse it', async () => {
    const certDir = mkdtempSync(join(tmpdir(), 'orch-status-tls-'));
    try {
      const generated = await ensureServingCertificates(certDir, servingCertificateNames({hostname: 'status-test', extra: ['127.0.0.1']}));
      const host = await listen(createHttpsServer({cert: generated.serving.certPem, key: generated.serving.keyPem}, (_req, res) => res.end('ok')) as unknown as Server);
      expect(await fetch(unverifiedEndpoint(`https://${host}`), '/healthz')).toEqual({statusCode: 200, body: 'ok'});
      await expect(fetch({...unverifiedEndpoint(`https://${host}`), verify: true}, '/healthz')).rejects.toThrow();
    } finally {
      rmSync(certDir, {recursive: true, force: true});
    }
  });
});
