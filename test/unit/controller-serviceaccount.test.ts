/**
 * The serviceaccount and serviceaccount-token controllers against the real REST API
 * (startTestApi): every active namespace gets a `default` service account, again when it is
 * deleted; with a signing key each account gets a token secret whose JWT verifies with the public
 * key and carries upstream's legacy claims, referenced from the account, replaced when deleted,
 * removed with its account; a hand-made token secret is filled in; RSA and EC keys both work;
 * without a key the token controller stays idle.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import type { Logger } from '../../src/lib/klog.js';
import { missingServiceAccounts, serviceAccountController } from '../../src/daemons/controller-manager/controllers/serviceaccount.js';
import {
  legacyClaims,
  randomSuffix,
  secretUpdateNeeded,
  serviceAccountTokenController,
  signerFromPem,
} from '../../src/daemons/controller-manager/controllers/serviceaccount-token.js';
import { call } from '../helpers/memory-store.js';
import { eventually as eventuallyWithin, pause, useControllerHarness } from '../helpers/controller-harness.js';

const TOKEN_TYPE = 'orch.io/service-account-token';
const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBfakeCAforTests\n-----END CERTIFICATE-----\n';

const eventually = <T,>(probe: () => Promise<T | undefined | false | null>) => eventuallyWithin(probe, 8000);

let dir: string;
let rsaKeyFile: string;
let rsaPublic: KeyObject;
let caFile: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'orch-sa-'));
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  rsaPublic = rsa.publicKey;
  rsaKeyFile = join(dir, 'sa.key');
  await writeFile(rsaKeyFile, rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }));
  caFile = join(dir, 'ca.crt');
  await writeFile(caFile, CA_PEM);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let logged: string[];

const logger: Logger = {
  info: (msg) => void logged.push(msg),
  warning: (msg) => void logged.push(msg),
  error: (msg) => void logged.push(msg),
  v: () => ({ enabled: false, info() {} }),
};

const h = useControllerHarness({ logger });

beforeEach(() => {
  logged = [];
});

const get = async (path: string) => {
  const reply = await call(h.api, 'GET', path);
  return reply.status === 200 ? reply.body : undefined;
};
const createNamespace = (name: string) => call(h.api, 'POST', '/api/v1/namespaces', { body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } } });
const decode = (b64: string) => Buffer.from(b64, 'base64').toString('utf8');

describe('serviceaccount controller', () => {
  it('creates `default` in existing and new namespaces, and again when it is deleted', async () => {
    const controller = await h.start(serviceAccountController);
    const first = await eventually(() => get('/api/v1/namespaces/default/serviceaccounts/default'));
    await createNamespace('team-a');
    await eventually(() => get('/api/v1/namespaces/team-a/serviceaccounts/default'));

    await call(h.api, 'DELETE', '/api/v1/namespaces/default/serviceaccounts/default');
    const again = await eventually(async () => {
      const sa = await get('/api/v1/namespaces/default/serviceaccounts/default');
      return sa?.metadata.uid !== first.metadata.uid && sa;
    });
    expect(again.metadata.name).toBe('default');
    expect(controller.snapshot()).toMatchObject({ name: 'serviceaccount', workers: 1, queueDepth: 0 });
  });

  it('does not recreate it in a namespace being deleted', async () => {
    await h.start(serviceAccountController);
    await createNamespace('leaving');
    await eventually(() => get('/api/v1/namespaces/leaving/serviceaccounts/default'));
    await call(h.api, 'DELETE', '/api/v1/namespaces/leaving'); // stays Terminating: no namespace controller here
    await call(h.api, 'DELETE', '/api/v1/namespaces/leaving/serviceaccounts/default');
    await pause(300);
    expect(await get('/api/v1/namespaces/leaving/serviceaccounts/default')).toBeUndefined();
    expect(logged.filter((line) => line.includes('failed'))).toEqual([]);
  });

  it.each([
    [{ status: { phase: 'Active' } }, [], ['default']],
    [{ status: { phase: 'Active' } }, ['default'], []],
    [{ status: { phase: 'Terminating' } }, [], []],
    [undefined, [], []],
  ])('missingServiceAccounts(%j, existing %j) = %j', (namespace, existing, missing) => {
    expect(missingServiceAccounts(namespace, (name) => (existing as string[]).includes(name))).toEqual(missing);
  });
});

describe('serviceaccount-token controller', () => {
  const tokenOptions = () => ({ 'service-account-private-key-file': rsaKeyFile, 'root-ca-file': caFile, 'concurrent-serviceaccount-token-syncs': 2 });

  async function referencedToken(ns: string, name: string, not?: string) {
    return eventually(async () => {
      const sa = await get(`/api/v1/namespaces/${ns}/serviceaccounts/${name}`);
      const ref = sa?.secrets?.find((s: { name: string }) => s.name !== not);
      if (!ref) return undefined;
      const secret = await get(`/api/v1/namespaces/${ns}/secrets/${ref.name}`);
      return secret && { sa, secret };
    });
  }

  it('gives each service account a referenced token secret with a JWT signed by the key, the namespace and ca.crt', async () => {
    await h.start(serviceAccountController);
    const controller = await h.start(serviceAccountTokenController, tokenOptions());
    const { sa, secret } = await referencedToken('default', 'default');

    expect(secret.type).toBe(TOKEN_TYPE);
    expect(secret.metadata.name).toMatch(/^default-token-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(secret.metadata.annotations).toEqual({ 'orch.io/service-account.name': 'default', 'orch.io/service-account.uid': sa.metadata.uid });
    expect(decode(secret.data.namespace)).toBe('default');
    expect(decode(secret.data['ca.crt'])).toBe(CA_PEM);
    const token = decode(secret.data.token);
    const { payload, protectedHeader } = await jwtVerify(token, rsaPublic, { issuer: 'orch/serviceaccount' });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toEqual({
      iss: 'orch/serviceaccount',
      'orch.io/serviceaccount/namespace': 'default',
      'orch.io/serviceaccount/secret.name': secret.metadata.name,
      'orch.io/serviceaccount/service-account.name': 'default',
      'orch.io/serviceaccount/service-account.uid': sa.metadata.uid,
      sub: 'system:serviceaccount:default:default',
    });
    // One token per account, not one per sync.
    await pause(200);
    expect((await get('/api/v1/namespaces/default/secrets')).items.filter((s: { type: string }) => s.type === TOKEN_TYPE)).toHaveLength(1);
    expect(controller.snapshot()).toMatchObject({ name: 'serviceaccount-token', workers: 2 });
  });

  it('replaces a deleted token secret and deletes the tokens of a deleted account', async () => {
    await h.start(serviceAccountTokenController, tokenOptions());
    await call(h.api, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } } });
    const { secret: first } = await referencedToken('default', 'builder');

    await call(h.api, 'DELETE', `/api/v1/namespaces/default/secrets/${first.metadata.name}`);
    const { sa, secret: second } = await referencedToken('default', 'builder', first.metadata.name);
    expect(second.metadata.name).not.toBe(first.metadata.name);
    await eventually(async () => {
      const current = await get('/api/v1/namespaces/default/serviceaccounts/builder');
      return current.secrets.length === 1 && current;
    });
    expect(sa.secrets.map((s: { name: string }) => s.name)).toContain(second.metadata.name);

    await call(h.api, 'DELETE', '/api/v1/namespaces/default/serviceaccounts/builder');
    await eventually(async () => (await get(`/api/v1/namespaces/default/secrets/${second.metadata.name}`)) === undefined);
  });

  it('fills in a token secret created by hand for an account', async () => {
    await call(h.api, 'POST', '/api/v1/namespaces/default/serviceaccounts', { body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'ci' } } });
    await call(h.api, 'POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', type: TOKEN_TYPE, metadata: { name: 'ci-manual', annotations: { 'orch.io/service-account.name': 'ci' } } },
    });
    await h.start(serviceAccountTokenController, tokenOptions());
    const secret = await eventually(async () => {
      const s = await get('/api/v1/namespaces/default/secrets/ci-manual');
      return s?.data?.token && s;
    });
    const sa = await get('/api/v1/namespaces/default/serviceaccounts/ci');
    expect(secret.metadata.annotations['orch.io/service-account.uid']).toBe(sa.metadata.uid);
    expect(decode(secret.data.namespace)).toBe('default');
    expect(decode(secret.data['ca.crt'])).toBe(CA_PEM);
    const { payload } = await jwtVerify(decode(secret.data.token), rsaPublic);
    expect(payload['orch.io/serviceaccount/secret.name']).toBe('ci-manual');
  });

  it('deletes a token secret naming an account that does not exist', async () => {
    await call(h.api, 'POST', '/api/v1/namespaces/default/secrets', {
      body: { apiVersion: 'v1', kind: 'Secret', type: TOKEN_TYPE, metadata: { name: 'stray', annotations: { 'orch.io/service-account.name': 'nobody' } } },
    });
    await h.start(serviceAccountTokenController, tokenOptions());
    await eventually(async () => (await get('/api/v1/namespaces/default/secrets/stray')) === undefined);
  });

  it('without --service-account-private-key-file stays idle and says it is disabled', async () => {
    await h.start(serviceAccountController);
    const controller = await h.start(serviceAccountTokenController, {});
    await controller.done;
    await eventually(() => get('/api/v1/namespaces/default/serviceaccounts/default'));
    await pause(200);
    expect((await get('/api/v1/namespaces/default/secrets')).items).toEqual([]);
    expect(logged.some((line) => line.includes('disabled'))).toBe(true);
    expect(controller.snapshot()).toMatchObject({ workers: 0, queueDepth: 0 });
  });

  it('refuses to start with a key file that holds no private key', async () => {
    const bad = join(dir, 'not-a-key.pem');
    await writeFile(bad, CA_PEM);
    await expect(h.start(serviceAccountTokenController, { 'service-account-private-key-file': bad })).rejects.toThrow(
      'error reading key for service account token controller: data does not contain a valid RSA or ECDSA private key',
    );
  });
});

describe('token signing', () => {
  const keys = () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const p256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    const p521 = generateKeyPairSync('ec', { namedCurve: 'P-521' });
    return [
      ['RSA, PKCS#1', rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string, rsa.publicKey, 'RS256'],
      ['RSA, PKCS#8', rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string, rsa.publicKey, 'RS256'],
      // What `openssl ecparam -genkey` writes: an EC PARAMETERS block before the key.
      ['EC P-256, SEC1 after EC PARAMETERS', `-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n${p256.privateKey.export({ type: 'sec1', format: 'pem' })}`, p256.publicKey, 'ES256'],
      ['EC P-384, PKCS#8 after a certificate', CA_PEM + (p384.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string), p384.publicKey, 'ES384'],
      ['EC P-521, SEC1', p521.privateKey.export({ type: 'sec1', format: 'pem' }) as string, p521.publicKey, 'ES512'],
    ] as const;
  };

  it.each(keys())('%s: a token that verifies with the public key', async (_what, pem, publicKey, alg) => {
    const signer = signerFromPem(pem);
    expect(signer.alg).toBe(alg);
    const claims = legacyClaims({ namespace: 'ns', name: 'sa', uid: 'u-1' }, 'sa-token-abcde');
    const token = await signer.sign(claims);
    const header = decodeProtectedHeader(token);
    expect(header).toEqual({ alg, kid: signer.kid });
    // The key id is the base64url SHA-256 of the public key's DER, the same for the key in any PEM form.
    expect(signer.kid).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const { payload } = await jwtVerify(token, publicKey);
    expect(payload).toEqual(claims);
  });

  it('the key id does not depend on the PEM form of the key', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const a = signerFromPem(rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }) as string);
    const b = signerFromPem(rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
    expect(a.kid).toBe(b.kid);
  });

  it.each([
    ['complete', { namespace: 'bnM=', token: 'dA==', 'ca.crt': 'Y2E=' }, 'Y2E=', { ca: false, namespace: false, token: false }],
    ['empty, with a CA', {}, 'Y2E=', { ca: true, namespace: true, token: true }],
    ['empty, no CA configured', {}, undefined, { ca: false, namespace: true, token: true }],
    ['an outdated CA', { namespace: 'bnM=', token: 'dA==', 'ca.crt': 'b2xk' }, 'Y2E=', { ca: true, namespace: false, token: false }],
  ])('secretUpdateNeeded: %s', (_what, data, rootCA, needed) => {
    expect(secretUpdateNeeded({ data }, rootCA)).toEqual(needed);
  });

  it('secret name suffixes use upstream alphabet of 5 characters', () => {
    let i = 0;
    const sequence = [0, 0.999, 0.5, 0.1, 0.3];
    expect(randomSuffix(() => sequence[i++])).toBe('b9rdl');
  });
});
