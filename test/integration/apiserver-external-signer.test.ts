/**
 * `--service-account-signing-endpoint`: a small external signer (upstream's ExternalJWTSigner gRPC
 * API) on a unix socket signs the server's service account tokens with its own keys; the server
 * verifies them with the keys the signer lists, follows a key rotation at once (a token naming an
 * unknown key id makes it fetch the keys again), publishes the signer's keys in its issuer
 * discovery, and refuses to start (naming the option) when the signer is absent or misconfigured.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {generateKeyPairSync, sign, type KeyObject} from 'node:crypto';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {names, selectNames} from '../../src/api/names.js';
import {EXTERNAL_JWT_SIGNER_SERVICE} from '../../src/daemons/apiserver/authentication/serviceaccount/external-signer.js';
import {startApiServer} from '../helpers/apiserver.js';

selectNames('kubernetes');

interface SignerKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  exclude?: boolean;
}

const newKey = (kid: string, exclude = false): SignerKey => ({kid, exclude, ...generateKeyPairSync('ec', {namedCurve: 'prime256v1'})});

/** The signer's state: the key it signs with, the keys it lists, what it answers. */
const signer = {
  current: newKey('ext-1'),
  listed: [] as SignerKey[],
  maxSeconds: 86400 * 365,
  header: undefined as undefined | ((kid: string) => object),
  fetches: 0,
};
signer.listed = [signer.current, newKey('legacy', true)];

function startSigner(socket: string): Promise<grpc.Server> {
  const server = new grpc.Server();
  server.addService(EXTERNAL_JWT_SIGNER_SERVICE, {
    Sign: (call: grpc.ServerUnaryCall<{claims: string}, object>, callback: grpc.sendUnaryData<object>) => {
      const header = Buffer.from(JSON.stringify(signer.header?.(signer.current.kid) ?? {alg: 'ES256', kid: signer.current.kid, typ: 'JWT'})).toString('base64url');
      const signature = sign('sha256', Buffer.from(`${header}.${call.request.claims}`), {key: signer.current.privateKey, dsaEncoding: 'ieee-p1363'}).toString('base64url');
      callback(null, {header, signature});
    },
    FetchKeys: (_call: unknown, callback: grpc.sendUnaryData<object>) => {
      signer.fetches++;
      callback(null, {
        keys: signer.listed.map((k) => ({key_id: k.kid, key: k.publicKey.export({type: 'spki', format: 'der'}), exclude_from_oidc_discovery: Boolean(k.exclude)})),
        data_timestamp: {seconds: Math.floor(Date.now() / 1000), nanos: 0},
        refresh_hint_seconds: 3600,
      });
    },
    Metadata: (_call: unknown, callback: grpc.sendUnaryData<object>) => callback(null, {max_token_expiration_seconds: signer.maxSeconds}),
  } as unknown as grpc.UntypedServiceImplementation);
  return new Promise((resolve, reject) => server.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (error) => (error ? reject(error) : resolve(server))));
}

let dir: string;
let socket: string;
let grpcServer: grpc.Server;
let s: Awaited<ReturnType<typeof startApiServer>>;
const ISSUER = 'https://orch.example';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'orch-external-signer-'));
  socket = join(dir, 'signer.sock');
  grpcServer = await startSigner(socket);
  s = await startApiServer({engine: 'sqlite', config: {serviceAccounts: {signingEndpoint: socket, issuers: [ISSUER], lookup: true, extendTokenExpiration: true, maxTokenExpirationSeconds: 0}}});
  await s.client.post('/api/v1/namespaces/default/serviceaccounts', {apiVersion: 'v1', kind: 'ServiceAccount', metadata: {name: 'robot'}});
}, 30_000);

afterAll(async () => {
  await s?.stop();
  await new Promise<void>((resolve) => (grpcServer ? grpcServer.tryShutdown(() => resolve()) : resolve()));
  if (dir) rmSync(dir, {recursive: true, force: true});
});

const requestToken = () =>
  s.client.post('/api/v1/namespaces/default/serviceaccounts/robot/token', {apiVersion: `${names().groups.authentication}/v1`, kind: 'TokenRequest', spec: {expirationSeconds: 3600}});

const whoami = (token: string) =>
  s.client.as({clientCert: false, token}).post(`/apis/${names().groups.authentication}/v1/selfsubjectreviews`, {apiVersion: `${names().groups.authentication}/v1`, kind: 'SelfSubjectReview'});

const headerOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString());

describe('--service-account-signing-endpoint', () => {
  it('issues tokens the signer signed, which authenticate as the service account', async () => {
    const r = await requestToken();
    expect(r.status).toBe(201);
    const token = r.body.status.token as string;
    expect(headerOf(token)).toEqual({alg: 'ES256', kid: 'ext-1', typ: 'JWT'});
    const me = await whoami(token);
    expect(me.status).toBe(201);
    expect(me.body.status.userInfo.username).toBe('system:serviceaccount:default:robot');
  });

  it('follows a rotation at once: a token with a new key id makes the server fetch the keys again', async () => {
    const before = signer.fetches;
    signer.current = newKey('ext-2');
    signer.listed = [signer.current, ...signer.listed];
    await new Promise((resolve) => setTimeout(resolve, 1100)); // upstream refetches at most once a second
    const token = (await requestToken()).body.status.token as string;
    expect(headerOf(token).kid).toBe('ext-2');
    const me = await whoami(token);
    expect(me.status).toBe(201);
    expect(signer.fetches).toBeGreaterThan(before);
  });

  it('publishes the signer\'s keys, without the ones excluded from discovery', async () => {
    const jwks = await s.client.get('/openid/v1/jwks');
    expect(jwks.status).toBe(200);
    expect((jwks.body.keys as {kid: string}[]).map((k) => k.kid).sort()).toEqual(['ext-1', 'ext-2']);
  });

  it('refuses a token request when the signer answers a header with more than alg, kid and typ', async () => {
    signer.header = (kid) => ({alg: 'ES256', kid, typ: 'JWT', x5u: 'https://evil.example'});
    try {
      const r = await requestToken();
      expect(r.status).toBe(500);
      expect(r.body.message).toContain('while validating header');
    } finally {
      signer.header = undefined;
    }
  });

  it('does not start without the signer, with key files beside it, or above the signer\'s longest lifetime', async () => {
    await expect(startApiServer({engine: 'sqlite', config: {serviceAccounts: {signingEndpoint: join(dir, 'absent.sock'), lookup: true, extendTokenExpiration: true, maxTokenExpirationSeconds: 0}}}))
      .rejects.toThrow(`--service-account-signing-endpoint ${join(dir, 'absent.sock')}`);
    await expect(startApiServer({engine: 'sqlite', config: {serviceAccounts: {signingEndpoint: socket, keyFiles: ['/nonexistent.pem'], lookup: true, extendTokenExpiration: true, maxTokenExpirationSeconds: 0}}}))
      .rejects.toThrow('cannot be used with --service-account-signing-key-file or --service-account-key-file');
    await expect(startApiServer({engine: 'sqlite', config: {serviceAccounts: {signingEndpoint: socket, lookup: true, extendTokenExpiration: true, maxTokenExpirationSeconds: 2 * 365 * 86400}}}))
      .rejects.toThrow('is longer than the external signer\'s maximum');
  });
});
