import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {X509Certificate} from 'node:crypto';
import {mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {ensureClientCertificate, ensureServingCertificates} from '../../src/daemons/shared/pki/cert-dir.js';
import {servingCertificateNames} from '../../src/daemons/shared/pki/serving-names.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'orch-pki-'));
});
afterEach(() => rmSync(dir, {recursive: true, force: true}));

const names = {hosts: ['localhost', 'orch'], ips: ['127.0.0.1', '::1']};
const DAY = 24 * 3600 * 1000;

describe('ensureServingCertificates', () => {
  it('creates the CA and serving pair once, keys readable by the owner only', async () => {
    const first = await ensureServingCertificates(dir, names);
    expect(first.ca.generated).toBe(true);
    expect(first.serving.generated).toBe(true);
    for (const file of ['ca.key', 'apiserver.key']) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o600);
    for (const file of ['ca.crt', 'apiserver.crt']) expect(statSync(join(dir, file)).mode & 0o777).toBe(0o644);
    expect(readFileSync(join(dir, 'apiserver.crt'), 'utf8')).toBe(first.serving.certPem);
    expect(first.serving.certFile).toBe(join(dir, 'apiserver.crt'));

    const second = await ensureServingCertificates(dir, names);
    expect(second.ca.generated).toBe(false);
    expect(second.serving.generated).toBe(false);
    expect(second.reasons).toEqual([]);
    expect(second.serving.certPem).toBe(first.serving.certPem);
  });

  it.each([
    ['a requested name is new', {hosts: [...names.hosts, 'new.example'], ips: names.ips}, 0, 'lacks new.example'],
    ['a requested IP is new', {hosts: names.hosts, ips: [...names.ips, '10.0.0.1']}, 0, 'lacks 10.0.0.1'],
    ['it expires within 30 days', names, 340 * DAY, 'expired or expiring'],
  ])('regenerates only the serving certificate when %s', async (_case, requested, laterMs, reason) => {
    const first = await ensureServingCertificates(dir, names);
    const later = await ensureServingCertificates(dir, requested, {now: () => new Date(Date.now() + laterMs)});
    expect(later.ca.generated).toBe(false);
    expect(later.ca.certPem).toBe(first.ca.certPem);
    expect(later.serving.generated).toBe(true);
    expect(later.reasons).toEqual([`serving certificate: ${reason}`]);
    const cert = new X509Certificate(later.serving.certPem);
    for (const ip of requested.ips) expect(cert.checkIP(ip)).toBe(ip);
  });

  it('keeps a serving certificate whose names are a superset of the request', async () => {
    await ensureServingCertificates(dir, names);
    const fewer = await ensureServingCertificates(dir, {hosts: ['localhost'], ips: []});
    expect(fewer.serving.generated).toBe(false);
  });

  it.each([
    ['the CA key does not match', () => writeFileSync(join(dir, 'ca.key'), readFileSync(join(dir, 'apiserver.key'))), 'CA: key does not match certificate'],
    ['the CA certificate is garbage', () => writeFileSync(join(dir, 'ca.crt'), 'garbage'), 'CA: unreadable certificate'],
    ['the CA is not a CA', () => writeFileSync(join(dir, 'ca.crt'), readFileSync(join(dir, 'apiserver.crt'))), 'CA: not a CA certificate'],
  ])('regenerates everything when %s', async (_case, damage, reason) => {
    const first = await ensureServingCertificates(dir, names);
    damage();
    const again = await ensureServingCertificates(dir, names);
    expect(again.ca.generated).toBe(true);
    expect(again.ca.certPem).not.toBe(first.ca.certPem);
    expect(again.serving.generated).toBe(true);
    expect(again.reasons).toEqual([reason, 'serving certificate: not signed by the current CA']);
  });
});

describe('ensureClientCertificate', () => {
  it('reuses the admin certificate while its subject is unchanged', async () => {
    const {ca} = await ensureServingCertificates(dir, names);
    const admin = await ensureClientCertificate(dir, 'admin', ca, {user: 'orch-admin', groups: ['system:masters']});
    expect(admin.generated).toBe(true);
    expect(statSync(join(dir, 'admin.key')).mode & 0o777).toBe(0o600);
    const again = await ensureClientCertificate(dir, 'admin', ca, {user: 'orch-admin', groups: ['system:masters']});
    expect(again.generated).toBe(false);
    const regrouped = await ensureClientCertificate(dir, 'admin', ca, {user: 'orch-admin', groups: ['system:masters', 'ops']});
    expect(regrouped.generated).toBe(true);
    expect(new X509Certificate(regrouped.certPem).subject).toBe('O=system:masters\nO=ops\nCN=orch-admin');
  });
});

describe('servingCertificateNames', () => {
  it.each([
    [
      'advertised IP, host name and service IP',
      {advertiseAddress: '192.168.1.5', hostname: 'Node-1', serviceIp: '10.0.0.1'},
      {hosts: ['node-1', 'localhost', 'orch', 'orch.default', 'orch.default.svc', 'orch.default.svc.cluster.local'], ips: ['192.168.1.5', '127.0.0.1', '::1', '10.0.0.1']},
    ],
    [
      'unspecified bind address and duplicates are dropped',
      {advertiseAddress: '0.0.0.0', hostname: 'localhost', extra: ['127.0.0.1']},
      {hosts: ['localhost', 'orch', 'orch.default', 'orch.default.svc', 'orch.default.svc.cluster.local'], ips: ['127.0.0.1', '::1']},
    ],
    [
      'an advertised DNS name goes to the hosts',
      {advertiseAddress: 'api.example.com', clusterDomain: 'corp'},
      {hosts: ['api.example.com', 'localhost', 'orch', 'orch.default', 'orch.default.svc', 'orch.default.svc.corp'], ips: ['127.0.0.1', '::1']},
    ],
  ])('%s', (_case, inputs, expected) => {
    expect(servingCertificateNames(inputs)).toEqual(expected);
  });
});
