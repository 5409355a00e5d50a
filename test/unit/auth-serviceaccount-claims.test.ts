/** Service account token claims, audiences and lifetimes: the pure rules, table by table. */
import {afterAll, describe, expect, it} from '@jest/globals';
import {selectNames} from '../../src/api/names.js';
import {
  boundClaims, matchAudiences, readBoundClaims, readLegacyClaims, serviceAccountUserInfo, tokenAudiences,
} from '../../src/daemons/apiserver/authentication/serviceaccount/claims.js';
import {EXTENDED_EXPIRATION_SECONDS, tokenLifetime, WARN_ONLY_EXPIRATION_SECONDS} from '../../src/daemons/apiserver/authentication/serviceaccount/issuer.js';
import {legacyClaims} from '../../src/daemons/controller-manager/controllers/serviceaccount-token.js';

afterAll(() => {
  selectNames('orch');
});

const base = {
  issuer: 'https://issuer', audiences: ['api'], namespace: 'ns', serviceAccount: {name: 'sa', uid: 'u-sa'},
  issuedAt: 1000, expiresAt: 4600, jti: 'j1',
};

describe.each(['orch', 'kubernetes'] as const)('bound claims under the %s name set', (set) => {
  const domain = set === 'orch' ? 'orch.io' : 'kubernetes.io';
  it(`keeps the private claim under ${domain} and reads it back`, () => {
    selectNames(set);
    const claims = boundClaims({...base, pod: {name: 'p', uid: 'u-p'}});
    expect(Object.keys(claims)).toContain(domain);
    expect(claims.sub).toBe('system:serviceaccount:ns:sa');
    const read = readBoundClaims(claims);
    expect(read).toEqual({info: {namespace: 'ns', name: 'sa', uid: 'u-sa', pod: {name: 'p', uid: 'u-p'}, jti: 'j1'}});
    const user = serviceAccountUserInfo((read as {info: any}).info);
    expect(user).toEqual({
      name: 'system:serviceaccount:ns:sa', uid: 'u-sa', groups: ['system:serviceaccounts', 'system:serviceaccounts:ns'],
      extra: {[`authentication.${domain}/pod-name`]: ['p'], [`authentication.${domain}/pod-uid`]: ['u-p'], [`authentication.${domain}/credential-id`]: ['JTI=j1']},
    });
  });

  it('reads the legacy claims the token controller writes', () => {
    selectNames(set);
    expect(readLegacyClaims(legacyClaims({namespace: 'ns', name: 'sa', uid: 'u'}, 'sa-token'))).toEqual({info: {namespace: 'ns', name: 'sa', uid: 'u', legacySecretName: 'sa-token'}});
  });
});

describe('claims that do not name an account', () => {
  selectNames('kubernetes');
  const good = () => boundClaims(base) as Record<string, any>;
  const cases: [string, (c: Record<string, any>) => void, RegExp][] = [
    ['no private claim', (c) => delete c['kubernetes.io'], /missing the kubernetes.io claim/],
    ['no namespace', (c) => delete c['kubernetes.io'].namespace, /namespace/],
    ['no account uid', (c) => delete c['kubernetes.io'].serviceaccount.uid, /service account name or uid/],
    ['subject of another account', (c) => (c.sub = 'system:serviceaccount:ns:other'), /subject does not match/],
    ['bound to a pod and a secret', (c) => Object.assign(c['kubernetes.io'], {pod: {name: 'p', uid: '1'}, secret: {name: 's', uid: '2'}}), /both a pod and a secret/],
    ['pod without uid', (c) => (c['kubernetes.io'].pod = {name: 'p'}), /pod reference needs a name and a uid/],
  ];
  it.each(cases)('%s', (_name, mutate, message) => {
    selectNames('kubernetes');
    const claims = good();
    mutate(claims);
    const result = readBoundClaims(claims);
    expect('error' in result && result.error).toMatch(message);
  });

  it('legacy claims without the secret name', () => {
    selectNames('kubernetes');
    const claims: Record<string, string> = legacyClaims({namespace: 'ns', name: 'sa', uid: 'u'}, 's');
    delete claims['kubernetes.io/serviceaccount/secret.name'];
    expect(readLegacyClaims(claims)).toEqual({error: 'token does not contain the secret name claim'});
  });
});

describe('audiences', () => {
  it.each([
    ['token audience asked for', ['a', 'b'], ['b'], ['api'], {audiences: ['b']}],
    ['no audience asked: the server\'s', ['api', 'x'], undefined, ['api'], {audiences: ['api']}],
    ['token without audiences stands for the server\'s', [], ['api'], ['api'], {audiences: ['api']}],
    ['none in common', ['a'], ['b'], ['api'], {error: 'token audiences ["a"] is invalid for the target audiences ["b"]'}],
    ['a server without audiences accepts any', ['a'], undefined, [], {audiences: []}],
  ] as const)('%s', (_name, token, requested, implicit, expected) => {
    expect(matchAudiences([...token], requested ? [...requested] : undefined, [...implicit])).toEqual(expected);
  });

  it('reads a single string aud as one audience', () => {
    expect(tokenAudiences({aud: 'x'})).toEqual(['x']);
    expect(tokenAudiences({})).toEqual([]);
  });
});

describe('token lifetime', () => {
  it.each([
    ['as asked', 3600, true, {max: 0, extend: true}, {expirationSeconds: 3600, tokenSeconds: 3600}],
    ['capped by the maximum', 86400, false, {max: 7200, extend: true}, {expirationSeconds: 7200, tokenSeconds: 7200}],
    ['the kubelet\'s request extended to a year', WARN_ONLY_EXPIRATION_SECONDS, true, {max: 0, extend: true},
      {expirationSeconds: WARN_ONLY_EXPIRATION_SECONDS, tokenSeconds: EXTENDED_EXPIRATION_SECONDS, warnAfterSeconds: WARN_ONLY_EXPIRATION_SECONDS}],
    ['not extended without a pod', WARN_ONLY_EXPIRATION_SECONDS, false, {max: 0, extend: true}, {expirationSeconds: WARN_ONLY_EXPIRATION_SECONDS, tokenSeconds: WARN_ONLY_EXPIRATION_SECONDS}],
    ['not extended when switched off', WARN_ONLY_EXPIRATION_SECONDS, true, {max: 0, extend: false}, {expirationSeconds: WARN_ONLY_EXPIRATION_SECONDS, tokenSeconds: WARN_ONLY_EXPIRATION_SECONDS}],
    ['not extended once capped below it', WARN_ONLY_EXPIRATION_SECONDS, true, {max: 3600, extend: true}, {expirationSeconds: 3600, tokenSeconds: 3600}],
  ] as const)('%s', (_name, requested, extendable, c, expected) => {
    expect(tokenLifetime(requested, extendable, {maxExpirationSeconds: c.max, extendExpiration: c.extend})).toEqual(expected);
  });
});
