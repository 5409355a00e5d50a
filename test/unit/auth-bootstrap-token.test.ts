/** Bootstrap token secrets into users: upstream's rules, table by table. */
import {describe, expect, it} from '@jest/globals';
import {bootstrapUser, parseBootstrapToken} from '../../src/daemons/apiserver/authentication/bootstrap-token.js';

const now = new Date('2026-01-01T00:00:00Z');
const secret = (data: Record<string, string>, extra: Record<string, unknown> = {}) => ({
  type: 'bootstrap.orch.io/token', metadata: {name: 'bootstrap-token-abcdef'}, ...extra,
  data: Object.fromEntries(Object.entries({'token-id': 'abcdef', 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', ...data}).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
});
const token = {id: 'abcdef', secret: '0123456789abcdef'};

describe('bootstrap tokens', () => {
  it.each([
    ['abcdef.0123456789abcdef', token],
    ['ABCDEF.0123456789abcdef', undefined],
    ['abcdef.0123456789abcde', undefined],
    ['abcdef0123456789abcdef', undefined],
  ])('parses %s', (text, expected) => {
    expect(parseBootstrapToken(text)).toEqual(expected);
  });

  it('makes system:bootstrap:<id> with the extra groups', () => {
    expect(bootstrapUser(secret({'auth-extra-groups': 'system:bootstrappers:a, system:bootstrappers:b', expiration: '2026-01-02T00:00:00Z'}), token, now))
      .toEqual({user: {name: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:a', 'system:bootstrappers:b']}});
  });

  it.each([
    ['another type', secret({}, {type: 'Opaque'}), /not of type/],
    ['being deleted', secret({}, {metadata: {deletionTimestamp: '2025-12-31T00:00:00Z'}}), /being deleted/],
    ['another secret', secret({'token-secret': 'ffffffffffffffff'}), /token-secret does not match/],
    ['a shorter secret', secret({'token-secret': 'fff'}), /token-secret does not match/],
    ['another id', secret({'token-id': 'zzzzzz'}), /token-id does not match/],
    ['expired', secret({expiration: '2025-12-31T23:59:59Z'}), /expired/],
    ['a bad expiration', secret({expiration: 'tomorrow'}), /RFC 3339/],
    ['not for authentication', secret({'usage-bootstrap-authentication': 'false'}), /usage-bootstrap-authentication/],
    ['a group outside system:bootstrappers:', secret({'auth-extra-groups': 'system:masters'}), /auth-extra-groups/],
  ])('refuses %s', (_name, s, reason) => {
    const result = bootstrapUser(s as any, token, now);
    expect('reason' in result && result.reason).toMatch(reason);
  });
});
