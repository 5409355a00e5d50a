import {beforeAll, describe, expect, it} from '@jest/globals';
import {X509Certificate} from 'node:crypto';
import {request as httpsRequest, createServer} from 'node:https';
import type {AddressInfo} from 'node:net';
import {generateCa, generateClientCertificate, generateServingCertificate, type KeyPairPem} from '../../src/daemons/shared/pki/certificates.js';
import {decodePem, encodePem, splitCertificateBundle} from '../../src/daemons/shared/pki/pem.js';
import {RequestAuthenticator} from '../../src/daemons/shared/authentication/authenticator.js';
import {parseCertificateBundle} from '../../src/daemons/shared/authentication/x509.js';

const names = {hosts: ['localhost', 'orch', 'orch.default', 'orch.default.svc', 'build-host'], ips: ['127.0.0.1', '::1', '10.0.0.1']};
let ca: KeyPairPem;
let serving: KeyPairPem;
let admin: KeyPairPem;

beforeAll(async () => {
  const started = performance.now();
  ca = await generateCa();
  const caDone = performance.now();
  serving = await generateServingCertificate(ca, names);
  const servingDone = performance.now();
  admin = await generateClientCertificate(ca, {user: 'orch-admin', groups: ['system:masters']});
  const done = performance.now();
  // Not asserted: the figure for the report (first call includes loading the x509 library).
  console.log(`pki generation: CA ${(caDone - started).toFixed(1)} ms (with library load), serving ${(servingDone - caDone).toFixed(1)} ms, client ${(done - servingDone).toFixed(1)} ms`);
});

describe('PEM', () => {
  it('round-trips DER through encode and decode, 64-column lines', () => {
    const der = Buffer.from(Array.from({length: 100}, (_, i) => i));
    const pem = encodePem('CERTIFICATE', der);
    expect(pem.split('\n').slice(1, -2).every((line) => line.length <= 64)).toBe(true);
    expect(decodePem(pem)).toEqual([{label: 'CERTIFICATE', der}]);
  });

  it('splits a bundle and ignores text between blocks', () => {
    const bundle = `# a comment\n${ca.certPem}junk\n${serving.certPem}`;
    expect(splitCertificateBundle(bundle)).toHaveLength(2);
    expect(decodePem(bundle + admin.keyPem).map((b) => b.label)).toEqual(['CERTIFICATE', 'CERTIFICATE', 'PRIVATE KEY']);
  });

  it('refuses encrypted legacy keys', () => {
    const encrypted = '-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\nAAAA\n-----END RSA PRIVATE KEY-----\n';
    expect(() => decodePem(encrypted)).toThrow('encrypted keys are not supported');
  });
});

describe('generated certificates', () => {
  it('makes a 10-year EC P-256 CA named orch-ca', () => {
    const cert = new X509Certificate(ca.certPem);
    expect(cert.subject).toBe('CN=orch-ca');
    expect(cert.ca).toBe(true);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    const years = (new Date(cert.validTo).getTime() - Date.now()) / (365 * 24 * 3600 * 1000);
    expect(years).toBeGreaterThan(9.9);
    expect(years).toBeLessThan(10.1);
  });

  it('signs a serving certificate carrying every requested name', () => {
    const cert = new X509Certificate(serving.certPem);
    const caCert = new X509Certificate(ca.certPem);
    expect(cert.checkIssued(caCert)).toBe(true);
    expect(cert.verify(caCert.publicKey)).toBe(true);
    expect(cert.ca).toBe(false);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    for (const host of names.hosts) expect(cert.checkHost(host, {subject: 'never'})).toBe(host);
    for (const ip of names.ips) expect(cert.checkIP(ip)).toBe(ip);
    expect(cert.checkHost('evil.example', {subject: 'never'})).toBeUndefined();
    expect(cert.checkIP('192.0.2.1')).toBeUndefined();
  });

  it('rejects an IP that is not one', async () => {
    await expect(generateServingCertificate(ca, {hosts: [], ips: ['not-an-ip']})).rejects.toThrow('not an IP address: "not-an-ip"');
  });

  it('puts the user in CN and each group in an O', async () => {
    expect(new X509Certificate(admin.certPem).subject).toBe('O=system:masters\nCN=orch-admin');
    const multi = await generateClientCertificate(ca, {user: 'jane', groups: ['dev', 'ops']});
    expect(new X509Certificate(multi.certPem).subject).toBe('O=dev\nO=ops\nCN=jane');
    expect(new X509Certificate(multi.certPem).keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
  });
});

describe('TLS with the generated certificates', () => {
  interface Answer {
    status: number;
    body: string;
  }

  async function withServer(run: (port: number) => Promise<void>): Promise<void> {
    const authenticator = new RequestAuthenticator({anonymous: false, clientCas: parseCertificateBundle(ca.certPem, 'ca')});
    // As the API server will: ask for a certificate, let the authenticator judge it.
    const server = createServer({key: serving.keyPem, cert: serving.certPem, ca: [ca.certPem], requestCert: true, rejectUnauthorized: false}, (req, res) => {
      const outcome = authenticator.authenticateRequest(req);
      res.writeHead(outcome.user ? 200 : 401, {'content-type': 'application/json'});
      res.end(JSON.stringify(outcome.user ?? {error: outcome.error ?? 'none'}));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      await run((server.address() as AddressInfo).port);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  }

  function get(port: number, options: {cert?: string; key?: string; host?: string}): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        {host: options.host ?? '127.0.0.1', port, path: '/api', ca: ca.certPem, cert: options.cert, key: options.key, agent: false},
        (res) => {
          let body = '';
          res.on('data', (chunk) => (body += chunk));
          res.on('end', () => resolve({status: res.statusCode!, body}));
        },
      );
      req.on('error', reject);
      req.end();
    });
  }

  it('verifies the server by IP and by name, and authenticates the client certificate', async () => {
    await withServer(async (port) => {
      const answer = await get(port, {cert: admin.certPem, key: admin.keyPem});
      expect(answer.status).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({name: 'orch-admin', groups: ['system:masters', 'system:authenticated']});
      const byName = await get(port, {host: 'localhost', cert: admin.certPem, key: admin.keyPem});
      expect(byName.status).toBe(200);
    });
  });

  it('leaves a request without a certificate unauthenticated', async () => {
    await withServer(async (port) => {
      expect((await get(port, {})).status).toBe(401);
    });
  });

  it('rejects a client certificate from another CA', async () => {
    const otherCa = await generateCa({commonName: 'other-ca'});
    const intruder = await generateClientCertificate(otherCa, {user: 'orch-admin', groups: ['system:masters']});
    await withServer(async (port) => {
      const answer = await get(port, {cert: intruder.certPem, key: intruder.keyPem});
      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body).error).toContain('x509: certificate signed by unknown authority');
    });
  });
});
