/**
 * Service account tokens end to end with real kubectl: `kubectl create token` (TokenRequest),
 * `kubectl auth whoami` with the token, bound tokens dying with their pod, legacy token secrets,
 * TokenReview, issuer discovery, and the tokens that must be refused (401). kubectl's typed clients
 * are wired to upstream's groups (authentication.k8s.io), so this file runs the API server under
 * upstream's name set.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {generateKeyPairSync, createPrivateKey} from 'node:crypto';
import {readFileSync, writeFileSync} from 'node:fs';
import {join} from 'node:path';
import {SignJWT, createLocalJWKSet, jwtVerify, UnsecuredJWT} from 'jose';
import {selectNames} from '../../src/api/names.js';
import {startApiServer, kubectl, type ApiClient} from '../helpers/apiserver.js';
import {legacyClaims, signerFromPem} from '../../src/daemons/controller-manager/controllers/serviceaccount-token.js';
import {keyIdOf} from '../../src/daemons/shared/serving/jwt-keys.js';
import {request as httpsRequest} from 'node:https';
import {Gauge, Registry} from 'prom-client';
import {freePort} from '../helpers/apiserver.js';
import {ControllerManagerServing} from '../../src/daemons/controller-manager/serving.js';
import {secureServingOptions} from '../../src/daemons/shared/serving/secure-serving.js';

selectNames('kubernetes');

let s: Awaited<ReturnType<typeof startApiServer>>;
let ns: string;
const ISSUER = 'https://issuer.test.example';

/** A kubeconfig that authenticates with a bearer token only (no client certificate). */
function tokenKubeconfig(token: string): string {
  const admin = readFileSync(s.orchconfigPath, 'utf8');
  const ca = /certificate-authority-data: (\S+)/.exec(admin)![1];
  const server = /server: (\S+)/.exec(admin)![1];
  const file = join(s.dataDir, `token-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, [
    'apiVersion: v1', 'kind: Config', 'current-context: t',
    'clusters:', `- name: c`, `  cluster: {server: "${server}", certificate-authority-data: ${ca}}`,
    'users:', `- name: u`, `  user: {token: "${token}"}`,
    'contexts:', `- name: t`, `  context: {cluster: c, user: u}`, '',
  ].join('\n'));
  return file;
}

async function whoami(token: string): Promise<{code: number; user?: any; stderr: string}> {
  const r = await kubectl(tokenKubeconfig(token), ['auth', 'whoami', '-o', 'json']);
  return {code: r.code, user: r.code === 0 ? JSON.parse(r.stdout).status.userInfo : undefined, stderr: r.stderr};
}

async function createToken(account: string, ...args: string[]): Promise<string> {
  const r = await kubectl(s.orchconfigPath, ['-n', ns, 'create', 'token', account, ...args]);
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

const signingKey = () => createPrivateKey(readFileSync(join(s.server.config.certDir, 'sa.key'), 'utf8'));

beforeAll(async () => {
  s = await startApiServer({
    engine: 'sqlite',
    config: {
      authorizationModes: ['RBAC'],
      // No success cache: the tests below delete accounts, pods and secrets and expect it at once.
      tokenCacheTtlMs: 0,
      enableBootstrapTokenAuth: true,
      serviceAccounts: {issuers: [ISSUER, 'https://old-issuer.test.example'], lookup: true, extendTokenExpiration: true, maxTokenExpirationSeconds: 7200},
    },
  });
  ns = 'default';
  for (const name of ['robot', 'doomed']) {
    const created = await s.client.post(`/api/v1/namespaces/${ns}/serviceaccounts`, {apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name}});
    if (created.status !== 201) throw new Error(created.text);
  }
}, 30_000);

afterAll(async () => {
  await s?.stop();
});

describe('bound service account tokens', () => {
  it('kubectl create token gives a token kubectl auth whoami shows as the account', async () => {
    const token = await createToken('robot');
    const me = await whoami(token);
    expect(me.stderr).toBe('');
    expect(me.user.username).toBe('system:serviceaccount:default:robot');
    expect(me.user.groups).toEqual(['system:serviceaccounts', 'system:serviceaccounts:default', 'system:authenticated']);
    expect(me.user.uid).toBeTruthy();
    expect(me.user.extra['authentication.kubernetes.io/credential-id'][0]).toMatch(/^JTI=/);
  }, 30_000);

  it('caps the lifetime at --service-account-max-token-expiration and rejects less than 10 minutes', async () => {
    const r = await s.client.post(`/api/v1/namespaces/${ns}/serviceaccounts/robot/token`, {apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {expirationSeconds: 86400}});
    expect(r.status).toBe(201);
    expect(r.body.spec.expirationSeconds).toBe(7200);
    expect(r.headers.warning).toBe('299 - "requested expiration of 86400 seconds shortened to 7200 seconds"');
    expect(r.body.spec.audiences).toEqual([ISSUER, 'https://old-issuer.test.example']);
    const left = Date.parse(r.body.status.expirationTimestamp) - Date.now();
    expect(left).toBeGreaterThan(7000_000);
    expect(left).toBeLessThan(7300_000);
    const short = await kubectl(s.orchconfigPath, ['-n', ns, 'create', 'token', 'robot', '--duration', '5m']);
    expect(short.code).not.toBe(0);
    expect(short.stderr).toContain('may not specify a duration less than 10 minutes');
    const missing = await kubectl(s.orchconfigPath, ['-n', ns, 'create', 'token', 'nobody']);
    expect(missing.stderr).toContain('serviceaccounts "nobody" not found');
  }, 30_000);

  it('a token bound to a pod carries the pod and stops working when the pod is deleted', async () => {
    const pod = await s.client.post(`/api/v1/namespaces/${ns}/pods`, {apiVersion: 'v1', kind: 'Pod', metadata: {name: 'worker'}, spec: {serviceAccountName: 'robot', containers: [{name: 'c', image: 'x'}]}});
    expect(pod.status).toBe(201);
    const token = await createToken('robot', '--bound-object-kind', 'Pod', '--bound-object-name', 'worker');
    const me = await whoami(token);
    expect(me.user.extra['authentication.kubernetes.io/pod-name']).toEqual(['worker']);
    expect(me.user.extra['authentication.kubernetes.io/pod-uid']).toEqual([pod.body.metadata.uid]);
    const wrongAccount = await kubectl(s.orchconfigPath, ['-n', ns, 'create', 'token', 'doomed', '--bound-object-kind', 'Pod', '--bound-object-name', 'worker']);
    expect(wrongAccount.stderr).toContain('cannot bind token for serviceaccount "doomed" to pod running with different serviceaccount name');
    expect((await s.client.delete(`/api/v1/namespaces/${ns}/pods/worker?gracePeriodSeconds=0`)).status).toBe(200);
    const after = await whoami(token);
    expect(after.code).not.toBe(0);
    expect(after.stderr).toContain('Unauthorized');
  }, 30_000);

  it('a token of a deleted account, or for another audience, is refused with 401', async () => {
    const doomed = await createToken('doomed');
    expect((await whoami(doomed)).code).toBe(0);
    expect((await s.client.delete(`/api/v1/namespaces/${ns}/serviceaccounts/doomed`)).status).toBe(200);
    const gone = await whoami(doomed);
    expect(gone.code).not.toBe(0);
    expect(gone.stderr).toContain('Unauthorized');

    const other = await createToken('robot', '--audience', 'vault');
    const refused = await s.client.as({clientCert: false, token: other}).get('/api/v1/namespaces/default/pods');
    expect(refused.status).toBe(401);
    expect(refused.body).toMatchObject({kind: 'Status', reason: 'Unauthorized', code: 401});
  }, 30_000);
});

describe('tokens that must be refused', () => {
  /** The status of a SelfSubjectReview (every authenticated user may create one): 201 or 401. */
  const refused = async (token: string) => {
    const r = await s.client.as({clientCert: false, token}).post('/apis/authentication.k8s.io/v1/selfsubjectreviews', {apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview'});
    return r.status;
  };
  const claims = async (overrides: Record<string, unknown> = {}) => {
    const account = (await s.client.get(`/api/v1/namespaces/${ns}/serviceaccounts/robot`)).body;
    const now = Math.floor(Date.now() / 1000);
    return {
      iss: ISSUER, sub: 'system:serviceaccount:default:robot', aud: [ISSUER], iat: now, nbf: now, exp: now + 600,
      'kubernetes.io': {namespace: 'default', serviceaccount: {name: 'robot', uid: account.metadata.uid}},
      ...overrides,
    };
  };
  const sign = async (payload: Record<string, unknown>, key = signingKey()) =>
    new SignJWT(payload).setProtectedHeader({alg: 'ES256', kid: keyIdOf(key)}).sign(key);

  it('accepts a hand-signed token with the second issuer (all issuers verify)', async () => {
    expect(await refused(await sign(await claims()))).toBe(201);
    expect(await refused(await sign(await claims({iss: 'https://old-issuer.test.example'})))).toBe(201);
  });

  it('refuses malformed, unsigned, foreign, expired and unknown-key tokens', async () => {
    const other = generateKeyPairSync('ec', {namedCurve: 'prime256v1'}).privateKey;
    const now = Math.floor(Date.now() / 1000);
    const cases: Record<string, string> = {
      malformed: 'abc.def.ghi',
      notJwt: 'hello',
      algNone: new UnsecuredJWT(await claims()).encode(),
      wrongIssuer: await sign(await claims({iss: 'https://elsewhere.example'})),
      expired: await sign(await claims({iat: now - 7200, nbf: now - 7200, exp: now - 3600})),
      unknownKey: await sign(await claims(), other),
      noExpiry: await sign(await claims({exp: undefined})),
      wrongUid: await sign(await claims({'kubernetes.io': {namespace: 'default', serviceaccount: {name: 'robot', uid: 'not-the-uid'}}})),
      subjectMismatch: await sign(await claims({sub: 'system:serviceaccount:default:other'})),
    };
    for (const [name, token] of Object.entries(cases)) expect([name, await refused(token)]).toEqual([name, 401]);
  });
});

describe('legacy token secrets', () => {
  it('a token secret signed as the token controller does authenticates until its secret goes', async () => {
    const account = (await s.client.get(`/api/v1/namespaces/${ns}/serviceaccounts/robot`)).body;
    const signer = signerFromPem(readFileSync(join(s.server.config.certDir, 'sa.key'), 'utf8'));
    const token = await signer.sign(legacyClaims({namespace: ns, name: 'robot', uid: account.metadata.uid}, 'robot-token'));
    const secret = await s.client.post(`/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1', kind: 'Secret', type: 'kubernetes.io/service-account-token',
      metadata: {name: 'robot-token', annotations: {'kubernetes.io/service-account.name': 'robot', 'kubernetes.io/service-account.uid': account.metadata.uid}},
      data: {token: Buffer.from(token).toString('base64')},
    });
    expect(secret.status).toBe(201);
    const me = await whoami(token);
    expect(me.user?.username).toBe('system:serviceaccount:default:robot');
    expect((await s.client.delete(`/api/v1/namespaces/${ns}/secrets/robot-token`)).status).toBe(200);
    expect((await whoami(token)).code).not.toBe(0);
  }, 30_000);
});

describe('TokenReview and issuer discovery', () => {
  let token: string;
  beforeAll(async () => {
    token = await createToken('robot', '--audience', 'vault', '--audience', ISSUER);
  }, 30_000);

  const review = (client: ApiClient, spec: Record<string, unknown>) =>
    client.post('/apis/authentication.k8s.io/v1/tokenreviews', {apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec});

  it('reviews a token for the audiences asked', async () => {
    const ok = await review(s.client, {token, audiences: ['vault']});
    expect(ok.status).toBe(201);
    expect(ok.body.status).toMatchObject({authenticated: true, audiences: ['vault'], user: {username: 'system:serviceaccount:default:robot'}});
    expect(ok.body.status.user.groups).toContain('system:authenticated');
    const own = await review(s.client, {token});
    expect(own.body.status).toMatchObject({authenticated: true, audiences: [ISSUER]});
    const wrong = await review(s.client, {token, audiences: ['elsewhere']});
    expect(wrong.status).toBe(201);
    expect(wrong.body.status.authenticated).toBe(false);
    expect(wrong.body.status.error).toContain('audiences');
    const bad = await review(s.client, {token: 'x.y.z'});
    expect(bad.body.status.authenticated).toBe(false);
    const empty = await review(s.client, {token: ''});
    expect(empty.status).toBe(400);
    expect(empty.body.message).toBe('token is required for TokenReview in authentication');
  });

  it('publishes the issuer and its keys to service accounts, and the keys verify the tokens', async () => {
    const anonymous = await s.client.as({clientCert: false}).get('/.well-known/openid-configuration');
    expect(anonymous.status).toBe(403);
    const asAccount = s.client.as({clientCert: false, token});
    const config = await asAccount.get('/.well-known/openid-configuration');
    expect(config.status).toBe(200);
    expect(config.body).toMatchObject({issuer: ISSUER, response_types_supported: ['id_token'], id_token_signing_alg_values_supported: ['ES256']});
    expect(config.body.jwks_uri).toMatch(/\/openid\/v1\/jwks$/);
    const jwks = await asAccount.get('/openid/v1/jwks');
    expect(jwks.status).toBe(200);
    expect(jwks.headers['content-type']).toBe('application/jwk-set+json');
    const {payload} = await jwtVerify(token, createLocalJWKSet(jwks.body), {issuer: ISSUER, audience: 'vault'});
    expect(payload.sub).toBe('system:serviceaccount:default:robot');
  });
});

describe('the controller manager\'s /metrics with service account tokens (delegated authentication)', () => {
  let serving: ControllerManagerServing;
  let port: number;
  const rbac = 'rbac.authorization.k8s.io';

  beforeAll(async () => {
    for (const name of ['scraper', 'stranger']) await s.client.post(`/api/v1/namespaces/${ns}/serviceaccounts`, {apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name}});
    await s.client.post(`/apis/${rbac}/v1/clusterroles`, {apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: {name: 'metrics-reader'}, rules: [{verbs: ['get'], nonResourceURLs: ['/metrics']}]});
    await s.client.post(`/apis/${rbac}/v1/clusterrolebindings`, {
      apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: {name: 'scraper-metrics'},
      roleRef: {apiGroup: rbac, kind: 'ClusterRole', name: 'metrics-reader'}, subjects: [{kind: 'ServiceAccount', name: 'scraper', namespace: ns}],
    });
    const metrics = new Registry();
    new Gauge({name: 'orch_identity_test_gauge', help: 'A gauge the test reads back.', registers: [metrics]}).set(1);
    serving = new ControllerManagerServing(
      {
        bindAddress: '127.0.0.1', securePort: await freePort(), certDir: join(s.dataDir, 'cm-pki'), alwaysAllowPaths: ['/healthz'],
        authenticationOrchconfig: s.orchconfigPath, authorizationOrchconfig: s.orchconfigPath,
        authorizedTtlMs: 10_000, unauthorizedTtlMs: 0,
        ...secureServingOptions({}),
      },
      metrics,
    );
    await serving.start();
    port = Number(new URL(serving.url).port);
  }, 30_000);

  afterAll(async () => {
    await serving?.stop();
  });

  const scrape = (token: string) => new Promise<{status: number; body: string}>((resolve, reject) => {
    const req = httpsRequest({host: '127.0.0.1', port, path: '/metrics', rejectUnauthorized: false, headers: {authorization: `Bearer ${token}`}}, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({status: res.statusCode ?? 0, body}));
    });
    req.on('error', reject);
    req.end();
  });

  it('answers the account RBAC allows, refuses the one it does not, and a forged token with 401', async () => {
    const allowed = await scrape(await createToken('scraper'));
    expect(allowed.status).toBe(200);
    expect(allowed.body).toContain('orch_identity_test_gauge 1');
    const refused = await scrape(await createToken('stranger'));
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('User \\"system:serviceaccount:default:stranger\\" cannot get path \\"/metrics\\"');
    expect((await scrape('not.a.token')).status).toBe(401);
  }, 30_000);
});

describe('bootstrap tokens (--enable-bootstrap-token-auth)', () => {
  const b64 = (v: string) => Buffer.from(v).toString('base64');
  const tokenSecret = (id: string, data: Record<string, string>) => s.client.post('/api/v1/namespaces/kube-system/secrets', {
    apiVersion: 'v1', kind: 'Secret', type: 'bootstrap.kubernetes.io/token', metadata: {name: `bootstrap-token-${id}`},
    data: Object.fromEntries(Object.entries({'token-id': id, ...data}).map(([k, v]) => [k, b64(v)])),
  });

  it('kubectl auth whoami shows system:bootstrap:<id>; expired, unusable and wrong tokens get 401', async () => {
    const later = new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    const earlier = new Date(Date.now() - 3600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    expect((await tokenSecret('abcdef', {'token-secret': '0123456789abcdef', expiration: later, 'usage-bootstrap-authentication': 'true', 'auth-extra-groups': 'system:bootstrappers:worker'})).status).toBe(201);
    expect((await tokenSecret('expird', {'token-secret': '0123456789abcdef', expiration: earlier, 'usage-bootstrap-authentication': 'true'})).status).toBe(201);
    expect((await tokenSecret('nouse0', {'token-secret': '0123456789abcdef', 'usage-bootstrap-signing': 'true'})).status).toBe(201);
    const me = await whoami('abcdef.0123456789abcdef');
    expect(me.stderr).toBe('');
    expect(me.user).toEqual({username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:worker', 'system:authenticated']});
    for (const token of ['expird.0123456789abcdef', 'nouse0.0123456789abcdef', 'abcdef.0123456789abcdee', 'zzzzzz.0123456789abcdef']) {
      expect([token, await refusedStatus(token)]).toEqual([token, 401]);
    }
  }, 30_000);
});

async function refusedStatus(token: string): Promise<number> {
  const r = await s.client.as({clientCert: false, token}).post('/apis/authentication.k8s.io/v1/selfsubjectreviews', {apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview'});
  return r.status;
}
