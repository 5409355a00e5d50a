/**
 * The controller manager's HTTPS endpoint with the secure serving options it shares with the API
 * server: HTTP/2 negotiated unless --disable-http2-serving, TLS 1.3 on AES-128-GCM unless
 * --tls-cipher-suites, --tls-min-version refusing older clients, --tls-sni-cert-key choosing the
 * certificate by name. Real TLS on 127.0.0.1.
 */
import {afterEach, describe, expect, it} from '@jest/globals';
import {X509Certificate} from 'node:crypto';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {connect, type ConnectionOptions} from 'node:tls';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {Registry} from 'prom-client';
import {ControllerManagerServing, type ServingConfig} from '../../src/daemons/controller-manager/serving.js';
import {generateCa, generateServingCertificate} from '../../src/daemons/shared/pki/certificates.js';
import {secureServingOptions} from '../../src/daemons/shared/serving/secure-serving.js';
import {freePort} from '../helpers/apiserver.js';

let serving: ControllerManagerServing | undefined;
let dir: string | undefined;
afterEach(async () => {
  await serving?.stop();
  if (dir) rmSync(dir, {recursive: true, force: true});
  serving = undefined;
  dir = undefined;
});

async function start(values: Record<string, unknown>): Promise<number> {
  dir ??= mkdtempSync(join(tmpdir(), 'orch-cm-serving-'));
  // (--secure-port 0 turns the controller manager's serving off, so a free port is picked here.)
  const config: ServingConfig = {bindAddress: '127.0.0.1', securePort: await freePort(), certDir: join(dir, 'pki'), alwaysAllowPaths: ['/healthz'], ...secureServingOptions(values)};
  serving = new ControllerManagerServing(config, new Registry());
  await serving.start();
  return Number(new URL(serving.url).port);
}

/** What a TLS client gets: the negotiated protocol and version and the certificate's names, or the handshake error. */
function handshake(port: number, options: ConnectionOptions = {}): Promise<{alpn: string | false; version: string | null; cipher: string; names: string} | {error: string}> {
  return new Promise((resolve) => {
    const socket = connect({host: '127.0.0.1', port, rejectUnauthorized: false, ALPNProtocols: ['h2', 'http/1.1'], ...options}, () => {
      const names = new X509Certificate(socket.getPeerCertificate(true).raw).subjectAltName ?? '';
      resolve({alpn: socket.alpnProtocol ?? false, version: socket.getProtocol(), cipher: socket.getCipher().name, names});
      socket.end();
    });
    socket.on('error', (error) => resolve({error: error.message}));
  });
}

describe('controller manager secure serving', () => {
  it('speaks HTTP/2 by default and only HTTP/1.1 with --disable-http2-serving', async () => {
    expect(await handshake(await start({}))).toMatchObject({alpn: 'h2'});
    await serving!.stop();
    expect(await handshake(await start({'disable-http2-serving': true}))).toMatchObject({alpn: 'http/1.1'});
  });

  it('settles TLS 1.3 on AES-128-GCM, as Go does, unless --tls-cipher-suites says otherwise', async () => {
    // A Node client lists AES-256-GCM first; the server's order decides.
    expect(await handshake(await start({}))).toMatchObject({version: 'TLSv1.3', cipher: 'TLS_AES_128_GCM_SHA256'});
    await serving!.stop();
    const port = await start({'tls-cipher-suites': ['TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384']});
    expect(await handshake(port, {maxVersion: 'TLSv1.2'})).toMatchObject({cipher: 'ECDHE-ECDSA-AES256-GCM-SHA384'});
  });

  it('refuses a client below --tls-min-version', async () => {
    const port = await start({'tls-min-version': 'VersionTLS13'});
    expect(await handshake(port, {maxVersion: 'TLSv1.2'})).toMatchObject({error: expect.stringMatching(/version|protocol/i)});
    expect(await handshake(port)).toMatchObject({version: 'TLSv1.3'});
  });

  it('serves the --tls-sni-cert-key certificate for its name and the default one otherwise', async () => {
    const ca = await generateCa();
    const extra = await generateServingCertificate(ca, {hosts: ['metrics.example.com'], ips: []});
    const certs = mkdtempSync(join(tmpdir(), 'orch-cm-sni-'));
    try {
      writeFileSync(join(certs, 'extra.crt'), extra.certPem);
      writeFileSync(join(certs, 'extra.key'), extra.keyPem);
      const port = await start({'tls-sni-cert-key': [`${join(certs, 'extra.crt')},${join(certs, 'extra.key')}`]});
      expect(await handshake(port, {servername: 'metrics.example.com'})).toMatchObject({names: 'DNS:metrics.example.com'});
      expect(await handshake(port, {servername: 'localhost'})).toMatchObject({names: expect.stringContaining('DNS:localhost')});
    } finally {
      rmSync(certs, {recursive: true, force: true});
    }
  });

  it('still answers /healthz over HTTP/1.1 and HTTP/2', async () => {
    const port = await start({});
    const {request} = await import('node:https');
    const body = await new Promise<string>((resolve, reject) => {
      request({host: '127.0.0.1', port, path: '/healthz', rejectUnauthorized: false}, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve(text));
      }).on('error', reject).end();
    });
    expect(body).toBe('ok');
    const http2 = await import('node:http2');
    const session = http2.connect(`https://127.0.0.1:${port}`, {rejectUnauthorized: false});
    const h2body = await new Promise<string>((resolve, reject) => {
      const stream = session.request({':path': '/healthz'});
      let text = '';
      stream.on('data', (c) => (text += c));
      stream.on('end', () => resolve(text));
      stream.on('error', reject);
    });
    session.close();
    expect(h2body).toBe('ok');
  });
});
