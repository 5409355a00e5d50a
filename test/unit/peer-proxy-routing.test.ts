/**
 * The mixed version proxy's decision (peers/routing.ts), table-driven: served here, proxied to a
 * live peer that serves the resource, 503 when the peers that serve it have no usable address, the
 * normal local path (404) when nobody does; the loop guard header and the sync wait; and the lease
 * expiry the peer cache reads (peers/peer-discovery.ts leaseExpiry); the options' start errors.
 */
import {afterAll, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {gvrKey, NO_PEER_ADDRESS_MESSAGE, routeRequest, validHostPort, type PeerView, type RouteDecision, type RouteInput} from '../../src/daemons/apiserver/peers/routing.js';
import {names} from '../../src/api/names.js';
import {leaseExpiry} from '../../src/daemons/apiserver/peers/peer-discovery.js';
import {createPeerProxy} from '../../src/daemons/apiserver/peers/peer-proxy.js';
import {systemClock} from '../../src/daemons/shared/clock.js';
import {generateCa, generateClientCertificate} from '../../src/daemons/shared/pki/certificates.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');
const storageClasses = {group: names().groups.storage, version: 'v1', resource: 'storageclasses'};
const serves = (...gvrs: (typeof storageClasses)[]) => new Set(gvrs.map(gvrKey));
const peer = (id: string, over: Partial<PeerView> = {}): PeerView => ({id, address: `10.0.0.${id.length}:6443`, expiresAt: NOW + 60_000, served: serves(storageClasses), ...over});

const base: RouteInput = {gvr: storageClasses, rerouted: false, synced: true, servedLocally: false, self: 'apiserver-a', peers: [peer('apiserver-b')], now: NOW, pick: () => 0};

const cases: [string, Partial<RouteInput>, RouteDecision][] = [
  ['a non-resource request (discovery, /healthz) is served here', {gvr: undefined}, {action: 'local', why: 'non-resource'}],
  ['a request a peer already proxied is never proxied again', {rerouted: true}, {action: 'local', why: 'rerouted'}],
  ['before the lease cache has synced, everything is served here', {synced: false}, {action: 'local', why: 'not-synced'}],
  ['a resource this server serves is served here, even if a peer serves it too', {servedLocally: true}, {action: 'local', why: 'served-locally'}],
  ['a resource only a live peer serves is proxied to its advertised address', {}, {action: 'proxy', peer: 'apiserver-b', address: '10.0.0.11:6443'}],
  ['a peer serving another resource is no candidate: the normal 404 path', {peers: [peer('apiserver-b', {served: serves({...storageClasses, resource: 'csidrivers'})})]}, {action: 'local', why: 'no-peer'}],
  ['a peer serving another version is no candidate', {peers: [peer('apiserver-b', {served: serves({...storageClasses, version: 'v1beta1'})})]}, {action: 'local', why: 'no-peer'}],
  ['a peer whose lease has expired is no candidate', {peers: [peer('apiserver-b', {expiresAt: NOW})]}, {action: 'local', why: 'no-peer'}],
  ['this server\'s own lease is never a candidate', {peers: [peer('apiserver-a')]}, {action: 'local', why: 'no-peer'}],
  ['no peers at all: the normal 404 path', {peers: []}, {action: 'local', why: 'no-peer'}],
  ['the only peer serving it has no address: 503', {peers: [peer('apiserver-b', {address: undefined})]}, {action: 'unavailable', message: NO_PEER_ADDRESS_MESSAGE}],
  ['the only peer serving it has an address without a port: 503', {peers: [peer('apiserver-b', {address: '10.0.0.2'})]}, {action: 'unavailable', message: NO_PEER_ADDRESS_MESSAGE}],
  ['a peer without address is skipped when another one has one', {peers: [peer('apiserver-b', {address: undefined}), peer('apiserver-cc')]}, {action: 'proxy', peer: 'apiserver-cc', address: '10.0.0.12:6443'}],
  ['an IPv6 address is used bracketed', {peers: [peer('apiserver-b', {address: '[fd00::5]:6443'})]}, {action: 'proxy', peer: 'apiserver-b', address: '[fd00::5]:6443'}],
];

describe('peer proxy routing decision', () => {
  it.each(cases)('%s', (_name, over, want) => {
    expect(routeRequest({...base, ...over})).toEqual(want);
  });

  it('picks among the live peers that serve the resource with the given choice (upstream: at random)', () => {
    const peers = [peer('apiserver-b'), peer('apiserver-cc', {expiresAt: NOW - 1}), peer('apiserver-ddd')];
    const seen: number[] = [];
    const decision = routeRequest({...base, peers, pick: (n) => (seen.push(n), n - 1)});
    expect(seen).toEqual([2]); // the expired one is not among the choices
    expect(decision).toEqual({action: 'proxy', peer: 'apiserver-ddd', address: '10.0.0.13:6443'});
  });
});

describe('peer addresses and leases', () => {
  it.each([
    ['10.1.2.3:6443', true], ['[fd00::1]:443', true], ['peer.example.com:6443', true],
    ['10.1.2.3', false], ['fd00::1:443', false], ['10.1.2.3:', false], ['10.1.2.3:70000', false], ['', false],
  ])('%s is a usable host:port: %s', (address, ok) => {
    expect(validHostPort(address)).toBe(ok);
  });

  it('a lease expires leaseDurationSeconds after its renewTime (acquireTime without one)', () => {
    expect(leaseExpiry({renewTime: '2026-01-01T00:00:00.000000Z', leaseDurationSeconds: 3600})).toBe(NOW + 3_600_000);
    expect(leaseExpiry({acquireTime: '2026-01-01T00:00:00.000000Z', leaseDurationSeconds: 15})).toBe(NOW + 15_000);
    expect(leaseExpiry({leaseDurationSeconds: 15})).toBe(0);
  });
});

describe('peer proxy options (start errors, as upstream BuildPeerProxy)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'orch-peer-options-'));
  afterAll(() => rmSync(dir, {recursive: true, force: true}));
  const common = {store: {} as never, keyPrefix: '/registry', self: 'apiserver-a', servedLocally: () => false, clock: systemClock};
  const files = async () => {
    const ca = await generateCa();
    const client = await generateClientCertificate(ca, {user: 'front-proxy-client'});
    writeFileSync(join(dir, 'proxy.crt'), client.certPem);
    writeFileSync(join(dir, 'proxy.key'), client.keyPem);
    writeFileSync(join(dir, 'ca.crt'), ca.certPem);
    writeFileSync(join(dir, 'not-a-ca.crt'), 'hello');
    return {routing: false, rejectForwardingRedirect: true, proxyClientCertFile: join(dir, 'proxy.crt'), proxyClientKeyFile: join(dir, 'proxy.key')};
  };

  it('needs the proxy client certificate', async () => {
    await expect(createPeerProxy({...common})).rejects.toThrow('error building peer proxy handler, proxy-cert-file not specified');
  });

  it('refuses a --peer-ca-file that cannot be read or holds no certificate, naming it', async () => {
    const aggregator = await files();
    await expect(createPeerProxy({...common, aggregator, peerCaFile: join(dir, 'missing.crt')})).rejects.toThrow(`--peer-ca-file ${join(dir, 'missing.crt')}: ENOENT`);
    await expect(createPeerProxy({...common, aggregator, peerCaFile: join(dir, 'not-a-ca.crt')})).rejects.toThrow(`--peer-ca-file ${join(dir, 'not-a-ca.crt')}: no certificates found`);
    await expect(createPeerProxy({...common, aggregator, peerCaFile: join(dir, 'ca.crt')})).resolves.toBeDefined();
  });
});
