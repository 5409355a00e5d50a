/**
 * The controller manager's secure port with delegated authentication and authorization through a
 * real API server (RBAC): the client CA comes from the API server's extension-apiserver-authentication
 * config map, each request is asked of the API server with a SubjectAccessReview, /metrics answers
 * a user RBAC allows and refuses one it does not with a 403 naming the user and the path. The API
 * server's front proxy settings (`--requestheader-*`, published in the same config map) are looked
 * up too: the proxy's certificate makes its `X-Remote-*` headers the caller.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {request} from 'node:https';
import {connect} from 'node:tls';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {Gauge, Registry} from 'prom-client';
import {type InProcessServer, freePort, startApiServer} from '../helpers/apiserver.js';
import {ControllerManagerServing} from '../../src/daemons/controller-manager/serving.js';
import {generateCa, generateClientCertificate, type KeyPairPem} from '../../src/daemons/shared/pki/certificates.js';
import {secureServingOptions} from '../../src/daemons/shared/serving/secure-serving.js';

function get(port: number, path: string, cert?: KeyPairPem, headers: Record<string, string> = {}): Promise<{status: number; body: string}> {
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port, path, headers, rejectUnauthorized: false, ...(cert ? {cert: cert.certPem, key: cert.keyPem} : {})}, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('controller manager delegated authentication and authorization', () => {
  let dir: string;
  let api: InProcessServer;
  let serving: ControllerManagerServing;
  let port: number;
  let alice: KeyPairPem;
  let bob: KeyPairPem;
  let proxy: KeyPairPem;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-cm-delegated-'));
    const proxyCa = await generateCa({commonName: 'front-proxy-ca'});
    proxy = await generateClientCertificate(proxyCa, {user: 'front-proxy'});
    writeFileSync(join(dir, 'front-proxy-ca.crt'), proxyCa.certPem);
    api = await startApiServer({
      engine: 'sqlite',
      config: {
        authorizationModes: ['RBAC'],
        requestHeader: {clientCaFile: join(dir, 'front-proxy-ca.crt'), allowedNames: ['front-proxy'], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'], uidHeaders: []},
      },
    });
    const pki = join(api.dataDir, 'pki');
    const ca = {certPem: readFileSync(join(pki, 'ca.crt'), 'utf8'), keyPem: readFileSync(join(pki, 'ca.key'), 'utf8')};
    alice = await generateClientCertificate(ca, {user: 'alice', groups: ['ops']});
    bob = await generateClientCertificate(ca, {user: 'bob'});
    const rbac = 'rbac.orch.io';
    await api.client.post(`/apis/${rbac}/v1/clusterroles`, {apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: {name: 'metrics-reader'}, rules: [{verbs: ['get'], nonResourceURLs: ['/metrics']}]});
    await api.client.post(`/apis/${rbac}/v1/clusterrolebindings`, {
      apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: {name: 'ops-metrics'},
      roleRef: {apiGroup: rbac, kind: 'ClusterRole', name: 'metrics-reader'}, subjects: [{apiGroup: rbac, kind: 'Group', name: 'ops'}],
    });
    const metrics = new Registry();
    new Gauge({name: 'orch_test_gauge', help: 'A gauge the test reads back.', registers: [metrics]}).set(1);
    serving = new ControllerManagerServing(
      {
        bindAddress: '127.0.0.1', securePort: await freePort(), certDir: join(dir, 'pki'), alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
        authenticationOrchconfig: api.orchconfigPath, authorizationOrchconfig: api.orchconfigPath,
        authorizedTtlMs: 10_000, unauthorizedTtlMs: 0,
        // --tls-curve-preferences=24: P-384 only.
        ...secureServingOptions({'tls-curve-preferences': [24]}),
      },
      metrics,
    );
    await serving.start();
    port = Number(new URL(serving.url).port);
  }, 60_000);

  afterAll(async () => {
    await serving?.stop();
    await api?.stop();
    if (dir) rmSync(dir, {recursive: true, force: true});
  });

  it('serves /metrics to a user RBAC allows (by a client certificate of the API server\'s client CA)', async () => {
    const reply = await get(port, '/metrics', alice);
    expect(reply.status).toBe(200);
    expect(reply.body).toContain('orch_test_gauge 1');
  });

  it('refuses a user RBAC does not allow, naming the user and the path', async () => {
    const reply = await get(port, '/metrics', bob);
    expect(reply.status).toBe(403);
    expect(JSON.parse(reply.body)).toMatchObject({reason: 'Forbidden', message: 'forbidden: User "bob" cannot get path "/metrics"'});
    const anonymous = await get(port, '/metrics');
    expect(JSON.parse(anonymous.body).message).toBe('forbidden: User "system:anonymous" cannot get path "/metrics"');
  });

  it('believes a front proxy\'s headers when its certificate chains to the published proxy CA, and no one else\'s', async () => {
    const asAlice = {'X-Remote-User': 'alice', 'X-Remote-Group': 'ops'};
    expect((await get(port, '/metrics', proxy, asAlice)).status).toBe(200);
    const forged = await get(port, '/metrics', bob, asAlice);
    expect(forged.status).toBe(403);
    expect(JSON.parse(forged.body).message).toBe('forbidden: User "bob" cannot get path "/metrics"');
  });

  it('keeps the always-allowed health paths open to anyone, their checks included', async () => {
    expect((await get(port, '/healthz')).status).toBe(200);
    expect((await get(port, '/livez/ping')).status).toBe(200);
  });

  it('offers only the curves of --tls-curve-preferences', async () => {
    const handshake = (ecdhCurve: string) =>
      new Promise<string>((resolve) => {
        const socket = connect({host: '127.0.0.1', port, rejectUnauthorized: false, ecdhCurve}, () => {
          resolve('ok');
          socket.end();
        });
        socket.on('error', (error) => resolve(error.message));
      });
    expect(await handshake('P-384')).toBe('ok');
    expect(await handshake('X25519')).not.toBe('ok');
  });

  it('rejects a bearer token the API server does not vouch for with 401', async () => {
    const reply = await new Promise<number>((resolve, reject) => {
      const req = request({host: '127.0.0.1', port, path: '/metrics', rejectUnauthorized: false, headers: {authorization: 'Bearer not-a-token'}}, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(reply).toBe(401);
  });
});
