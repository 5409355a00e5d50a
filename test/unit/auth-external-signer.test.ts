/** The header an external signer returns, checked as upstream's validateJWTHeader. */
import {describe, expect, it} from '@jest/globals';
import {checkSignedHeader} from '../../src/daemons/apiserver/authentication/serviceaccount/external-signer.js';

const b64 = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o)).toString('base64url');

describe('checkSignedHeader', () => {
  it.each([
    ['a good header', {alg: 'ES256', kid: 'k', typ: 'JWT'}, undefined],
    ['RS256', {alg: 'RS256', kid: 'k', typ: 'JWT'}, undefined],
    ['another type', {alg: 'ES256', kid: 'k', typ: 'JWS'}, 'bad type'],
    ['no key id', {alg: 'ES256', typ: 'JWT'}, 'key id missing'],
    ['a symmetric algorithm', {alg: 'HS256', kid: 'k', typ: 'JWT'}, 'bad signing algorithm "HS256"'],
    ['an unknown field', {alg: 'ES256', kid: 'k', typ: 'JWT', jku: 'https://x'}, 'while parsing header JSON: json: unknown field "jku"'],
    ['a key id over 1024 characters', {alg: 'ES256', kid: 'k'.repeat(1025), typ: 'JWT'}, 'key id longer than 1024 characters'],
    ['not JSON', 'not json', 'while parsing header JSON'],
  ])('%s', (_what, header, problem) => {
    const result = checkSignedHeader(b64(header));
    if (problem === undefined) expect(result).toBeUndefined();
    else expect(result).toContain(problem);
  });
});
