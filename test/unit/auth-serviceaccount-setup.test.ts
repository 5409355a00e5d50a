/**
 * Service account token set-up from the options, with real key files in a temporary directory:
 * the signing key, the verification keys (rotation: an old key still verifies), orch's generated
 * default key, and errors naming the option and file.
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {generateKeyPairSync} from 'node:crypto';
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {SignJWT} from 'jose';
import {createServiceAccountTokens, type ServiceAccountOptions} from '../../src/daemons/apiserver/authentication/serviceaccount/setup.js';
import {keyIdOf} from '../../src/daemons/shared/serving/jwt-keys.js';
import {legacyClaims, signerFromPem} from '../../src/daemons/controller-manager/controllers/serviceaccount-token.js';

let dir: string;
const account = {metadata: {name: 'sa', namespace: 'ns', uid: 'u-sa'}};
const base = (o: Partial<ServiceAccountOptions> = {}): ServiceAccountOptions => ({
  issuers: ['https://issuer'], lookup: true, maxTokenExpirationSeconds: 0, extendTokenExpiration: true, certDir: dir,
  getObject: async (resource, _ns, name) => (resource === 'serviceaccounts' && name === 'sa' ? (account as any) : undefined),
  ...o,
});
const pem = (key: ReturnType<typeof generateKeyPairSync>['privateKey']) => key.export({type: 'pkcs8', format: 'pem'}) as string;
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'orch-sa-setup-'));
});
afterAll(() => rmSync(dir, {recursive: true, force: true}));

describe('service account token set-up', () => {
  it('generates sa.key once and verifies what it signs', async () => {
    const first = await createServiceAccountTokens(base());
    const key = readFileSync(join(dir, 'sa.key'), 'utf8');
    const second = await createServiceAccountTokens(base());
    expect(readFileSync(join(dir, 'sa.key'), 'utf8')).toBe(key);
    const {token} = await first.issuer.issue({namespace: 'ns', serviceAccount: {name: 'sa', uid: 'u-sa'}, audiences: ['https://issuer'], expirationSeconds: 3600});
    const result = await second.authenticator.authenticateToken(token);
    expect(result && 'user' in result && result.user.name).toBe('system:serviceaccount:ns:sa');
  });

  it('signs with the new key while the old key of --service-account-key-file still verifies (rotation)', async () => {
    const oldKey = generateKeyPairSync('rsa', {modulusLength: 2048}).privateKey;
    const newKey = generateKeyPairSync('ec', {namedCurve: 'secp384r1'}).privateKey;
    const newFile = file('new.key', pem(newKey));
    const publicOld = file('old.pub', oldKey.export({type: 'pkcs1', format: 'pem'}) as string);
    const setup = await createServiceAccountTokens(base({signingKeyFile: newFile, keyFiles: [newFile, publicOld]}));
    expect(setup.warnings).toEqual([]);
    const now = Math.floor(Date.now() / 1000);
    const claims = {iss: 'https://issuer', sub: 'system:serviceaccount:ns:sa', aud: ['https://issuer'], iat: now, exp: now + 600, 'orch.io': {namespace: 'ns', serviceaccount: {name: 'sa', uid: 'u-sa'}}};
    const byOld = await new SignJWT(claims).setProtectedHeader({alg: 'RS256', kid: keyIdOf(oldKey)}).sign(oldKey);
    const fromOld = await setup.authenticator.authenticateToken(byOld);
    expect(fromOld && 'user' in fromOld).toBe(true);
    const {token} = await setup.issuer.issue({namespace: 'ns', serviceAccount: {name: 'sa', uid: 'u-sa'}, audiences: ['https://issuer'], expirationSeconds: 3600});
    expect(JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()).alg).toBe('ES384');
    // Once the old key is dropped from the key files, its tokens stop working.
    const rotated = await createServiceAccountTokens(base({signingKeyFile: newFile, keyFiles: [newFile]}));
    expect(await rotated.authenticator.authenticateToken(byOld)).toEqual({error: 'service account token: invalid signature'});
  });

  it('--service-account-lookup decides whether a legacy token needs its secret', async () => {
    const keyFile = file('legacy.key', pem(generateKeyPairSync('ec', {namedCurve: 'prime256v1'}).privateKey));
    const token = await signerFromPem(readFileSync(keyFile, 'utf8')).sign(legacyClaims({namespace: 'ns', name: 'sa', uid: 'u-sa'}, 'sa-token-gone'));
    const lax = await createServiceAccountTokens(base({signingKeyFile: keyFile, keyFiles: [keyFile], lookup: false}));
    const accepted = await lax.authenticator.authenticateToken(token);
    expect(accepted && 'user' in accepted && accepted.user.name).toBe('system:serviceaccount:ns:sa');
    const strict = await createServiceAccountTokens(base({signingKeyFile: keyFile, keyFiles: [keyFile], lookup: true}));
    expect(await strict.authenticator.authenticateToken(token)).toEqual({error: 'secret "ns/sa-token-gone" holding the token is not found'});
  });

  it('warns when the signing key cannot verify its own tokens', async () => {
    const signing = file('signing.key', pem(generateKeyPairSync('ec', {namedCurve: 'prime256v1'}).privateKey));
    const other = file('other.key', pem(generateKeyPairSync('ec', {namedCurve: 'prime256v1'}).privateKey));
    const setup = await createServiceAccountTokens(base({signingKeyFile: signing, keyFiles: [other]}));
    expect(setup.warnings[0]).toMatch(/signing key is not among the verification keys/);
  });

  it.each([
    ['a missing signing key file', () => ({signingKeyFile: join(dir, 'nope.key')}), /^--service-account-signing-key-file .*nope\.key: ENOENT/],
    ['a signing key file without a key', () => ({signingKeyFile: file('cert-only.pem', 'hello')}), /^--service-account-signing-key-file .*: data does not contain a valid RSA or ECDSA private key/],
    ['an Ed25519 signing key', () => ({signingKeyFile: file('ed.key', pem(generateKeyPairSync('ed25519').privateKey))}), /unsupported service account signing key \(ed25519\): RSA or ECDSA/],
    ['a key file without keys', () => ({keyFiles: [file('empty.pub', 'nothing')]}), /^--service-account-key-file .*empty\.pub: data does not contain any valid RSA or ECDSA public keys/],
    ['an issuer that is neither a URL nor colon-free', () => ({issuers: ['foo:bar']}), /--service-account-issuer: "foo:bar" must be a URL/],
  ])('refuses %s naming the option', async (_name, options, message) => {
    await expect(createServiceAccountTokens(base(options()))).rejects.toThrow(message);
  });
});
