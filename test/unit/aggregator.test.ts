/**
 * The aggregator's pure decisions: which APIService serves a path, where its service is (endpoint
 * routing or cluster IP), the front-proxy headers, /apis merged, and the egress selector file's
 * validation with field paths.
 */
import {describe, expect, it} from '@jest/globals';
import {apiServiceForPath, apiServiceView, mergeGroupList, proxyHeaders, resolveTarget} from '../../src/daemons/apiserver/aggregator/apiservices.js';
import {parseEgressSelector} from '../../src/daemons/apiserver/aggregator/egress.js';
import {names} from '../../src/api/names.js';
import {proxyClientCredentials} from '../../src/daemons/apiserver/aggregator/setup.js';
import {generateCa, generateClientCertificate} from '../../src/daemons/shared/pki/certificates.js';
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';

const service = {metadata: {name: 'wardle', namespace: 'ns'}, spec: {clusterIP: '10.0.0.7', ports: [{port: 443, targetPort: 8443}]}};
const endpoints = {subsets: [{addresses: [{ip: '10.1.2.3'}], ports: [{port: 8443}]}]};
const ref = {namespace: 'ns', name: 'wardle', port: 443};

describe('aggregator decisions', () => {
  it('routes to the endpoint with routing, else to the cluster IP, naming the service for TLS', () => {
    expect(resolveTarget(ref, service, endpoints, true)).toEqual({host: '10.1.2.3', port: 8443, serverName: 'wardle.ns.svc'});
    expect(resolveTarget(ref, service, undefined, false)).toEqual({host: '10.0.0.7', port: 443, serverName: 'wardle.ns.svc'});
    expect(() => resolveTarget(ref, undefined, undefined, false)).toThrow('service "ns/wardle" not found');
    expect(() => resolveTarget({...ref, port: 80}, service, undefined, false)).toThrow('no service port 80 found for service "wardle"');
    expect(() => resolveTarget(ref, service, {subsets: []}, true)).toThrow('no endpoints available for service "wardle"');
  });

  it('finds the non-local APIService of a path', () => {
    const views = new Map([
      ['v1alpha1.wardle.example.com', apiServiceView({metadata: {name: 'v1alpha1.wardle.example.com'}, spec: {group: 'wardle.example.com', version: 'v1alpha1', service: {namespace: 'ns', name: 'wardle'}}})],
      ['v1.apps', apiServiceView({metadata: {name: 'v1.apps'}, spec: {group: 'apps', version: 'v1'}})],
    ]);
    expect(apiServiceForPath('/apis/wardle.example.com/v1alpha1/namespaces/x/flunders', views)?.service).toEqual({namespace: 'ns', name: 'wardle', port: 443});
    expect(apiServiceForPath('/apis/apps/v1/deployments', views)).toBeUndefined(); // local
    expect(apiServiceForPath('/apis/wardle.example.com', views)).toBeUndefined();
  });

  it('replaces identity headers and credentials with the user, escaping extra keys as upstream', () => {
    const headers = proxyHeaders(
      {authorization: 'Bearer secret', 'x-remote-user': 'mallory', 'X-Remote-Extra-Evil': 'x', 'impersonate-user': 'root', accept: 'application/json'},
      {name: 'alice', uid: 'u-1', groups: ['devs', 'system:authenticated'], extra: {'example.com/scopes': ['a', 'b']}},
    );
    expect(headers).toEqual({
      accept: 'application/json', 'X-Remote-User': 'alice', 'X-Remote-Uid': 'u-1', 'X-Remote-Group': ['devs', 'system:authenticated'],
      'X-Remote-Extra-example.com%2Fscopes': ['a', 'b'],
    });
  });

  it('adds aggregated groups to /apis by group priority', () => {
    const view = (group: string, version: string, gp: number) => apiServiceView({metadata: {name: `${version}.${group}`}, spec: {group, version, service: {namespace: 'n', name: 's'}, groupPriorityMinimum: gp, versionPriority: 10}});
    const merged = mergeGroupList({kind: 'APIGroupList', groups: [{name: 'apps'}]}, [view('b.example.com', 'v1', 100), view('a.example.com', 'v1beta1', 10), view('a.example.com', 'v1', 10)]);
    const groups = merged.groups as {name: string; preferredVersion?: {version: string}}[];
    expect(groups.map((g) => g.name)).toEqual(['apps', 'b.example.com', 'a.example.com']);
    expect(groups[2]!.preferredVersion?.version).toBe('v1');
  });
});

describe('egress selector configuration', () => {
  const head = `apiVersion: apiserver.${names().domain}/v1beta1\nkind: EgressSelectorConfiguration\negressSelections:\n`;
  it('accepts Direct and HTTPConnect over uds or tcp', () => {
    const s = parseEgressSelector(`${head}- name: cluster\n  connection:\n    proxyProtocol: HTTPConnect\n    transport:\n      tcp: {url: 'http://127.0.0.1:8131'}\n- name: master\n  connection: {proxyProtocol: Direct}\n`, 'f');
    expect(s.get('cluster')).toEqual({proxyProtocol: 'HTTPConnect', transport: {tcp: {url: 'http://127.0.0.1:8131', tlsConfig: undefined}}});
    expect(s.get('controlplane')).toEqual({proxyProtocol: 'Direct'});
  });

  it('names each problem with its field path; GRPC is refused clearly', () => {
    const bad = `${head}- name: cluster\n  connection: {proxyProtocol: GRPC, transport: {uds: {udsName: /s}}}\n- name: nodes\n  connection: {proxyProtocol: Direct}\n- name: etcd\n  connection:\n    proxyProtocol: HTTPConnect\n    transport: {tcp: {url: 'https://proxy:1'}}\n`;
    let message = '';
    try {
      parseEgressSelector(bad, 'egress.yaml');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain('--egress-selector-config-file: egress.yaml:');
    expect(message).toContain('egressSelections[0].connection.proxyProtocol: Unsupported value: "GRPC"');
    expect(message).toContain('egressSelections[1].name: Unsupported value: "nodes": supported values: "cluster", "controlplane", "etcd"');
    expect(message).toContain('egressSelections[2].connection.proxyProtocol: Invalid value: "HTTPConnect": orch routes only the cluster selection through a proxy; etcd must be Direct');
    expect(message).toContain('egressSelections[2].connection.transport.tcp.tlsConfig: Required value');
  });
});

describe('proxy client credentials', () => {
  it('needs both files, readable, and a matching pair, naming the options', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'orch-proxy-client-'));
    try {
      const ca = await generateCa();
      const [a, b] = [await generateClientCertificate(ca, {user: 'front-proxy-client'}), await generateClientCertificate(ca, {user: 'other'})];
      writeFileSync(join(dir, 'a.crt'), a.certPem);
      writeFileSync(join(dir, 'a.key'), a.keyPem);
      writeFileSync(join(dir, 'b.key'), b.keyPem);
      const config = {routing: false, rejectForwardingRedirect: true};
      expect(await proxyClientCredentials(config)).toBeUndefined();
      await expect(proxyClientCredentials({...config, proxyClientCertFile: join(dir, 'a.crt')})).rejects.toThrow('--proxy-client-cert-file and --proxy-client-key-file must be given together');
      await expect(proxyClientCredentials({...config, proxyClientCertFile: join(dir, 'missing.crt'), proxyClientKeyFile: join(dir, 'a.key')})).rejects.toThrow(`--proxy-client-cert-file: cannot read ${join(dir, 'missing.crt')}`);
      await expect(proxyClientCredentials({...config, proxyClientCertFile: join(dir, 'a.crt'), proxyClientKeyFile: join(dir, 'b.key')})).rejects.toThrow('private key does not match public key');
      expect(await proxyClientCredentials({...config, proxyClientCertFile: join(dir, 'a.crt'), proxyClientKeyFile: join(dir, 'a.key')})).toEqual({cert: a.certPem, key: a.keyPem});
    } finally {
      rmSync(dir, {recursive: true, force: true});
    }
  });
});
