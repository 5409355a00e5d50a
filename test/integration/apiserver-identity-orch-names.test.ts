/**
 * Service account tokens under orch's own name set: `kubectl create token` works (the answer comes
 * in the version kubectl sent), the token's private claim is `orch.io`, and TokenReview at
 * `authentication.orch.io` names the account.
 */
import {afterAll, beforeAll, expect, it} from '@jest/globals';
import {decodeJwt} from 'jose';
import {startApiServer, kubectl} from '../helpers/apiserver.js';

let s: Awaited<ReturnType<typeof startApiServer>>;

beforeAll(async () => {
  s = await startApiServer({engine: 'sqlite'});
}, 30_000);

afterAll(async () => {
  await s?.stop();
});

it('kubectl create token gives an orch.io token that TokenReview and requests accept', async () => {
  expect((await kubectl(s.orchconfigPath, ['create', 'serviceaccount', 'bot'])).code).toBe(0);
  const created = await kubectl(s.orchconfigPath, ['create', 'token', 'bot', '--audience', 'vault']);
  expect(created.stderr).toBe('');
  const token = created.stdout.trim();
  const claims = decodeJwt(token) as Record<string, any>;
  expect(claims['orch.io']).toMatchObject({namespace: 'default', serviceaccount: {name: 'bot'}});
  expect(claims['kubernetes.io']).toBeUndefined();
  expect(claims.iss).toBe('https://orch.default.svc.cluster.local');

  const review = await s.client.post('/apis/authentication.orch.io/v1/tokenreviews', {apiVersion: 'authentication.orch.io/v1', kind: 'TokenReview', spec: {token, audiences: ['vault']}});
  expect(review.body).toMatchObject({apiVersion: 'authentication.orch.io/v1', status: {authenticated: true, audiences: ['vault'], user: {username: 'system:serviceaccount:default:bot'}}});
  // For the server's own audience only: this one is for vault.
  expect((await s.client.as({clientCert: false, token}).get('/version')).status).toBe(401);
  const own = (await kubectl(s.orchconfigPath, ['create', 'token', 'bot'])).stdout.trim();
  expect((await s.client.as({clientCert: false, token: own}).get('/version')).status).toBe(200);
}, 30_000);
