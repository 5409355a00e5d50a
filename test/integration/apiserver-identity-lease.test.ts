/**
 * The API server's identity lease: created in the system namespace with upstream's name and labels,
 * renewed; with the UnknownVersionInteroperabilityProxy gate on it carries the peer address
 * (`--peer-advertise-ip`:`--peer-advertise-port`) peers would proxy to, without the gate it does not.
 */
import {afterAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {hostname, tmpdir} from 'node:os';
import {join} from 'node:path';
import {names} from '../../src/api/names.js';
import {featureGatesConfig} from '../../src/daemons/apiserver/config.js';
import {identityLeaseName} from '../../src/daemons/apiserver/peers/identity-lease.js';
import {generateCa, generateClientCertificate} from '../../src/daemons/shared/pki/certificates.js';
import {startApiServer, type InProcessServer} from '../helpers/apiserver.js';

const started: InProcessServer[] = [];
afterAll(async () => {
  for (const s of started) await s.stop();
});

async function identityLeases(server: InProcessServer) {
  const n = names();
  const selector = encodeURIComponent(`${n.labels.apiserverIdentity}=${n.product}-apiserver`);
  const r = await server.client.request('GET', `/apis/${n.groups.coordination}/v1/namespaces/${n.namespaces.system}/leases?labelSelector=${selector}`);
  expect(r.status).toBe(200);
  return r.body.items as any[];
}

describe('identity lease', () => {
  it('is kept with upstream name and labels, without a peer address while the gate is off', async () => {
    const server = await startApiServer({engine: 'sqlite', config: {peer: {advertiseIp: '10.1.2.3', advertisePort: '7443'}}});
    started.push(server);
    const [lease, ...others] = await identityLeases(server);
    expect(others).toEqual([]);
    expect(lease.metadata.name).toBe(identityLeaseName(hostname()));
    expect(lease.metadata.name).toMatch(/^apiserver-[a-z2-7]{26}$/);
    expect(lease.metadata.labels[names().labels.hostname]).toBe(hostname());
    expect(lease.spec.leaseDurationSeconds).toBe(3600);
    expect(lease.spec.holderIdentity.startsWith(`${lease.metadata.name}_`)).toBe(true);
    expect(lease.metadata.annotations?.[names().annotations.peerAdvertiseAddress]).toBeUndefined();
  }, 30_000);

  it('carries --peer-advertise-ip:--peer-advertise-port with UnknownVersionInteroperabilityProxy on', async () => {
    // The gate's peer proxy needs the proxy client certificate (upstream's BuildPeerProxy).
    const dir = mkdtempSync(join(tmpdir(), 'orch-identity-lease-'));
    const ca = await generateCa();
    const client = await generateClientCertificate(ca, {user: 'front-proxy-client'});
    writeFileSync(join(dir, 'proxy.crt'), client.certPem);
    writeFileSync(join(dir, 'proxy.key'), client.keyPem);
    const server = await startApiServer({
      engine: 'sqlite',
      config: {
        featureGates: featureGatesConfig({'feature-gates': {UnknownVersionInteroperabilityProxy: true}}),
        peer: {advertiseIp: '10.1.2.3', advertisePort: '7443'},
        aggregator: {routing: false, rejectForwardingRedirect: true, proxyClientCertFile: join(dir, 'proxy.crt'), proxyClientKeyFile: join(dir, 'proxy.key')},
      },
    }).finally(() => rmSync(dir, {recursive: true, force: true}));
    started.push(server);
    const [lease] = await identityLeases(server);
    expect(lease.metadata.annotations[names().annotations.peerAdvertiseAddress]).toBe('10.1.2.3:7443');
  }, 30_000);
});
