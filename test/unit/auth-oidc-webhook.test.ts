/** The pure rules of OIDC ID tokens (claims into users) and of token-review webhook answers. */
import {describe, expect, it} from '@jest/globals';
import {oidcUser, usernamePrefix, type OidcOptions} from '../../src/daemons/apiserver/authentication/oidc.js';
import {readTokenReviewAnswer} from '../../src/daemons/shared/authentication/webhook-token.js';

const options = (o: Partial<OidcOptions> = {}): OidcOptions => ({
  issuerUrl: 'https://issuer', clientId: 'c', usernameClaim: 'sub', requiredClaims: {}, signingAlgs: ['RS256'], ...o,
});

describe('OIDC username prefix (upstream defaults)', () => {
  it.each([
    ['sub claim, no prefix given: the issuer and #', {usernameClaim: 'sub'}, 'https://issuer#'],
    ['email claim, no prefix given: none', {usernameClaim: 'email'}, ''],
    ['- means none', {usernameClaim: 'sub', usernamePrefix: '-'}, ''],
    ['a given prefix', {usernameClaim: 'email', usernamePrefix: 'oidc:'}, 'oidc:'],
  ] as const)('%s', (_name, o, expected) => {
    expect(usernamePrefix(options(o))).toBe(expected);
  });
});

describe('OIDC claims into a user', () => {
  it.each([
    ['sub with the default prefix', {}, {sub: 'u1'}, {user: {name: 'https://issuer#u1', groups: []}}],
    ['groups as a string', {groupsClaim: 'g', groupsPrefix: 'p:'}, {sub: 'u1', g: 'one'}, {user: {name: 'https://issuer#u1', groups: ['p:one']}}],
    ['groups as a list', {groupsClaim: 'g'}, {sub: 'u1', g: ['a', 'b']}, {user: {name: 'https://issuer#u1', groups: ['a', 'b']}}],
    ['groups of another type', {groupsClaim: 'g'}, {sub: 'u1', g: [1]}, {error: 'oidc: parse groups claim "g": not a string or a list of strings'}],
    ['no username claim', {usernameClaim: 'email'}, {sub: 'u1'}, {error: 'oidc: parse username claims "email": claim not present or not a string'}],
    ['unverified email', {usernameClaim: 'email'}, {email: 'a@b', email_verified: false}, {error: 'oidc: email not verified'}],
    ['required claim missing', {requiredClaims: {hd: 'x'}}, {sub: 'u1'}, {error: 'oidc: required claim hd not present in ID token'}],
    ['required claim different', {requiredClaims: {hd: 'x'}}, {sub: 'u1', hd: 'y'}, {error: 'oidc: required claim hd value does not match. Got = "y", want = x'}],
  ] as const)('%s', (_name, o, claims, expected) => {
    expect(oidcUser(claims as Record<string, unknown>, options(o as Partial<OidcOptions>))).toEqual(expected);
  });
});

describe('token-review webhook answers', () => {
  const v1 = 'authentication.orch.io/v1';
  it('reads a user with uid, groups and extra', () => {
    expect(readTokenReviewAnswer({apiVersion: v1, kind: 'TokenReview', status: {authenticated: true, user: {username: 'a', uid: '1', groups: ['g'], extra: {k: ['v']}}, audiences: ['x']}}, 'v1'))
      .toEqual({authenticated: true, user: {name: 'a', uid: '1', groups: ['g'], extra: {k: ['v']}}, audiences: ['x']});
  });
  it.each([
    ['not an object', 'garbage', /not answer with a JSON object/],
    ['another version', {apiVersion: 'authentication.orch.io/v1beta1', status: {}}, /apiVersion/],
    ['another kind', {kind: 'Status', status: {}}, /kind "Status"/],
    ['no status', {kind: 'TokenReview'}, /no status/],
    ['authenticated of another type', {status: {authenticated: 'yes'}}, /not a boolean/],
    ['authenticated without a user name', {status: {authenticated: true, user: {}}}, /without a user name/],
  ])('refuses %s', (_name, answer, message) => {
    expect(() => readTokenReviewAnswer(answer, 'v1')).toThrow(message);
  });
  it('passes the webhook\'s refusal on', () => {
    expect(readTokenReviewAnswer({status: {authenticated: false, error: 'revoked'}}, 'v1')).toEqual({authenticated: false, audiences: [], error: 'revoked'});
  });
});
