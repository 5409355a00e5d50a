/**
 * `--authentication-config` on a real server: an OpenID issuer on loopback (HTTPS with its own CA,
 * discovery and JWKS, keys made by jose) named in an AuthenticationConfiguration whose claim
 * mappings are CEL; `kubectl --token ... auth whoami` shows the mapped user; the claim and user
 * validation rules refuse tokens (401); anonymous access is limited to the file's paths; a changed
 * file is picked up while the server runs, and a broken one is refused while the old one keeps
 * working. kubectl's typed clients use upstream's groups, so the server runs under upstream's names.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, request, type Server} from 'node:https';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {SignJWT, exportJWK, generateKeyPair, type KeyLike} from 'jose';
import {selectNames} from '../../src/api/names.js';
import {kubectl, startApiServer} from '../helpers/apiserver.js';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';

selectNames('kubernetes');

let s: Awaited<ReturnType<typeof startApiServer>>;
let issuerServer: Server;
let issuer: string;
let dir: string;
let configFile: string;
let issuerCaPem: string;
let keys: {privateKey: KeyLike; publicKey: KeyLike};

const configuration = (usernameExpression: string) => `apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: ${issuer}
    audiences: [orch-cli, other]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
${issuerCaPem.trim().split('\n').map((l) => `      ${l}`).join('\n')}
  claimValidationRules:
  - expression: "claims.hd == 'example.com'"
    message: the hosted domain must be example.com
  claimMappings:
    username:
      expression: "${usernameExpression}"
    groups:
      claim: groups
      prefix: "oidc:"
    uid:
      claim: sub
    extra:
    - key: example.com/tenant
      valueExpression: "has(claims.tenant) ? claims.tenant : ''"
  userValidationRules:
  - expression: "!user.username.startsWith('jwt:system')"
    message: no system users through the issuer
anonymous:
  enabled: true
  conditions:
  - path: /livez
`;

const idToken = async (claims: Record<string, unknown> = {}) => {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({sub: 'jane', hd: 'example.com', groups: ['dev'], tenant: 'blue', jti: Math.random().toString(36).slice(2), ...claims})
    .setProtectedHeader({alg: 'ES256', kid: 'k1'})
    .setIssuer(issuer).setAudience('other').setIssuedAt(now).setExpirationTime(now + 600)
    .sign(keys.privateKey);
};

function readAdmin(): {server: string; ca: string} {
  const text = readFileSync(s.orchconfigPath, 'utf8');
  return {server: /server: (\S+)/.exec(text)![1], ca: /certificate-authority-data: (\S+)/.exec(text)![1]};
}

/** A kubeconfig with the cluster only: the token comes with `--token`. */
function clusterOnlyKubeconfig(): string {
  const admin = readAdmin();
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, [
    'apiVersion: v1', 'kind: Config', 'current-context: t',
    'clusters:', '- name: c', `  cluster: {server: "${admin.server}", certificate-authority-data: ${admin.ca}}`,
    'users:', '- name: u', '  user: {}',
    'contexts:', '- name: t', '  context: {cluster: c, user: u}', '',
  ].join('\n'));
  return file;
}

const whoami = async (token: string) => kubectl(clusterOnlyKubeconfig(), ['--token', token, 'auth', 'whoami', '-o', 'json']);

/** An unauthenticated GET: its status code. */
function anonymousGet(path: string): Promise<number> {
  const admin = readAdmin();
  const url = new URL(admin.server);
  return new Promise((resolve, reject) => {
    const req = request({host: url.hostname, port: url.port, path, ca: Buffer.from(admin.ca, 'base64')}, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-authn-config-'));
  const ca = await generateCa();
  issuerCaPem = ca.certPem;
  const cert = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
  keys = await generateKeyPair('ES256');
  const jwks = {keys: [{...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig'}]};
  issuerServer = createServer({cert: cert.certPem, key: cert.keyPem}, (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') return res.end(JSON.stringify({issuer, jwks_uri: `${issuer}/keys`}));
    if (req.url === '/keys') return res.end(JSON.stringify(jwks));
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((r) => issuerServer.listen(0, '127.0.0.1', r));
  issuer = `https://127.0.0.1:${(issuerServer.address() as {port: number}).port}`;
  configFile = join(dir, 'authn.yaml');
  writeFileSync(configFile, configuration("'jwt:' + claims.sub"));
  s = await startApiServer({
    engine: 'sqlite',
    config: {authorizationModes: ['RBAC'], anonymousAuth: false, authenticationConfigFile: configFile, authenticationConfigReloadIntervalMs: 200},
  });
}, 30_000);

afterAll(async () => {
  await s?.stop();
  issuerServer?.close();
  if (dir) rmSync(dir, {recursive: true, force: true});
});

describe('--authentication-config', () => {
  it('maps an ID token\'s claims to the user kubectl auth whoami shows (CEL username, prefixed groups, uid, extra)', async () => {
    const r = await whoami(await idToken());
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout).status.userInfo).toEqual({
      username: 'jwt:jane', uid: 'jane', groups: ['oidc:dev', 'system:authenticated'], extra: {'example.com/tenant': ['blue']},
    });
  });

  it('refuses tokens its rules refuse, and tokens for another audience, with 401', async () => {
    for (const token of [
      await idToken({hd: 'evil.com'}),
      await idToken({sub: 'system-admin'}),
      await new SignJWT({sub: 'jane', hd: 'example.com'}).setProtectedHeader({alg: 'ES256', kid: 'k1'}).setIssuer(issuer).setAudience('someone-else').setExpirationTime('10m').sign(keys.privateKey),
    ]) {
      const r = await whoami(token);
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain('Unauthorized');
    }
  });

  it('lets anonymous requests in only on the file\'s paths', async () => {
    expect(await anonymousGet('/livez')).toBe(200);
    expect(await anonymousGet('/readyz')).toBe(401);
    expect(await anonymousGet('/api/v1/namespaces')).toBe(401);
  });

  it('picks up a changed file while running, and keeps the running one when the new one is broken', async () => {
    // Answers are cached 10 s per token (as upstream): each try uses a new token.
    writeFileSync(configFile, configuration("'renamed:' + claims.sub"));
    const deadline = Date.now() + 10_000;
    let name = '';
    while (Date.now() < deadline) {
      const r = await whoami(await idToken());
      name = r.code === 0 ? JSON.parse(r.stdout).status.userInfo.username : '';
      if (name === 'renamed:jane') break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    expect(name).toBe('renamed:jane');
    writeFileSync(configFile, configuration('claims.sub +'));
    await new Promise((resolve) => setTimeout(resolve, 800));
    const r = await whoami(await idToken());
    expect(JSON.parse(r.stdout).status.userInfo.username).toBe('renamed:jane');
  });

  it('does not start with --anonymous-auth given beside the file\'s anonymous section, nor with a broken file', async () => {
    await expect(startApiServer({engine: 'sqlite', config: {authenticationConfigFile: configFile.replace('authn', 'authn-ok'), anonymousAuthSet: true}})).rejects.toThrow('cannot read');
    const ok = join(dir, 'authn-ok.yaml');
    writeFileSync(ok, configuration("'jwt:' + claims.sub"));
    await expect(startApiServer({engine: 'sqlite', config: {authenticationConfigFile: ok, anonymousAuthSet: true}})).rejects.toThrow('--anonymous-auth flag cannot be set when anonymous field is configured');
    const broken = join(dir, 'authn-broken.yaml');
    writeFileSync(broken, configuration('claims.sub +'));
    await expect(startApiServer({engine: 'sqlite', config: {authenticationConfigFile: broken}})).rejects.toThrow(/jwt\[0\]\.claimMappings\.username\.expression: Invalid value.*compilation failed/);
  });
});
