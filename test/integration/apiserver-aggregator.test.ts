/**
 * The aggregator with a real extension API server: a tiny HTTPS server on 127.0.0.1 that checks the
 * proxy client certificate (signed by the front-proxy CA) and the X-Remote-* headers, serves
 * discovery and a resource, and is registered with an APIService + Service + Endpoints. kubectl
 * reaches it (api-resources, get); the availability controller keeps the Available condition;
 * a redirect from the extension is not forwarded; a wrong CA bundle fails the discovery check.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {createServer, type Server} from 'node:https';
import type {IncomingHttpHeaders} from 'node:http';
import {connect as netConnect, createServer as createNetServer, type AddressInfo, type Server as NetServer} from 'node:net';
import type {TLSSocket} from 'node:tls';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {names} from '../../src/api/names.js';
import {generateCa, generateClientCertificate, generateServingCertificate, type KeyPairPem} from '../../src/daemons/shared/pki/certificates.js';
import {kubectl, sleep, startApiServer, type InProcessServer} from '../helpers/apiserver.js';

const GROUP = 'wardle.example.com';
const NS = 'wardle-system';

interface Seen {
  path: string;
  headers: IncomingHttpHeaders;
  clientCn?: string;
  authorized: boolean;
}

/** The extension: refuses callers without a front-proxy client certificate, as an extension server configured with the requestheader CA does. */
async function startExtension(serving: KeyPairPem, frontProxyCa: KeyPairPem, seen: Seen[], host = '127.0.0.1'): Promise<Server> {
  const server = createServer({cert: serving.certPem, key: serving.keyPem, ca: frontProxyCa.certPem, requestCert: true, rejectUnauthorized: false}, (req, res) => {
    const socket = req.socket as TLSSocket;
    const cn = socket.getPeerCertificate()?.subject?.CN;
    const entry: Seen = {path: req.url ?? '', headers: req.headers, clientCn: Array.isArray(cn) ? cn[0] : cn, authorized: socket.authorized};
    seen.push(entry);
    const json = (code: number, body: unknown) => {
      res.writeHead(code, {'Content-Type': 'application/json'});
      res.end(JSON.stringify(body));
    };
    if (!entry.authorized || !req.headers['x-remote-user']) return json(401, {kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 401, reason: 'Unauthorized'});
    const base = `/apis/${GROUP}/v1alpha1`;
    const url = (req.url ?? '').split('?')[0];
    if (url === base) {
      return json(200, {kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${GROUP}/v1alpha1`, resources: [
        {name: 'flunders', singularName: 'flunder', namespaced: true, kind: 'Flunder', verbs: ['get', 'list']},
      ]});
    }
    if (url === `${base}/namespaces/default/flunders`) {
      return json(200, {kind: 'FlunderList', apiVersion: `${GROUP}/v1alpha1`, metadata: {resourceVersion: '1'}, items: [
        {kind: 'Flunder', apiVersion: `${GROUP}/v1alpha1`, metadata: {name: 'my-flunder', namespace: 'default', creationTimestamp: '2025-01-01T00:00:00Z'}},
      ]});
    }
    if (url === `${base}/namespaces/default/flunders/moved`) {
      res.writeHead(302, {Location: 'https://elsewhere.example.com/'});
      return res.end();
    }
    json(404, {kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 404, reason: 'NotFound'});
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return server;
}

/** The front-proxy credentials (files for the server's options) and a running extension with its CA. */
async function setUpExtension(dir: string, seen: Seen[], host?: string): Promise<{extension: Server; extensionCa: KeyPairPem; certFile: string; keyFile: string}> {
  const frontProxyCa = await generateCa({commonName: 'front-proxy-ca'});
  const proxyClient = await generateClientCertificate(frontProxyCa, {user: 'front-proxy-client'});
  const [certFile, keyFile] = [join(dir, 'proxy-client.crt'), join(dir, 'proxy-client.key')];
  writeFileSync(certFile, proxyClient.certPem);
  writeFileSync(keyFile, proxyClient.keyPem);
  const extensionCa = await generateCa({commonName: 'wardle-ca'});
  const extension = await startExtension(await generateServingCertificate(extensionCa, {hosts: [`wardle.${NS}.svc`], ips: []}), frontProxyCa, seen, host);
  return {extension, extensionCa, certFile, keyFile};
}

function apiServiceObject(name: string, version: string, service: Record<string, unknown>, caBundle?: string): Record<string, unknown> {
  return {
    apiVersion: `${names().groups.apiregistration}/v1`, kind: 'APIService', metadata: {name},
    spec: {group: GROUP, version, service, ...(caBundle ? {caBundle} : {}), groupPriorityMinimum: 1000, versionPriority: 15},
  };
}

/** The extension registered as upstream's docs say: a namespace, a Service, its Endpoints and the APIService. */
async function registerExtension(api: InProcessServer, extension: Server, extensionCa: KeyPairPem): Promise<void> {
  const port = (extension.address() as AddressInfo).port;
  const apply = async (object: unknown) => expect((await kubectl(api.orchconfigPath, ['apply', '-f', '-'], {input: JSON.stringify(object)})).stderr).toBe('');
  expect((await kubectl(api.orchconfigPath, ['create', 'namespace', NS])).code).toBe(0);
  await apply({apiVersion: 'v1', kind: 'Service', metadata: {name: 'wardle', namespace: NS}, spec: {ports: [{port: 443, targetPort: port}]}});
  await apply({apiVersion: 'v1', kind: 'Endpoints', metadata: {name: 'wardle', namespace: NS}, subsets: [{addresses: [{ip: '127.0.0.1'}], ports: [{port}]}]});
  await apply(apiServiceObject(`v1alpha1.${GROUP}`, 'v1alpha1', {namespace: NS, name: 'wardle', port: 443}, Buffer.from(extensionCa.certPem).toString('base64')));
}

describe('aggregator', () => {
  let dir: string;
  let api: InProcessServer;
  let extension: Server;
  const seen: Seen[] = [];
  const k = (...args: string[]) => kubectl(api.orchconfigPath, args);
  const apply = (object: unknown) => kubectl(api.orchconfigPath, ['apply', '-f', '-'], {input: JSON.stringify(object)});
  const available = async (name: string) => {
    const r = await k('get', 'apiservice', name, '-o', 'json');
    return (JSON.parse(r.stdout).status?.conditions ?? []).find((c: {type: string}) => c.type === 'Available');
  };
  const waitFor = async (name: string, status: string) => {
    for (let i = 0; i < 100; i++) {
      const c = await available(name);
      if (c?.status === status) return c;
      await sleep(100);
    }
    throw new Error(`${name} never became Available=${status}: ${JSON.stringify(await available(name))}`);
  };
  const apiService = apiServiceObject;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-aggregator-'));
    const setUp = await setUpExtension(dir, seen);
    extension = setUp.extension;
    api = await startApiServer({
      engine: 'sqlite',
      config: {aggregator: {routing: true, rejectForwardingRedirect: true, availabilityIntervalMs: 200, proxyClientCertFile: setUp.certFile, proxyClientKeyFile: setUp.keyFile}},
    });
    await registerExtension(api, extension, setUp.extensionCa);
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    extension?.closeAllConnections();
    await new Promise((resolve) => extension?.close(resolve));
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it('marks the APIService available after a discovery check of its service', async () => {
    const c = await waitFor(`v1alpha1.${GROUP}`, 'True');
    expect(c).toMatchObject({reason: 'Passed', message: 'all checks passed'});
    const table = await k('get', 'apiservices', `v1alpha1.${GROUP}`);
    expect(table.stdout).toMatch(new RegExp(`v1alpha1\\.wardle\\.example\\.com\\s+${NS}/wardle\\s+True`));
  });

  it('lists the extension\'s group and resources in discovery (kubectl api-resources)', async () => {
    const groups = JSON.parse((await k('get', '--raw', '/apis')).stdout) as {groups: {name: string; preferredVersion: {version: string}}[]};
    expect(groups.groups.find((g) => g.name === GROUP)?.preferredVersion.version).toBe('v1alpha1');
    const r = await k('api-resources', `--api-group=${GROUP}`, '--no-headers');
    expect(r.stdout).toMatch(/^flunders\s+wardle\.example\.com\/v1alpha1\s+true\s+Flunder/m);
  });

  it('proxies kubectl get with the proxy client certificate and the user as X-Remote-* headers', async () => {
    seen.length = 0;
    const r = await k('get', 'flunders', '-n', 'default');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('my-flunder');
    const request = seen.find((s) => s.path.startsWith(`/apis/${GROUP}/v1alpha1/namespaces/default/flunders`));
    expect(request).toBeDefined();
    expect(request!.authorized).toBe(true);
    expect(request!.clientCn).toBe('front-proxy-client');
    expect(request!.headers['x-remote-user']).toBe('orch-admin');
    expect(String(request!.headers['x-remote-group'])).toContain('system:masters');
    expect(request!.headers.authorization).toBeUndefined();
  });

  it('does not forward a redirect from the extension (--aggregator-reject-forwarding-redirect)', async () => {
    const r = await k('get', '--raw', `/apis/${GROUP}/v1alpha1/namespaces/default/flunders/moved`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('the backend attempted to redirect this request, which is not permitted');
  });

  it('reports a missing service and a wrong CA bundle in the condition, and answers 503 while unavailable', async () => {
    expect((await apply(apiService(`v1beta1.${GROUP}`, 'v1beta1', {namespace: NS, name: 'nobody', port: 443}))).code).toBe(0);
    expect(await waitFor(`v1beta1.${GROUP}`, 'False')).toMatchObject({reason: 'ServiceNotFound', message: `service/nobody in "${NS}" is not present`});
    const r = await k('get', '--raw', `/apis/${GROUP}/v1beta1`);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/service unavailable|ServiceUnavailable|503/);

    const otherCa = await generateCa({commonName: 'someone-else'});
    expect((await apply(apiService(`v1beta1.${GROUP}`, 'v1beta1', {namespace: NS, name: 'wardle', port: 443}, Buffer.from(otherCa.certPem).toString('base64')))).code).toBe(0);
    const failed = await waitFor(`v1beta1.${GROUP}`, 'False').then(async (c) => (c.reason === 'FailedDiscoveryCheck' ? c : (await sleep(500), available(`v1beta1.${GROUP}`))));
    expect(failed.reason).toBe('FailedDiscoveryCheck');
    expect(failed.message).toContain(`failing or missing response from https://127.0.0.1:`);
    expect((await k('delete', 'apiservice', `v1beta1.${GROUP}`)).code).toBe(0);
  });
});

/** A konnectivity-style HTTP CONNECT proxy on a unix socket; it records the authorities it tunnels to. */
function startConnectProxy(path: string, tunnels: string[]): Promise<NetServer> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createNetServer((client) => {
    sockets.add(client);
    client.on('close', () => sockets.delete(client));
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      client.off('data', onData);
      const [method, authority] = head.subarray(0, head.indexOf('\r\n')).toString().split(' ');
      if (method !== 'CONNECT' || !authority) return void client.end('HTTP/1.1 405 Method Not Allowed\r\n\r\n');
      tunnels.push(authority);
      const at = authority.lastIndexOf(':');
      const upstream = netConnect({host: authority.slice(0, at), port: Number(authority.slice(at + 1))}, () => {
        sockets.add(upstream);
        upstream.on('close', () => sockets.delete(upstream));
        client.write('HTTP/1.1 200 Connection established\r\n\r\n');
        const rest = head.subarray(end + 4);
        if (rest.length) upstream.write(rest);
        client.pipe(upstream).pipe(client);
      });
      upstream.on('error', () => client.destroy());
      client.on('error', () => upstream.destroy());
    };
    client.on('data', onData);
  });
  // Closing the proxy ends the tunnels it holds.
  const close = server.close.bind(server);
  server.close = (cb) => {
    for (const socket of sockets) socket.destroy();
    return close(cb);
  };
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

describe('aggregator through the egress selector (HTTPConnect over a unix socket)', () => {
  let dir: string;
  let api: InProcessServer;
  let extension: Server;
  let proxy: NetServer;
  const tunnels: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-egress-'));
    const setUp = await setUpExtension(dir, []);
    extension = setUp.extension;
    proxy = await startConnectProxy(join(dir, 'konnectivity.sock'), tunnels);
    writeFileSync(join(dir, 'egress.yaml'), [
      `apiVersion: apiserver.${names().domain}/v1beta1`,
      'kind: EgressSelectorConfiguration',
      'egressSelections:',
      '- name: cluster',
      '  connection:',
      '    proxyProtocol: HTTPConnect',
      '    transport:',
      `      uds: {udsName: ${join(dir, 'konnectivity.sock')}}`,
      '- name: controlplane',
      '  connection: {proxyProtocol: Direct}',
      '- name: etcd',
      '  connection: {proxyProtocol: Direct}',
      '',
    ].join('\n'));
    api = await startApiServer({
      engine: 'sqlite',
      config: {
        aggregator: {
          routing: true, rejectForwardingRedirect: true, availabilityIntervalMs: 200, egressSelectorConfigFile: join(dir, 'egress.yaml'),
          proxyClientCertFile: setUp.certFile, proxyClientKeyFile: setUp.keyFile,
        },
      },
    });
    await registerExtension(api, extension, setUp.extensionCa);
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    await new Promise((resolve) => proxy?.close(resolve));
    extension?.closeAllConnections();
    await new Promise((resolve) => extension?.close(resolve));
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it('checks and proxies through CONNECT tunnels to the endpoint', async () => {
    let r = await kubectl(api.orchconfigPath, ['get', 'flunders', '-n', 'default']);
    for (let i = 0; i < 50 && r.code !== 0; i++) {
      await sleep(100);
      r = await kubectl(api.orchconfigPath, ['get', 'flunders', '-n', 'default']);
    }
    expect(r.stdout).toContain('my-flunder');
    const port = (extension.address() as AddressInfo).port;
    expect(tunnels).toContain(`127.0.0.1:${port}`);
  });
});

describe('aggregator without --enable-aggregator-routing (the service\'s cluster IP)', () => {
  // orch runs no kube-proxy: the cluster IP and service port are dialed as they are, so the
  // extension listens on them itself (a loopback address from the service range here).
  const CLUSTER_IP = '127.0.100.5';
  let dir: string;
  let api: InProcessServer;
  let extension: Server;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-cluster-ip-'));
    const setUp = await setUpExtension(dir, [], CLUSTER_IP);
    extension = setUp.extension;
    api = await startApiServer({
      engine: 'sqlite',
      config: {
        serviceClusterIpRange: ['127.0.100.0/24'],
        aggregator: {routing: false, rejectForwardingRedirect: true, availabilityIntervalMs: 200, proxyClientCertFile: setUp.certFile, proxyClientKeyFile: setUp.keyFile},
      },
    });
    const port = (extension.address() as AddressInfo).port;
    const apply = async (object: unknown) => expect((await kubectl(api.orchconfigPath, ['apply', '-f', '-'], {input: JSON.stringify(object)})).stderr).toBe('');
    expect((await kubectl(api.orchconfigPath, ['create', 'namespace', NS])).code).toBe(0);
    // No Endpoints at all: without routing only the service is read.
    await apply({apiVersion: 'v1', kind: 'Service', metadata: {name: 'wardle', namespace: NS}, spec: {clusterIP: CLUSTER_IP, ports: [{port, targetPort: port}]}});
    await apply(apiServiceObject(`v1alpha1.${GROUP}`, 'v1alpha1', {namespace: NS, name: 'wardle', port}, Buffer.from(setUp.extensionCa.certPem).toString('base64')));
  }, 60_000);

  afterAll(async () => {
    await api?.stop();
    extension?.closeAllConnections();
    await new Promise((resolve) => extension?.close(resolve));
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it('checks and proxies to the cluster IP', async () => {
    let r = await kubectl(api.orchconfigPath, ['get', 'flunders', '-n', 'default']);
    for (let i = 0; i < 50 && r.code !== 0; i++) {
      await sleep(100);
      r = await kubectl(api.orchconfigPath, ['get', 'flunders', '-n', 'default']);
    }
    expect(r.stdout).toContain('my-flunder');
  });
});
