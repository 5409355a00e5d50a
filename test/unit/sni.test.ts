/** --tls-sni-cert-key: which certificate a TLS client gets for the name it asks for. */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {createServer, type Server} from 'node:https';
import {connect} from 'node:tls';
import {X509Certificate} from 'node:crypto';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';
import {chooseContext, loadSniCandidates, parseSniEntry, sniCallback} from '../../src/daemons/apiserver/sni.js';

describe('parseSniEntry', () => {
  it.each([
    ['a.crt,a.key', {certFile: 'a.crt', keyFile: 'a.key', names: []}],
    ['a.crt,a.key:foo.com,*.bar.com', {certFile: 'a.crt', keyFile: 'a.key', names: ['foo.com', '*.bar.com']}],
  ])('%s', (text, expected) => expect(parseSniEntry(text)).toEqual(expected));
});

describe('chooseContext precedence', () => {
  const ctx = (n: string) => ({n}) as never;
  const candidates = [
    {pattern: '*.example.com', explicit: true, context: ctx('explicit-wildcard')},
    {pattern: 'api.example.com', explicit: false, context: ctx('extracted-exact')},
    {pattern: '*.example.com', explicit: false, context: ctx('extracted-wildcard')},
    {pattern: 'www.example.com', explicit: true, context: ctx('explicit-exact')},
  ];
  it.each([
    ['www.example.com', 'explicit-exact'],
    ['api.example.com', 'extracted-exact'],
    ['other.example.com', 'explicit-wildcard'],
    ['a.b.example.com', undefined],
    ['example.org', undefined],
  ])('%s -> %s', (name, expected) => expect((chooseContext(candidates, name) as {n?: string} | undefined)?.n).toBe(expected));
});

describe('a real TLS server picks the SNI certificate', () => {
  let dir: string;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'orch-sni-'));
    const ca = await generateCa();
    const main = await generateServingCertificate(ca, {hosts: ['localhost'], ips: ['127.0.0.1']});
    const extra = await generateServingCertificate(ca, {hosts: ['extra.example.com'], ips: []});
    writeFileSync(join(dir, 'extra.crt'), extra.certPem);
    writeFileSync(join(dir, 'extra.key'), extra.keyPem);
    const candidates = await loadSniCandidates([parseSniEntry(`${join(dir, 'extra.crt')},${join(dir, 'extra.key')}`)]);
    server = createServer({cert: main.certPem, key: main.keyPem, SNICallback: sniCallback(candidates)}, (_q, r) => r.end('ok'));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as {port: number}).port;
  });
  afterAll(() => {
    server.close();
    rmSync(dir, {recursive: true, force: true});
  });

  const servedNames = (servername: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect({host: '127.0.0.1', port, servername, rejectUnauthorized: false}, () => {
        const san = new X509Certificate(socket.getPeerCertificate(true).raw).subjectAltName ?? '';
        socket.end();
        resolve(san);
      });
      socket.on('error', reject);
    });

  it('serves the extra certificate for its name, and the default one otherwise', async () => {
    expect(await servedNames('extra.example.com')).toContain('DNS:extra.example.com');
    expect(await servedNames('localhost')).toContain('DNS:localhost');
  });
});
