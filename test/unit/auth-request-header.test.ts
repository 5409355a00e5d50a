/** The front proxy's identity headers into a user (upstream's headerrequest), pure. */
import {describe, expect, it} from '@jest/globals';
import {userFromHeaders} from '../../src/daemons/shared/authentication/request-header.js';

const o = {usernameHeaders: ['X-Remote-User', 'X-User'], groupHeaders: ['X-Remote-Group'], extraHeaderPrefixes: ['X-Remote-Extra-'], uidHeaders: ['X-Remote-Uid']};

describe('userFromHeaders', () => {
  it.each([
    ['no username header: not the proxy\'s request', {'x-remote-group': ['g']}, undefined],
    ['the first non-empty username header', {'x-remote-user': [''], 'x-user': ['bob']}, {name: 'bob', groups: []}],
    ['every group value, in order', {'x-remote-user': ['a'], 'x-remote-group': ['one', 'two']}, {name: 'a', groups: ['one', 'two']}],
    ['uid and extra, keys lower-cased and percent-decoded', {'x-remote-user': ['a'], 'x-remote-uid': ['u1'], 'x-remote-extra-acme.com%2fproject': ['p1', 'p2'], 'x-remote-extra-scope': ['s']},
      {name: 'a', groups: [], uid: 'u1', extra: {'acme.com/project': ['p1', 'p2'], scope: ['s']}}],
    ['a malformed escape kept as is', {'x-remote-user': ['a'], 'x-remote-extra-bad%zz': ['v']}, {name: 'a', groups: [], extra: {'bad%zz': ['v']}}],
  ] as const)('%s', (_name, headers, expected) => {
    const distinct = headers as unknown as Record<string, string[]>;
    expect(userFromHeaders({headers: {}, headersDistinct: distinct}, o)).toEqual(expected);
  });
});
