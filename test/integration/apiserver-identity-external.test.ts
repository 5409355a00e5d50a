/**
 * Identities vouched for by other systems, with one real HTTPS server on loopback (its own CA)
 * playing two parts: a token-review webhook (`--authentication-token-webhook-config-file`) and an
 * OpenID issuer (discovery and JWKS, keys made by jose) whose ID tokens kubectl sends with
 * `--token`; `kubectl auth whoami` shows each identity. A webhook that answers garbage or times
 * out, and ID tokens that are not quite right, never let anyone in. kubectl's
 * typed clients use upstream's groups, so the API server runs under upstream's name set.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:https';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {SignJWT, UnsecuredJWT, exportJWK, generateKeyPair, type KeyLike} from 'jose';
import {selectNames} from '../../src/api/names.js';
import {configureKlog} from '../../src/lib/klog.js';
import {ApiClient, readAdminOrchconfig, startApiServer, kubectl} from '../helpers/apiserver.js';
import {generateCa, generateClientCertificate, generateServingCertificate, type KeyPairPem} from '../../src/daemons/shared/pki/certificates.js';

selectNames('kubernetes');

let s: Awaited<ReturnType<typeof startApiServer>>;
let webhook: Server;
let dir: string;
let issuer: string;
const reviews: any[] = [];
const CLIENT_ID = 'orch-cli';
let rsa: {privateKey: KeyLike; publicKey: KeyLike};
let es384: {privateKey: KeyLike; publicKey: KeyLike};
let stranger: {privateKey: KeyLike; publicKey: KeyLike};
let jwks: {keys: object[]};
let proxyCa: KeyPairPem;

/** The webhook's answers by token. */
function answer(review: any): {body?: string; hang?: boolean} {
  const token = review.spec?.token;
  const reply = (status: object) => JSON.stringify({apiVersion: review.apiVersion, kind: 'TokenReview', status});
  if (token === 'alice-token') return {body: reply({authenticated: true, user: {username: 'alice', uid: 'a-1', groups: ['developers'], extra: {team: ['blue']}}})};
  if (token === 'denied-token') return {body: reply({authenticated: false, error: 'token revoked'})};
  if (token === 'garbage-token') return {body: '<html>oops</html>'};
  if (token === 'wrongkind-token') return {body: JSON.stringify({apiVersion: review.apiVersion, kind: 'Status', status: {authenticated: true, user: {username: 'mallory'}}})};
  if (token === 'nouser-token') return {body: reply({authenticated: true, user: {}})};
  if (token === 'slow-token') return {hang: true};
  return {body: reply({authenticated: false})};
}

function tokenKubeconfig(token: string): string {
  const admin = readAdmin();
  const file = join(dir, `kc-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, [
    'apiVersion: v1', 'kind: Config', 'current-context: t',
    'clusters:', '- name: c', `  cluster: {server: "${admin.server}", certificate-authority-data: ${admin.ca}}`,
    'users:', '- name: u', `  user: {token: "${token}"}`,
    'contexts:', '- name: t', '  context: {cluster: c, user: u}', '',
  ].join('\n'));
  return file;
}

function readAdmin(): {server: string; ca: string} {
  const text = readFileSync(s.orchconfigPath, 'utf8');
  return {server: /server: (\S+)/.exec(text)![1], ca: /certificate-authority-data: (\S+)/.exec(text)![1]};
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-identity-'));
  const ca = await generateCa();
  const cert = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
  rsa = await generateKeyPair('RS256');
  es384 = await generateKeyPair('ES384');
  stranger = await generateKeyPair('RS256');
  jwks = {keys: [{...(await exportJWK(rsa.publicKey)), kid: 'rsa-1', alg: 'RS256', use: 'sig'}, {...(await exportJWK(es384.publicKey)), kid: 'es-1', alg: 'ES384', use: 'sig'}]};
  webhook = createServer({cert: cert.certPem, key: cert.keyPem}, (req, res) => {
    if (req.method === 'GET') {
      res.setHeader('Content-Type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') return res.end(JSON.stringify({issuer, jwks_uri: `${issuer}/keys`, id_token_signing_alg_values_supported: ['RS256', 'ES384']}));
      if (req.url === '/keys') return res.end(JSON.stringify(jwks));
      res.statusCode = 404;
      return res.end('{}');
    }
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const review = JSON.parse(text);
      reviews.push(review);
      const {body, hang} = answer(review);
      if (hang) return; // never answers: the server's timeout decides
      res.setHeader('Content-Type', 'application/json');
      res.end(body);
    });
  });
  await new Promise<void>((r) => webhook.listen(0, '127.0.0.1', r));
  const port = (webhook.address() as {port: number}).port;
  issuer = `https://127.0.0.1:${port}`;
  proxyCa = await generateCa({commonName: 'front-proxy-ca'});
  const proxyCaFile = join(dir, 'front-proxy-ca.crt');
  writeFileSync(proxyCaFile, proxyCa.certPem);
  const caFile = join(dir, 'oidc-ca.crt');
  writeFileSync(caFile, ca.certPem);
  const configFile = join(dir, 'webhook.yaml');
  writeFileSync(configFile, [
    'apiVersion: v1', 'kind: Config', 'current-context: webhook',
    'clusters:', '- name: authn', `  cluster: {server: "https://127.0.0.1:${port}/authenticate", certificate-authority-data: ${Buffer.from(ca.certPem).toString('base64')}}`,
    'users:', '- name: apiserver', '  user: {}',
    'contexts:', '- name: webhook', '  context: {cluster: authn, user: apiserver}', '',
  ].join('\n'));
  s = await startApiServer({
    engine: 'sqlite',
    config: {
      authorizationModes: ['RBAC'],
      requestHeader: {
        clientCaFile: proxyCaFile, allowedNames: ['front-proxy'], usernameHeaders: ['X-Remote-User'], groupHeaders: ['X-Remote-Group'],
        extraHeaderPrefixes: ['X-Remote-Extra-'], uidHeaders: ['X-Remote-Uid'],
      },
      tokenWebhook: {configFile, version: 'v1', cacheTtlMs: 60_000, timeoutMs: 1500},
      oidc: {
        issuerUrl: issuer, clientId: CLIENT_ID, caFile, usernameClaim: 'email', groupsClaim: 'groups', groupsPrefix: 'oidc:',
        requiredClaims: {hd: 'example.com'}, signingAlgs: ['RS256'],
      },
    },
  });
}, 30_000);

afterAll(async () => {
  await s?.stop();
  webhook?.close();
  rmSync(dir, {recursive: true, force: true});
});

const selfReview = (token: string) =>
  s.client.as({clientCert: false, token}).post('/apis/authentication.k8s.io/v1/selfsubjectreviews', {apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview'});

describe('webhook token authentication', () => {
  it('kubectl auth whoami shows the user the webhook names, and the answer is cached', async () => {
    const r = await kubectl(tokenKubeconfig('alice-token'), ['auth', 'whoami', '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).status.userInfo).toEqual({username: 'alice', uid: 'a-1', groups: ['developers', 'system:authenticated'], extra: {team: ['blue']}});
    const sent = reviews.filter((review) => review.spec.token === 'alice-token');
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: {audiences: ['https://kubernetes.default.svc.cluster.local']}});
    expect((await selfReview('alice-token')).status).toBe(201);
    expect(reviews.filter((review) => review.spec.token === 'alice-token')).toHaveLength(1);
  }, 30_000);

  it('TokenReview asks the webhook too', async () => {
    const r = await s.client.post('/apis/authentication.k8s.io/v1/tokenreviews', {apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: {token: 'alice-token'}});
    expect(r.body.status).toMatchObject({authenticated: true, user: {username: 'alice'}});
  });

  it.each(['denied-token', 'garbage-token', 'wrongkind-token', 'nouser-token', 'unknown-token', 'slow-token'])('refuses %s with 401', async (token) => {
    const r = await selfReview(token);
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({kind: 'Status', reason: 'Unauthorized', code: 401});
  }, 20_000);

  it('keeps serving after the failures, and asks again for an answer that failed', async () => {
    const before = reviews.filter((review) => review.spec.token === 'garbage-token').length;
    expect((await selfReview('garbage-token')).status).toBe(401);
    expect(reviews.filter((review) => review.spec.token === 'garbage-token').length).toBe(before + 1);
    expect((await selfReview('alice-token')).status).toBe(201);
  });
});

describe('OpenID Connect ID tokens', () => {
  const claims = (overrides: Record<string, unknown> = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return {iss: issuer, aud: CLIENT_ID, sub: 'u-123', email: 'jane@example.com', email_verified: true, groups: ['admins', 'dev'], hd: 'example.com', iat: now, exp: now + 600, ...overrides};
  };
  const idToken = (payload: Record<string, unknown>, key = rsa.privateKey, header = {alg: 'RS256', kid: 'rsa-1'}) =>
    new SignJWT(payload).setProtectedHeader(header).sign(key);

  it('kubectl --token with an ID token: auth whoami shows the email and the prefixed groups', async () => {
    const token = await idToken(claims());
    const r = await kubectl(tokenKubeconfig('unused'), ['--token', token, 'auth', 'whoami', '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).status.userInfo).toEqual({username: 'jane@example.com', groups: ['oidc:admins', 'oidc:dev', 'system:authenticated']});
  }, 30_000);

  it('refuses ID tokens that are not quite right with 401', async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases: Record<string, string> = {
      wrongAudience: await idToken(claims({aud: 'someone-else'})),
      expired: await idToken(claims({iat: now - 7200, exp: now - 3600})),
      missingRequiredClaim: await idToken(claims({hd: undefined})),
      wrongRequiredClaim: await idToken(claims({hd: 'evil.example'})),
      unverifiedEmail: await idToken(claims({email_verified: false})),
      algorithmNotAllowed: await idToken(claims(), es384.privateKey, {alg: 'ES384', kid: 'es-1'}),
      unknownKey: await idToken(claims(), stranger.privateKey, {alg: 'RS256', kid: 'rsa-9'}),
      keyIdOfAnotherKey: await idToken(claims(), stranger.privateKey, {alg: 'RS256', kid: 'rsa-1'}),
      algNone: new UnsecuredJWT(claims()).encode(),
      malformed: `${(await idToken(claims())).slice(0, -10)}AAAAAAAAAA`,
    };
    for (const [name, token] of Object.entries(cases)) {
      const r = await selfReview(token);
      expect([name, r.status]).toEqual([name, 401]);
    }
    // Still serving good tokens.
    expect((await selfReview(await idToken(claims()))).status).toBe(201);
  }, 30_000);
});

describe('a front proxy (--requestheader-*)', () => {
  const identityHeaders = {'X-Remote-User': 'carol', 'X-Remote-Group': 'ops', 'X-Remote-Uid': 'c-7', 'X-Remote-Extra-Scopes%2fRead': 'pods'};
  const asCert = (cert: KeyPairPem) => new ApiClient({...readAdminOrchconfig(s.orchconfigPath), certPem: cert.certPem, keyPem: cert.keyPem});
  const whoamiWith = async (client: ApiClient, headers: Record<string, string>) => {
    const r = await client.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', {apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview'}, {headers});
    client.close();
    return r;
  };

  it('believes the identity headers of the proxy certificate, and publishes its settings', async () => {
    const proxy = await generateClientCertificate(proxyCa, {user: 'front-proxy'});
    const r = await whoamiWith(asCert(proxy), identityHeaders);
    expect(r.status).toBe(201);
    expect(r.body.status.userInfo).toEqual({username: 'carol', uid: 'c-7', groups: ['ops', 'system:authenticated'], extra: {'scopes/read': ['pods']}});
    const cm = await s.client.get('/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication');
    expect(cm.body.data).toMatchObject({
      'requestheader-username-headers': '["X-Remote-User"]', 'requestheader-group-headers': '["X-Remote-Group"]',
      'requestheader-extra-headers-prefix': '["X-Remote-Extra-"]', 'requestheader-uid-headers': '["X-Remote-Uid"]',
      'requestheader-allowed-names': '["front-proxy"]',
    });
    expect(cm.body.data['requestheader-client-ca-file']).toContain(proxyCa.certPem.trim().split('\n')[1]);
  }, 20_000);

  it('ignores the headers from anyone else: a proxy name not allowed gets 401, a cluster client stays itself', async () => {
    const rogue = await generateClientCertificate(proxyCa, {user: 'rogue-proxy'});
    expect((await whoamiWith(asCert(rogue), identityHeaders)).status).toBe(401);
    const admin = await s.client.post('/apis/authentication.k8s.io/v1/selfsubjectreviews', {apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview'}, {headers: identityHeaders});
    expect(admin.body.status.userInfo.username).toBe('orch-admin');
    const anonymous = await s.client.as({clientCert: false}).post('/apis/authentication.k8s.io/v1/selfsubjectreviews', {apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview'}, {headers: identityHeaders});
    expect(anonymous.status).toBe(403);
    expect(anonymous.body.message).toContain('system:anonymous');
  }, 20_000);
});

describe('logs', () => {
  it('say why a token was refused at -v 10, and never show the token', async () => {
    const lines: string[] = [];
    configureKlog({verbosity: 10, out: (l) => lines.push(l), err: (l) => lines.push(l)});
    try {
      const now = Math.floor(Date.now() / 1000);
      const expired = await new SignJWT({iss: issuer, aud: CLIENT_ID, email: 'jane@example.com', hd: 'example.com', iat: now - 7200, exp: now - 3600})
        .setProtectedHeader({alg: 'RS256', kid: 'rsa-1'}).sign(rsa.privateKey);
      const tokens = [expired, 'garbage-token', 'denied-token', 'abcdef.0123456789abcdef', 'x'.repeat(40)];
      for (const token of tokens) expect((await selfReview(token)).status).toBe(401);
      expect((await selfReview('alice-token')).status).toBe(201);
      const text = lines.join('');
      expect(text).toContain('Unable to authenticate the request');
      expect(text).toContain('exp');
      for (const token of [...tokens, 'alice-token']) expect(text.includes(token)).toBe(false);
      expect(text.includes(expired.split('.')[1])).toBe(false);
    } finally {
      configureKlog({verbosity: 0, out: () => undefined, err: () => undefined});
    }
  }, 20_000);
});
