/** The token success cache in front of the authenticator union: what it keeps, and for how long. */
import {describe, expect, it} from '@jest/globals';
import {CachedTokenAuthenticator, TokenUnion, type TokenAuthenticator, type TokenResult} from '../../src/daemons/shared/authentication/token-authenticator.js';

function counting(answer: (token: string, audiences?: string[]) => TokenResult | undefined): TokenAuthenticator & {calls: number} {
  const a = {
    calls: 0,
    async authenticateToken(token: string, audiences?: string[]) {
      a.calls++;
      return answer(token, audiences);
    },
  };
  return a;
}

const jwtWithExp = (exp: number) => `h.${Buffer.from(JSON.stringify({exp})).toString('base64url')}.s`;
const ok = (name: string): TokenResult => ({user: {name, groups: []}, audiences: ['api']});

describe('CachedTokenAuthenticator', () => {
  it('keeps a success for the TTL, per token and audiences, then asks again', async () => {
    let now = 1_000_000;
    const inner = counting(() => ok('alice'));
    const cache = new CachedTokenAuthenticator(inner, 10_000, () => now);
    await cache.authenticateToken('t', ['api']);
    await cache.authenticateToken('t', ['api']);
    expect(inner.calls).toBe(1);
    await cache.authenticateToken('t', ['other']);
    expect(inner.calls).toBe(2);
    now += 10_001;
    await cache.authenticateToken('t', ['api']);
    expect(inner.calls).toBe(3);
  });

  it('never keeps a failure or an unknown token', async () => {
    const inner = counting((token) => (token === 'bad' ? {error: 'nope'} : undefined));
    const cache = new CachedTokenAuthenticator(inner, 10_000, () => 0);
    for (const token of ['bad', 'bad', 'unknown', 'unknown']) await cache.authenticateToken(token);
    expect(inner.calls).toBe(4);
  });

  it('never keeps a JWT past its own exp', async () => {
    let now = 1_000_000_000;
    const inner = counting(() => ok('bob'));
    const cache = new CachedTokenAuthenticator(inner, 10_000, () => now);
    const token = jwtWithExp(now / 1000 + 2);
    await cache.authenticateToken(token);
    now += 1_000;
    await cache.authenticateToken(token);
    expect(inner.calls).toBe(1);
    now += 1_500;
    await cache.authenticateToken(token);
    expect(inner.calls).toBe(2);
  });

  it('with a TTL of 0 asks every time', async () => {
    const inner = counting(() => ok('c'));
    const cache = new CachedTokenAuthenticator(inner, 0);
    await cache.authenticateToken('t');
    await cache.authenticateToken('t');
    expect(inner.calls).toBe(2);
  });
});

describe('TokenUnion', () => {
  it('asks in order, the first user wins, errors of all are joined, a throw is an error', async () => {
    const thrower: TokenAuthenticator = {authenticateToken: async () => { throw new Error('boom'); }};
    const refuser = counting(() => ({error: 'refused'}));
    const knower = counting((t) => (t === 'known' ? ok('k') : undefined));
    const union = new TokenUnion([thrower, refuser, knower]);
    expect(await union.authenticateToken('known')).toEqual(ok('k'));
    expect(await union.authenticateToken('other')).toEqual({error: 'boom; refused'});
    expect(await new TokenUnion([knower]).authenticateToken('other')).toBeUndefined();
  });
});
