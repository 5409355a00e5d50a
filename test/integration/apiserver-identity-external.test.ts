/**
 * Identities vouched for by other systems, with real servers on loopback: a token-review webhook
 * (`--authentication-token-webhook-config-file`, HTTPS with its own CA) and `kubectl auth whoami`
 * showing what it says; a webhook that answers garbage or times out never lets anyone in. kubectl's
 * typed clients use upstream's groups, so the API server runs under upstream's name set.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {createServer, type Server} from 'node:https';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {selectNames} from '../../src/api/names.js';
import {startApiServer, kubectl} from '../helpers/apiserver.js';
import {generateCa, generateServingCertificate} from '../../src/daemons/apiserver/pki/certificates.js';

selectNames('kubernetes');

let s: Awaited<ReturnType<typeof startApiServer>>;
let webhook: Server;
let dir: string;
const reviews: any[] = [];

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
  webhook = createServer({cert: cert.certPem, key: cert.keyPem}, (req, res) => {
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
      tokenWebhook: {configFile, version: 'v1', cacheTtlMs: 60_000, timeoutMs: 1500},
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
