/**
 * The `orch` service's endpoint reconciler on a real SQLite store with a fake clock: every server
 * with an unexpired lease is listed, a server that stops renewing drops out once its lease's TTL
 * has passed (not before), a clean stop removes the server at once, `master-count` lists only the
 * writer and `none` writes nothing.
 */
import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {names} from '../../src/api/names.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {EndpointReconciler, type EndpointReconcilerType} from '../../src/daemons/apiserver/services/endpoint-reconciler.js';
import {SqliteStore} from '../../src/daemons/apiserver/storage/sqlite.js';

const PREFIX = '/registry';
let dir: string;
let store: SqliteStore;
let clock: FakeClock;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'orch-endpoints-'));
  store = new SqliteStore({path: join(dir, 'kv.sqlite')});
  clock = new FakeClock(1_000_000);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, {recursive: true, force: true});
});

const reconciler = (ip: string, type: EndpointReconcilerType = 'lease') =>
  new EndpointReconciler({store, keyPrefix: PREFIX, type, ip, port: 6443, clock, intervalMs: 10_000, ttlMs: 15_000});

async function listed(): Promise<string[]> {
  const kv = await store.get(`${PREFIX}/services/endpoints/default/${names().defaultService}`);
  if (!kv) return [];
  const endpoints = JSON.parse(kv.value);
  return (endpoints.subsets ?? []).flatMap((s: any) => s.addresses.map((a: any) => a.ip));
}

async function sliceListed(): Promise<string[]> {
  const kv = await store.get(`${PREFIX}/endpointslices/default/${names().defaultService}`);
  return kv ? JSON.parse(kv.value).endpoints.flatMap((e: any) => e.addresses) : [];
}

describe('lease endpoint reconciler', () => {
  it('lists every server with a live lease, and drops one that stops renewing only after the TTL', async () => {
    const a = reconciler('10.0.0.11');
    const b = reconciler('10.0.0.12');
    await a.reconcile();
    await b.reconcile();
    expect(await listed()).toEqual(['10.0.0.11', '10.0.0.12']);
    expect(await sliceListed()).toEqual(['10.0.0.11', '10.0.0.12']);

    // b is gone without a word; a goes on renewing every 10 s.
    await clock.advance(10_000);
    await a.reconcile();
    expect(await listed()).toEqual(['10.0.0.11', '10.0.0.12']);
    await clock.advance(5_000);
    await a.reconcile();
    expect(await listed()).toEqual(['10.0.0.11']);
    expect(await sliceListed()).toEqual(['10.0.0.11']);
    // The expired lease key is gone too.
    expect(await store.get(`${PREFIX}/masterleases/10.0.0.12`)).toBeUndefined();
  });

  it('removes a cleanly stopped server at once', async () => {
    const a = reconciler('10.0.0.11');
    const b = reconciler('10.0.0.12');
    await a.reconcile();
    await b.reconcile();
    await b.stop(true);
    expect(await listed()).toEqual(['10.0.0.11']);
  });

  it('lists only the writer with master-count, and leaves the endpoints alone with none', async () => {
    await reconciler('10.0.0.11', 'master-count').reconcile();
    await reconciler('10.0.0.12', 'master-count').reconcile();
    expect(await listed()).toEqual(['10.0.0.12']);
    await reconciler('10.0.0.13', 'none').reconcile();
    expect(await listed()).toEqual(['10.0.0.12']);
  });

  it('writes nothing when nothing changed', async () => {
    const a = reconciler('10.0.0.11');
    await a.reconcile();
    const before = await store.get(`${PREFIX}/services/endpoints/default/${names().defaultService}`);
    await clock.advance(10_000);
    await a.reconcile();
    const after = await store.get(`${PREFIX}/services/endpoints/default/${names().defaultService}`);
    expect(after?.modRevision).toBe(before?.modRevision);
  });
});
