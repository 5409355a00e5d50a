/**
 * `--authentication-config`: the file's validation with upstream's field paths, and the user the
 * claims of a verified token make (claims with prefixes, CEL over `claims`, the claim and user
 * validation rules), under orch's names.
 */
import {describe, expect, it} from '@jest/globals';
import {parseAuthenticationConfig} from '../../src/daemons/apiserver/authentication/authentication-config.js';
import {jwtUser} from '../../src/daemons/apiserver/authentication/jwt-authenticator.js';

const header = 'apiVersion: apiserver.config.orch.io/v1\nkind: AuthenticationConfiguration\n';
const parse = (body: string) => parseAuthenticationConfig(header + body, 'authn.yaml');

const jwtYaml = (mappings: string, extra = '') => `jwt:
- issuer:
    url: https://issuer.example
    audiences: [orch]
  claimMappings:
${mappings}
${extra}`;

describe('parseAuthenticationConfig', () => {
  it('reads issuers, mappings, rules and the anonymous paths', () => {
    const config = parse(`${jwtYaml(`    username: {expression: "'jwt:' + claims.sub"}
    groups: {claim: groups, prefix: 'oidc:'}
    uid: {claim: sub}
    extra:
    - key: example.com/tenant
      valueExpression: claims.tenant`, `  claimValidationRules:
  - claim: hd
    requiredValue: example.com
  userValidationRules:
  - expression: "!user.username.startsWith('system:')"
    message: no system users`)}
anonymous:
  enabled: true
  conditions: [{path: /livez}, {path: /readyz}]
`);
    expect(config.jwt).toHaveLength(1);
    expect(config.jwt[0].issuer).toMatchObject({url: 'https://issuer.example', audiences: ['orch']});
    expect(config.anonymous).toEqual({enabled: true, paths: ['/livez', '/readyz']});
  });

  it.each([
    ['an http issuer', jwtYaml('    username: {claim: sub, prefix: ""}').replace('https://issuer.example', 'http://issuer.example'), 'jwt[0].issuer.url: Invalid value: "http://issuer.example": URL scheme must be https'],
    ['no audiences', jwtYaml('    username: {claim: sub, prefix: ""}').replace('audiences: [orch]', 'audiences: []'), 'jwt[0].issuer.audiences: Required value'],
    ['two audiences without MatchAny', jwtYaml('    username: {claim: sub, prefix: ""}').replace('audiences: [orch]', 'audiences: [a, b]'), 'audienceMatchPolicy must be MatchAny for multiple audiences'],
    ['a claim without its prefix', jwtYaml('    username: {claim: sub}'), 'jwt[0].claimMappings.username.prefix: Required value'],
    ['claim and expression together', jwtYaml('    username: {claim: sub, prefix: "", expression: claims.sub}'), "jwt[0].claimMappings.username: Invalid value: claim and expression can't both be set"],
    ['an expression that does not compile', jwtYaml('    username: {expression: "claims.sub +"}'), 'jwt[0].claimMappings.username.expression: Invalid value: "claims.sub +": compilation failed'],
    ['a user rule that is not a bool', jwtYaml('    username: {claim: sub, prefix: ""}', '  userValidationRules:\n  - expression: "\'x\'"\n    message: x'), 'jwt[0].userValidationRules[0].expression: Invalid value: "\'x\'": must evaluate to bool'],
    ['an upper-case extra key', jwtYaml('    username: {claim: sub, prefix: ""}\n    extra:\n    - key: Example.com/x\n      valueExpression: claims.x'), 'key must be lowercase'],
    ['anonymous conditions while disabled', 'anonymous:\n  enabled: false\n  conditions: [{path: /livez}]\n', 'enabled should be set to true when conditions are defined'],
  ])('refuses %s, naming the field', (_what, body, message) => {
    expect(() => parse(body)).toThrow(message);
  });

  it('refuses a duplicate issuer and the wrong kind, listing every problem at once', () => {
    const one = jwtYaml('    username: {claim: sub, prefix: ""}');
    const two = one + one.replace('jwt:\n', '');
    expect(() => parseAuthenticationConfig(two.replace('kind: AuthenticationConfiguration', ''), 'f.yaml')).toThrow(/apiVersion: Unsupported value.*kind: Unsupported value.*jwt\[1\]\.issuer\.url: Duplicate value/s);
  });
});

describe('jwtUser', () => {
  const config = parse(jwtYaml(`    username: {expression: "'jwt:' + claims.sub"}
    groups: {claim: groups, prefix: 'oidc:'}
    uid: {claim: sub}
    extra:
    - key: example.com/tenant
      valueExpression: "has(claims.tenant) ? claims.tenant : ''"`, `  claimValidationRules:
  - expression: "claims.hd == 'example.com'"
    message: wrong domain
  userValidationRules:
  - expression: "!user.username.startsWith('jwt:system')"
    message: no system users`)).jwt[0];

  it('maps the claims to a user', () => {
    expect(jwtUser({sub: 'jane', hd: 'example.com', groups: ['dev', 'ops'], tenant: 'blue'}, config)).toEqual({
      user: {name: 'jwt:jane', uid: 'jane', groups: ['oidc:dev', 'oidc:ops'], extra: {'example.com/tenant': ['blue']}},
    });
    expect(jwtUser({sub: 'jane', hd: 'example.com'}, config)).toEqual({user: {name: 'jwt:jane', uid: 'jane', groups: []}});
  });

  it('refuses claims a rule refuses, and users a user rule refuses, with the rule\'s message', () => {
    expect(jwtUser({sub: 'jane', hd: 'evil.com'}, config)).toEqual({error: expect.stringContaining('wrong domain')});
    expect(jwtUser({sub: 'system-x', hd: 'example.com'}, config)).toEqual({error: expect.stringContaining('no system users')});
  });

  it('refuses a username a claim mapping cannot make', () => {
    const byClaim = parse(jwtYaml('    username: {claim: email, prefix: ""}')).jwt[0];
    expect(jwtUser({sub: 'x'}, byClaim)).toEqual({error: 'oidc: parse username claims "email": claim not present or not a string'});
    expect(jwtUser({email: 'a@b', email_verified: false}, byClaim)).toEqual({error: 'oidc: email not verified'});
    expect(jwtUser({email: 'a@b', email_verified: true}, byClaim)).toEqual({user: {name: 'a@b', groups: []}});
  });
});
