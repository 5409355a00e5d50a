import {beforeAll, describe, expect, it} from '@jest/globals';
import {X509Certificate} from 'node:crypto';
import type {DetailedPeerCertificate} from 'node:tls';
import {RequestAuthenticator, type AuthenticationOutcome} from '../../src/daemons/shared/authentication/authenticator.js';
import {bearerToken, parseTokenFile, type TokenTable} from '../../src/daemons/shared/authentication/token-file.js';
import {ClientCertificateAuthenticator} from '../../src/daemons/shared/authentication/x509.js';
import {generateCa, generateClientCertificate, generateServingCertificate, type KeyPairPem} from '../../src/daemons/shared/pki/certificates.js';

describe('token file', () => {
  it.each([
    ['plain columns', 'abc,alice,1\n', {abc: {name: 'alice', uid: '1', groups: []}}],
    ['quoted groups with commas', 'abc,alice,1,"dev,ops"\n', {abc: {name: 'alice', uid: '1', groups: ['dev', 'ops']}}],
    ['quoted fields with escaped quotes', '"t""1","Bob ""B""",2\n', {'t"1': {name: 'Bob "B"', uid: '2', groups: []}}],
    ['leading spaces trimmed, empty lines skipped', 'abc, alice, 1\n\n\ndef,bob,2,g\n', {abc: {name: 'alice', uid: '1', groups: []}, def: {name: 'bob', uid: '2', groups: ['g']}}],
    ['extra columns ignored', 'abc,alice,1,g,extra\n', {abc: {name: 'alice', uid: '1', groups: ['g']}}],
    ['CRLF line ends', 'abc,alice,1\r\ndef,bob,2\r\n', {abc: {name: 'alice', uid: '1', groups: []}, def: {name: 'bob', uid: '2', groups: []}}],
  ])('parses %s', (_case, text, expected) => {
    const {tokens} = parseTokenFile(text, '/etc/tokens.csv');
    expect(Object.fromEntries(tokens)).toEqual(expected);
  });

  it.each([
    ['too few columns, naming the line', 'abc,alice,1\n\nxyz,bob\n', "token file '/etc/tokens.csv' must have at least 3 columns (token, user name, user uid), found 2 on line 3"],
    ['a bare quote', 'abc,al"ice,1\n', "token file '/etc/tokens.csv' line 1: Invalid Opening Quote"],
    ['an unterminated quote', 'abc,alice,1\nx,"bob,2\n', "token file '/etc/tokens.csv' line 2"],
  ])('rejects %s', (_case, text, message) => {
    expect(() => parseTokenFile(text, '/etc/tokens.csv')).toThrow(message);
  });

  it('warns about empty and duplicate tokens, the later duplicate winning', () => {
    const {tokens, warnings} = parseTokenFile(',nobody,0\nabc,alice,1\nabc,mallory,2\n', 'f.csv');
    expect(tokens.get('abc')?.name).toBe('mallory');
    expect(tokens.size).toBe(1);
    expect(warnings).toEqual([
      "empty token has been found in token file 'f.csv', record number '1'",
      "duplicate token has been found in token file 'f.csv', record number '3'",
    ]);
  });
});

describe('bearerToken', () => {
  it.each([
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['  BEARER abc  ', 'abc'],
    ['Bearer  abc', undefined],
    ['Bearer', undefined],
    ['Basic dXNlcjpwYXNz', undefined],
    ['', undefined],
  ])('%j -> %j', (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe('authenticator chain', () => {
  const tokens: TokenTable = parseTokenFile('good,alice,1,dev\nmaster,root,0,system:masters\nauth,carol,3,system:authenticated\n', 't.csv');
  const request = (authorization?: string) => ({headers: authorization ? {authorization} : {}});

  it.each<[string, {anonymous: boolean}, string | undefined, AuthenticationOutcome]>([
    ['a known token', {anonymous: false}, 'Bearer good', {user: {name: 'alice', uid: '1', groups: ['dev', 'system:authenticated']}, usedBearerToken: true}],
    ['a token whose groups already say authenticated', {anonymous: false}, 'Bearer auth', {user: {name: 'carol', uid: '3', groups: ['system:authenticated']}, usedBearerToken: true}],
    ['an unknown token, even with anonymous access', {anonymous: true}, 'Bearer nope', {error: 'invalid bearer token'}],
    ['no credentials with anonymous access', {anonymous: true}, undefined, {user: {name: 'system:anonymous', groups: ['system:unauthenticated']}}],
    ['no credentials without anonymous access', {anonymous: false}, undefined, {}],
    ['basic auth (not supported) with anonymous access', {anonymous: true}, 'Basic dXNlcjpwYXNz', {user: {name: 'system:anonymous', groups: ['system:unauthenticated']}}],
  ])('%s', async (_case, config, authorization, expected) => {
    const authenticator = new RequestAuthenticator({...config, tokens});
    expect(authenticator.authenticateRequest(request(authorization))).toEqual(expected);
    expect(await authenticator.authenticate(request(authorization))).toEqual(expected.user);
  });

  it('ignores bearer tokens when no token file is configured', () => {
    const authenticator = new RequestAuthenticator({anonymous: true});
    expect(authenticator.authenticateRequest(request('Bearer good')).user?.name).toBe('system:anonymous');
  });
});

describe('client certificate authenticator', () => {
  let ca: KeyPairPem;
  let roots: X509Certificate[];
  beforeAll(async () => {
    ca = await generateCa();
    roots = [new X509Certificate(ca.certPem)];
  });

  /** What Node's getPeerCertificate(true) reports for a client that sent just this certificate. */
  function peerOf(certPem: string, subject: Record<string, string | string[]>): DetailedPeerCertificate {
    const raw = new X509Certificate(certPem).raw;
    return {raw, subject} as unknown as DetailedPeerCertificate;
  }

  it('takes the user from CN and groups from O', async () => {
    const client = await generateClientCertificate(ca, {user: 'jane', groups: ['dev', 'ops']});
    const {result} = new ClientCertificateAuthenticator(roots).authenticatePeer(peerOf(client.certPem, {CN: 'jane', O: ['dev', 'ops']}));
    expect(result).toEqual({user: {name: 'jane', groups: ['dev', 'ops']}});
  });

  it.each([
    ['expired', {user: 'jane'}, 400, 'x509: certificate has expired or is not yet valid'],
    ['not yet valid', {user: 'jane'}, -1, 'x509: certificate has expired or is not yet valid'],
  ])('rejects a certificate that is %s', async (_case, subject, daysFromNow, message) => {
    const client = await generateClientCertificate(ca, subject);
    const now = new Date(Date.now() + daysFromNow * 24 * 3600 * 1000);
    const {result} = new ClientCertificateAuthenticator(roots).authenticatePeer(peerOf(client.certPem, {CN: 'jane'}), now);
    expect(result).toEqual({error: expect.stringContaining(message)});
  });

  it('rejects a serving certificate used as a client certificate', async () => {
    const server = await generateServingCertificate(ca, {hosts: ['x'], ips: []});
    const {result} = new ClientCertificateAuthenticator(roots).authenticatePeer(peerOf(server.certPem, {CN: 'x'}));
    expect(result).toEqual({error: expect.stringContaining('incompatible key usage')});
  });

  it('identifies nobody (no error) from a certificate without a CommonName, and nothing without a certificate', async () => {
    const client = await generateClientCertificate(ca, {user: 'jane'});
    const authenticator = new ClientCertificateAuthenticator(roots);
    expect(authenticator.authenticatePeer(peerOf(client.certPem, {O: 'dev'})).result).toBeUndefined();
    expect(authenticator.authenticatePeer({}).result).toBeUndefined();
  });

  it('verifies a connection once and reuses the result', async () => {
    const client = await generateClientCertificate(ca, {user: 'jane'});
    let calls = 0;
    const socket = {getPeerCertificate: () => (calls++, peerOf(client.certPem, {CN: 'jane'}))};
    const authenticator = new ClientCertificateAuthenticator(roots);
    expect(authenticator.authenticate(socket)).toEqual({user: {name: 'jane', groups: []}});
    expect(authenticator.authenticate(socket)).toEqual({user: {name: 'jane', groups: []}});
    expect(calls).toBe(1);
  });

  it('lets a valid token through when the certificate is rejected; fails when nothing succeeds', async () => {
    const otherCa = await generateCa();
    const foreign = await generateClientCertificate(otherCa, {user: 'jane'});
    const socket = {getPeerCertificate: () => peerOf(foreign.certPem, {CN: 'jane'})};
    const authenticator = new RequestAuthenticator({anonymous: true, clientCas: roots, tokens: parseTokenFile('good,alice,1\n', 't')});
    expect(authenticator.authenticateRequest({headers: {authorization: 'Bearer good'}, socket}).user?.name).toBe('alice');
    const failed = authenticator.authenticateRequest({headers: {}, socket});
    expect(failed.user).toBeUndefined();
    expect(failed.error).toContain('certificate signed by unknown authority');
  });
});
