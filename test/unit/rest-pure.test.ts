/** The pure parts of the REST layer: selectors, managed fields, ages, request parsing, tokens, bootstrap and event TTL. */
import { describe, expect, it } from '@jest/globals';
import { labelSelectorString, matchesLabels, parseFieldSelector, parseLabelSelector } from '../../src/api/selectors.js';
import { managerFromUserAgent, updateManagedFields } from '../../src/api/managed-fields.js';
import { humanDuration } from '../../src/api/table.js';
import { parseRequestInfo } from '../../src/daemons/apiserver/rest/request-info.js';
import { decodeContinue, encodeContinue } from '../../src/daemons/apiserver/rest/continue-token.js';
import { bootstrapNamespaces, bootstrapPriorityClasses, firstAddress } from '../../src/daemons/apiserver/rest/bootstrap.js';
import { createEventSweeper } from '../../src/daemons/apiserver/rest/event-ttl.js';
import { ManualClock, MemoryStore } from '../helpers/memory-store.js';
import { StoreCompactedError } from '../../src/daemons/apiserver/storage/store.js';

describe('label selectors', () => {
  const labels = { app: 'web', tier: 'front', n: '5' };
  it.each([
    ['', true],
    ['app=web', true],
    ['app = web , tier==front', true],
    ['app!=web', false],
    ['missing!=x', true],
    ['app in (db, web)', true],
    ['app notin (web)', false],
    ['app,tier', true],
    ['!app', false],
    ['!missing', true],
    ['n>4', true],
    ['n<5', false],
    ['example.com/key=x', false],
  ])('%p matches: %p', (selector, expected) => {
    expect(matchesLabels(parseLabelSelector(selector), labels)).toBe(expected);
  });

  it.each(['app in (a', 'app=', '=web', 'app in a', 'Bad Key=x', 'app=@', 'n>x'])('rejects %p', (selector) => {
    if (selector === 'app=') {
      expect(parseLabelSelector(selector)).toEqual([{ key: 'app', operator: '=', values: [''] }]);
      return;
    }
    expect(() => parseLabelSelector(selector)).toThrow(/unable to parse requirement/);
  });

  it('renders LabelSelector objects sorted by key', () => {
    expect(labelSelectorString({ matchLabels: { z: '1', a: '2' }, matchExpressions: [{ key: 'm', operator: 'In', values: ['y', 'x'] }, { key: 'b', operator: 'DoesNotExist' }] }))
      .toBe('a=2,!b,m in (x,y),z=1');
  });
});

describe('field selectors', () => {
  it('parses equality, inequality and escapes', () => {
    expect(parseFieldSelector('metadata.name=a\\,b,status.phase!=Running,spec.nodeName==')).toEqual([
      { field: 'metadata.name', operator: '=', value: 'a,b' },
      { field: 'status.phase', operator: '!=', value: 'Running' },
      { field: 'spec.nodeName', operator: '=', value: '' },
    ]);
    expect(() => parseFieldSelector('metadata.name')).toThrow();
  });
});

describe('managed fields', () => {
  const base = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', uid: 'u', labels: { a: '1' } }, data: { x: '1' } };
  // Encoded as upstream's structured-merge-diff does: a node added as a whole is a member itself (`.`).
  it('records the fields a create sets, keyed lists by name', () => {
    const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'i' }] } };
    expect(updateManagedFields({ previous: undefined, next: pod, manager: 'm', apiVersion: 'v1', time: 't' })[0]!.fieldsV1).toEqual({
      'f:spec': { 'f:containers': { '.': {}, 'k:{"name":"c"}': { '.': {}, 'f:image': {}, 'f:name': {} } } },
    });
  });

  it('moves changed fields to the writer and drops emptied managers', () => {
    const created = { ...base, metadata: { ...base.metadata, managedFields: updateManagedFields({ previous: undefined, next: base, manager: 'creator', apiVersion: 'v1', time: 't0' }) as any } };
    const next = { ...created, data: { x: '2' } };
    const entries = updateManagedFields({ previous: created, next, manager: 'patcher', apiVersion: 'v1', time: 't1' });
    expect(entries).toEqual([
      { manager: 'creator', operation: 'Update', apiVersion: 'v1', time: 't0', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': {}, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } } },
      { manager: 'patcher', operation: 'Update', apiVersion: 'v1', time: 't1', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:x': {} } } },
    ]);
  });

  it('takes managedFields the writer sends as the prior state; [{}] resets them, [] keeps the stored ones', () => {
    const created = { ...base, metadata: { ...base.metadata, managedFields: updateManagedFields({ previous: undefined, next: base, manager: 'creator', apiVersion: 'v1', time: 't0' }) as any } };
    const withSent = (managedFields: unknown) => ({ ...created, metadata: { ...created.metadata, managedFields: managedFields as any }, data: { x: '2' } });
    const managers = (sent: unknown) => updateManagedFields({ previous: created, next: withSent(sent), manager: 'p', apiVersion: 'v1', time: 't1' }).map((e) => e.manager);
    expect(managers([{}])).toEqual(['p']);
    expect(managers([])).toEqual(['creator', 'p']);
    expect(managers([{ manager: 'other', operation: 'Update', apiVersion: 'v1', fieldsType: 'FieldsV1', fieldsV1: { 'f:metadata': { 'f:labels': {} } } }])).toEqual(['other', 'p']);
  });

  it.each([
    ['kubectl/v1.32.0 (linux/amd64) kubernetes/abc', 'kubectl'],
    ['curl/8.0', 'curl'],
    [undefined, ''],
    ['a\u0001b/1', 'ab'],
    ['x'.repeat(200), 'x'.repeat(128)],
  ])('manager from User-Agent %p is %p', (agent, manager) => {
    expect(managerFromUserAgent(agent)).toBe(manager);
  });
});

describe('ages', () => {
  it.each([
    [0, '0s'], [-500, '0s'], [-5000, '<invalid>'], [119_000, '119s'], [120_000, '2m'], [125_000, '2m5s'], [600_000, '10m'], [3 * 3600_000, '3h'],
    [3 * 3600_000 + 60_000, '3h1m'], [10 * 3600_000, '10h'], [50 * 3600_000, '2d2h'], [10 * 86400_000, '10d'], [800 * 86400_000, '2y70d'], [3000 * 86400_000, '8y'],
  ])('%d ms -> %s', (ms, text) => {
    expect(humanDuration(ms)).toBe(text);
  });
});

describe('request info', () => {
  const q = new URLSearchParams();
  it.each([
    ['GET', '/api/v1/namespaces/default/pods', { resource: 'pods', namespace: 'default', verb: 'list' }],
    ['GET', '/api/v1/namespaces/default/pods/web', { resource: 'pods', name: 'web', verb: 'get' }],
    ['PUT', '/api/v1/namespaces/default/pods/web/status', { resource: 'pods', name: 'web', subresource: 'status', verb: 'update' }],
    ['GET', '/api/v1/namespaces/ns1', { resource: 'namespaces', name: 'ns1', namespace: 'ns1', verb: 'get' }],
    ['PUT', '/api/v1/namespaces/ns1/finalize', { resource: 'namespaces', name: 'ns1', subresource: 'finalize' }],
    ['GET', '/apis/apps/v1/watch/namespaces/x/deployments', { apiGroup: 'apps', resource: 'deployments', verb: 'watch', legacyWatch: true }],
    ['DELETE', '/apis/batch/v1/namespaces/x/jobs', { resource: 'jobs', verb: 'deletecollection' }],
  ])('%s %s', (method, path, expected) => {
    expect(parseRequestInfo(method, path, q)).toMatchObject({ type: 'resource', ...expected });
  });

  it('recognises discovery and foreign paths', () => {
    expect(parseRequestInfo('GET', '/apis/apps', q)).toEqual({ type: 'group', group: 'apps' });
    expect(parseRequestInfo('GET', '/healthz', q)).toEqual({ type: 'none' });
    expect(parseRequestInfo('GET', '/api/v1/namespaces/a/pods/b/status/extra', q)).toEqual({ type: 'unknownUnderApi', group: '' });
  });
});

describe('continue tokens', () => {
  it('round-trip and refuse tampering', () => {
    const token = encodeContinue({ revision: 42, startAfter: 'default/web' });
    expect(token).not.toMatch(/[=+/]/);
    expect(decodeContinue(token)).toEqual({ revision: 42, startAfter: 'default/web' });
    const evil = Buffer.from(JSON.stringify({ v: 'meta.orch.io/v1', rv: 1, start: '../secrets' })).toString('base64url');
    expect(() => decodeContinue(evil)).toThrow();
  });
});

describe('bootstrap', () => {
  it.each([['10.0.0.0/24', '10.0.0.1'], ['10.96.0.0/12', '10.96.0.1'], ['192.168.1.77/24', '192.168.1.1'], ['fd00::/108', 'fd00::1']])('first address of %s is %s', (cidr, ip) => {
    expect(firstAddress(cidr)).toBe(ip);
  });

  it('creates the system namespaces, the orch service and priority classes, idempotently', async () => {
    const store = new MemoryStore();
    await bootstrapNamespaces(store, { serviceClusterIPRange: '10.96.0.0/12', securePort: 7443 });
    const revision = await store.currentRevision();
    await bootstrapNamespaces(store, { serviceClusterIPRange: '10.96.0.0/12', securePort: 7443 });
    expect(await store.currentRevision()).toBe(revision);
    const namespaces = (await store.list('/registry/namespaces/')).items.map((kv) => kv.key);
    expect(namespaces).toEqual(['default', 'orch-node-lease', 'orch-public', 'orch-system'].map((n) => `/registry/namespaces/${n}`));
    const service = JSON.parse((await store.get('/registry/services/specs/default/orch'))!.value);
    expect(service.spec).toMatchObject({ clusterIP: '10.96.0.1', ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 7443 }] });
    await bootstrapPriorityClasses(store);
    const critical = JSON.parse((await store.get('/registry/priorityclasses/system-node-critical'))!.value);
    expect(critical.value).toBe(2000001000);
  });
});

describe('event TTL', () => {
  it('deletes events whose last write is older than the TTL', async () => {
    const store = new MemoryStore();
    const clock = new ManualClock(Date.parse('2024-01-01T01:00:00Z'));
    const event = (name: string, last: string) => JSON.stringify({ kind: 'Event', metadata: { name, creationTimestamp: '2024-01-01T00:00:00Z' }, lastTimestamp: last });
    await store.create('/registry/events/default/old', event('old', '2024-01-01T00:00:00Z'));
    await store.create('/registry/events/default/fresh', event('fresh', '2024-01-01T00:30:00Z'));
    const sweeper = createEventSweeper({ store, clock, ttlMs: 3600_000 });
    expect(await sweeper.sweep()).toBe(1);
    expect((await store.list('/registry/events/')).items.map((kv) => kv.key)).toEqual(['/registry/events/default/fresh']);
    clock.advance(30 * 60_000);
    expect(await sweeper.sweep()).toBe(1);
  });
});

describe('memory store', () => {
  it('reads the past, replays history on watch and reports compaction', async () => {
    const store = new MemoryStore();
    const r1 = await store.create('/k/a', '1');
    await store.update('/k/a', '2', r1);
    expect((await store.list('/k/', { revision: r1 })).items.map((kv) => kv.value)).toEqual(['1']);
    const seen: string[] = [];
    const handle = store.watch('/k/', 0, (e) => seen.push(`${e.type}:${e.value ?? ''}`), () => undefined);
    await store.delete('/k/a');
    await new Promise((r) => setTimeout(r, 0));
    expect(seen).toEqual(['PUT:1', 'PUT:2', 'DELETE:']);
    handle.close();
    await store.compact(2);
    const errors: Error[] = [];
    store.watch('/k/', 1, () => undefined, (e) => errors.push(e));
    await new Promise((r) => setTimeout(r, 0));
    expect(errors[0]).toBeInstanceOf(StoreCompactedError);
  });
});
