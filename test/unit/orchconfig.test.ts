import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {execFile} from 'node:child_process';
import {mkdtempSync, readFileSync, rmSync, statSync} from 'node:fs';
import {createServer} from 'node:https';
import type {AddressInfo} from 'node:net';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {promisify} from 'node:util';
import {
  loadOrchConfig,
  mergeOrchConfigs,
  parseOrchConfig,
  resolveClientConfig,
  serializeOrchConfig,
  writeAdminOrchconfig,
  type ClientConfigOverrides,
  type OrchConfigIo,
} from '../../src/client/orchconfig.js';
import {RequestAuthenticator} from '../../src/daemons/shared/authentication/authenticator.js';
import {parseCertificateBundle} from '../../src/daemons/shared/authentication/x509.js';
import {generateCa, generateClientCertificate, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';

const b64 = (text: string) => Buffer.from(text).toString('base64');
const CA = '-----BEGIN CERTIFICATE-----\nCA\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nCERT\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nKEY\n-----END PRIVATE KEY-----\n';

/** An in-memory file system and environment. */
function memoryIo(files: Record<string, string>, env: Record<string, string> = {}): OrchConfigIo {
  return {
    env,
    homeDir: '/home/op',
    readFile: async (path) => {
      if (path in files) return files[path];
      throw Object.assign(new Error(`ENOENT: no such file or directory, open '${path}'`), {code: 'ENOENT'});
    },
  };
}

const mainConfig = `
apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: c1
  cluster:
    server: https://10.0.0.1:6443
    certificate-authority: ca.crt
    tls-server-name: api.internal
- name: c2
  cluster:
    server: https://c2.example:6443
    certificate-authority-data: ${b64(CA)}
- name: plain
  cluster:
    server: http://127.0.0.1:8080
users:
- name: u1
  user:
    client-certificate: certs/u1.crt
    client-key: /abs/u1.key
- name: tok
  user:
    token: secret-token
- name: tokfile
  user:
    tokenFile: token.txt
- name: imp
  user:
    token: t
    as: jane
    as-groups: [dev]
contexts:
- name: dev
  context: {cluster: c1, user: u1, namespace: team-a}
- name: other
  context: {cluster: c2, user: tok}
- name: plain
  context: {cluster: plain, user: tok}
- name: imp
  context: {cluster: c2, user: imp}
`;

const files = {
  '/home/op/.orch/config': mainConfig,
  '/home/op/.orch/ca.crt': CA,
  '/home/op/.orch/certs/u1.crt': CERT,
  '/abs/u1.key': KEY,
  '/home/op/.orch/token.txt': 'file-token\n',
  '/flags/ca.crt': 'FLAG CA',
  '/flags/client.crt': 'FLAG CERT',
};

describe('parsing', () => {
  it('resolves relative paths against the file directory and keys lists by name', () => {
    const config = parseOrchConfig(mainConfig, '/home/op/.orch/config');
    expect(config.currentContext).toBe('dev');
    expect(config.clusters.get('c1')).toEqual({server: 'https://10.0.0.1:6443', 'certificate-authority': '/home/op/.orch/ca.crt', 'tls-server-name': 'api.internal'});
    expect(config.users.get('u1')).toEqual({'client-certificate': '/home/op/.orch/certs/u1.crt', 'client-key': '/abs/u1.key'});
    expect(config.users.get('tokfile')).toEqual({tokenFile: '/home/op/.orch/token.txt'});
    expect(config.contexts.get('dev')).toEqual({cluster: 'c1', user: 'u1', namespace: 'team-a'});
    expect(config.origins.get('clusters/c1')).toBe('/home/op/.orch/config');
  });

  it('reads JSON too, and an empty file as an empty configuration', () => {
    expect(parseOrchConfig('{"clusters":[{"name":"x","cluster":{"server":"https://x"}}]}', '/c').clusters.get('x')).toEqual({server: 'https://x'});
    expect(parseOrchConfig('', '/c').clusters.size).toBe(0);
  });

  it.each([
    ['clusters: {a: 1}', 'error loading config file "/c": clusters: must be a list of {name, cluster} entries'],
    ['users:\n- user: {token: x}', 'error loading config file "/c": users[0].name: required'],
    ['clusters:\n- name: a\n  cluster: {insecure-skip-tls-verify: "yes"}', 'error loading config file "/c": clusters[0].cluster.insecure-skip-tls-verify: must be a boolean (true or false)'],
    ['users:\n- name: a\n  user: {client-key-data: "not base64!"}', 'error loading config file "/c": users[0].user.client-key-data: illegal base64 data'],
    ['kind: Pod', 'error loading config file "/c": kind: must be "Config", not "Pod"'],
    ['clusters: [a: b', 'error loading config file "/c": '],
  ])('rejects %j naming file and field', (text, message) => {
    expect(() => parseOrchConfig(text, '/c')).toThrow(message);
  });
});

describe('merging and file selection', () => {
  const a = parseOrchConfig('current-context: ""\nclusters:\n- name: shared\n  cluster: {server: https://a}\n- name: onlyA\n  cluster: {server: https://oa}\n', '/a');
  const b = parseOrchConfig('current-context: ctxB\nclusters:\n- name: shared\n  cluster: {server: https://b, insecure-skip-tls-verify: true}\n- name: onlyB\n  cluster: {server: https://ob}\n', '/b');

  it('takes each named entry whole from the first file and combines the rest', () => {
    const merged = mergeOrchConfigs([a, b]);
    expect(merged.clusters.get('shared')).toEqual({server: 'https://a'});
    expect([...merged.clusters.keys()].sort()).toEqual(['onlyA', 'onlyB', 'shared']);
    expect(merged.currentContext).toBe('ctxB');
    expect(merged.origins.get('clusters/shared')).toBe('/a');
  });

  it.each([
    ['the explicit file only', '/x', {ORCHCONFIG: '/a:/b'}, ['/x']],
    ['the ORCHCONFIG list, missing files skipped, duplicates once', undefined, {ORCHCONFIG: '/a::/missing:/b:/a'}, ['/a', '/b']],
    ['the default file', undefined, {}, ['/home/op/.orch/config']],
  ])('reads %s', async (_case, explicit, env, expected) => {
    const io = memoryIo({'/a': 'clusters: []', '/b': '', '/x': '', '/home/op/.orch/config': ''}, env);
    expect((await loadOrchConfig(explicit, io)).files).toEqual(expected);
  });

  it('fails on a missing explicit file, warns when every listed file is missing', async () => {
    await expect(loadOrchConfig('/nope', memoryIo({}))).rejects.toThrow('stat /nope: no such file or directory');
    expect((await loadOrchConfig(undefined, memoryIo({}, {ORCHCONFIG: '/m1:/m2'}))).warnings).toEqual(['Config not found: /m1, /m2']);
    expect((await loadOrchConfig(undefined, memoryIo({}))).files).toEqual([]);
  });
});

describe('resolveClientConfig', () => {
  const io = memoryIo(files);
  const resolve = (flags: ClientConfigOverrides = {}) => resolveClientConfig(flags, io);

  it('resolves the current context with files read and paths resolved', async () => {
    expect(await resolve()).toMatchObject({
      server: 'https://10.0.0.1:6443', tls: true, caPem: CA, certPem: CERT, keyPem: KEY, tlsServerName: 'api.internal', insecure: false,
      namespace: 'team-a', namespaceExplicit: true, contextName: 'dev', clusterName: 'c1', userName: 'u1', files: ['/home/op/.orch/config'],
    });
  });

  it.each<[string, ClientConfigOverrides, Record<string, unknown>]>([
    ['--context selects another context; namespace defaults', {context: 'other'}, {server: 'https://c2.example:6443', caPem: CA, token: 'secret-token', namespace: 'default', namespaceExplicit: false}],
    ['-n beats the context namespace', {namespace: 'ns2'}, {namespace: 'ns2'}],
    ['--server replaces the server and clears tls-server-name', {server: 'https://other:6443'}, {server: 'https://other:6443', tlsServerName: undefined, caPem: CA}],
    ['--tls-server-name replaces it', {tlsServerName: 'alt.internal'}, {tlsServerName: 'alt.internal'}],
    ['--certificate-authority replaces the CA', {context: 'other', certificateAuthority: '/flags/ca.crt'}, {caPem: 'FLAG CA'}],
    ['--insecure-skip-tls-verify drops the file CA', {context: 'other', insecureSkipTlsVerify: true}, {insecure: true, caPem: undefined}],
    ['--token adds a token', {token: 'flag-token'}, {token: 'flag-token', certPem: CERT}],
    ['--client-certificate replaces the certificate', {clientCertificate: '/flags/client.crt'}, {certPem: 'FLAG CERT'}],
    ['--user picks another user', {user: 'tokfile'}, {token: 'file-token', certPem: undefined}],
    ['--cluster picks another cluster', {cluster: 'c2'}, {server: 'https://c2.example:6443', caPem: CA}],
    ['impersonation from the file', {context: 'imp'}, {impersonate: {user: 'jane', uid: undefined, groups: ['dev'], extra: {}}}],
    ['--as and --as-group override it', {context: 'imp', as: 'joe', asGroups: ['a', 'b']}, {impersonate: {user: 'joe', uid: undefined, groups: ['a', 'b'], extra: {}}}],
    ['no credentials over plain http', {context: 'plain'}, {server: 'http://127.0.0.1:8080', tls: false, token: undefined}],
    ['empty flag values never override', {server: '', token: '', namespace: ''}, {server: 'https://10.0.0.1:6443', namespace: 'team-a', token: undefined}],
  ])('%s', async (_case, flags, expected) => {
    expect(await resolve(flags)).toMatchObject(expected);
  });

  it('falls back to http://localhost:8080 with no configuration at all', async () => {
    expect(await resolveClientConfig({}, memoryIo({}))).toMatchObject({server: 'http://localhost:8080', tls: false, namespace: 'default'});
    expect(await resolveClientConfig({server: 'https://s', token: 't', namespace: 'n'}, memoryIo({}))).toMatchObject({server: 'https://s', token: 't', namespace: 'n', tls: true});
  });

  it.each<[string, ClientConfigOverrides, string, Record<string, string> | null]>([
    ['unknown --context', {context: 'nope'}, 'context "nope" does not exist', null],
    ['unknown --cluster', {cluster: 'nope'}, 'cluster "nope" does not exist', null],
    ['unknown --user', {user: 'nope'}, 'auth info "nope" does not exist', null],
    ['missing current context', {}, 'invalid configuration: context was not found for specified context: gone', {'/c': 'current-context: gone\nclusters:\n- name: a\n  cluster: {server: https://a}'}],
    ['context naming a missing cluster and user', {}, 'invalid configuration: [cluster "x" was not found for context "c", user "y" was not found for context "c", no server found for cluster "x"]', {'/c': 'current-context: c\ncontexts:\n- name: c\n  context: {cluster: x, user: y}'}],
    ['unreadable CA file', {certificateAuthority: '/missing/ca.crt'}, 'invalid configuration: unable to read certificate-authority /missing/ca.crt for c1 due to open /missing/ca.crt: no such file or directory', null],
    ['CA in both forms', {}, 'certificate-authority-data and certificate-authority are both specified for a. certificate-authority-data will override.', {'/c': `current-context: c\ncontexts:\n- name: c\n  context: {cluster: a}\nclusters:\n- name: a\n  cluster: {server: https://a, certificate-authority: /x, certificate-authority-data: ${b64(CA)}}`}],
    ['insecure with a CA', {}, 'specifying a root certificates file with the insecure flag is not allowed', {'/c': `current-context: c\ncontexts:\n- name: c\n  context: {cluster: a}\nclusters:\n- name: a\n  cluster: {server: https://a, insecure-skip-tls-verify: true, certificate-authority-data: ${b64(CA)}}`}],
    ['certificate without key', {}, 'client-key-data or client-key must be specified for u to use the clientCert authentication method.', {'/c': `current-context: c\ncontexts:\n- name: c\n  context: {cluster: a, user: u}\nclusters:\n- name: a\n  cluster: {server: https://a}\nusers:\n- name: u\n  user: {client-certificate-data: ${b64(CERT)}}`}],
    ['token and basic auth', {}, 'more than one authentication method found for u; found [token basicAuth], only one is allowed', {'/c': `current-context: c\ncontexts:\n- name: c\n  context: {cluster: a, user: u}\nclusters:\n- name: a\n  cluster: {server: https://a}\nusers:\n- name: u\n  user: {token: t, username: x, password: y}`}],
    ['impersonated groups without a user', {asGroups: ['g']}, 'requesting uid, groups or user-extra for u1 without impersonating a user', null],
  ])('reports %s', async (_case, flags, message, override) => {
    const ioFor = override ? memoryIo(override) : io;
    await expect(resolveClientConfig({orchconfig: override ? '/c' : undefined, ...flags}, ioFor)).rejects.toThrow(message);
  });
});

describe('writing', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'orch-config-'));
  });
  afterEach(() => rmSync(dir, {recursive: true, force: true}));

  it('serializes in upstream layout: sorted keys and names, lists of named entries', () => {
    const text = serializeOrchConfig(parseOrchConfig('clusters:\n- name: z\n  cluster: {server: https://z}\n- name: a\n  cluster: {server: https://a}\n', '/c'));
    expect(text).toBe(
      'apiVersion: v1\nclusters:\n  - cluster:\n      server: https://a\n    name: a\n  - cluster:\n      server: https://z\n    name: z\ncontexts: []\ncurrent-context: ""\nkind: Config\npreferences: {}\nusers: []\n',
    );
  });

  it('writes an admin orchconfig that resolves back to the same PEMs, readable by its owner only', async () => {
    const path = join(dir, 'sub', 'admin.conf');
    await writeAdminOrchconfig(path, {server: 'https://127.0.0.1:6443', caPem: CA, certPem: CERT, keyPem: KEY});
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toContain('current-context: orch-admin@orch');
    expect(await resolveClientConfig({orchconfig: path})).toMatchObject({server: 'https://127.0.0.1:6443', caPem: CA, certPem: CERT, keyPem: KEY, contextName: 'orch-admin@orch', userName: 'orch-admin', clusterName: 'orch'});
  });

  it('is usable by kubectl with no other step (kubectl is the oracle)', async () => {
    const ca = await generateCa();
    const serving = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
    const admin = await generateClientCertificate(ca, {user: 'orch-admin', groups: ['system:masters']});
    const authenticator = new RequestAuthenticator({anonymous: false, clientCas: parseCertificateBundle(ca.certPem, 'ca')});
    const server = createServer({key: serving.keyPem, cert: serving.certPem, requestCert: true, rejectUnauthorized: false}, (req, res) => {
      const user = authenticator.authenticateRequest(req).user;
      res.writeHead(user ? 200 : 401, {'content-type': 'text/plain'});
      res.end(user ? `hello ${user.name} ${user.groups.join(',')}` : 'Unauthorized');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const path = join(dir, 'admin.conf');
      await writeAdminOrchconfig(path, {server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, caPem: ca.certPem, certPem: admin.certPem, keyPem: admin.keyPem});
      const {stdout} = await promisify(execFile)('kubectl', ['--kubeconfig', path, 'get', '--raw', '/healthz']);
      expect(stdout).toBe('hello orch-admin system:masters,system:authenticated');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
