import {describe, expect, it} from '@jest/globals';
import {mkdtempSync, rmSync, existsSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {
  SQLITE_FILE,
  createStore,
  defaultKeyPrefix,
  parseServersOverrides,
  parseWatchCacheSizes,
} from '../../src/daemons/apiserver/storage/index.js';

describe('storage option values', () => {
  it.each([
    ['/events#http://10.0.0.1:2379', [{group: '', resource: 'events', servers: ['http://10.0.0.1:2379']}]],
    [
      'coordination.orch.io/leases#https://a:2379;https://b:2379',
      [{group: 'coordination.orch.io', resource: 'leases', servers: ['https://a:2379', 'https://b:2379']}],
    ],
  ])('--kvstore-servers-overrides %s', (entry, expected) => {
    expect(parseServersOverrides([entry])).toEqual(expected);
  });

  it('reads --watch-cache-sizes as resource[.group] to size', () => {
    expect([...parseWatchCacheSizes(['pods#0', 'deployments.apps#100'])]).toEqual([
      ['pods', 0],
      ['deployments.apps', 100],
    ]);
    expect(() => parseWatchCacheSizes(['pods#-1'])).toThrow('--watch-cache-sizes');
  });

  it('places built-in resources under the kvstore prefix whatever their group', () => {
    expect(defaultKeyPrefix('/registry', 'apps', 'deployments')).toBe('/registry/deployments/');
    expect(defaultKeyPrefix('/custom/', '', 'pods')).toBe('/custom/pods/');
  });
});

describe('createStore', () => {
  it('uses SQLite in the data directory with no servers, and leaves a resource uncached when its size is 0', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-create-'));
    const storage = createStore({
      dataDir,
      cachedResources: [
        {group: '', resource: 'pods'},
        {group: '', resource: 'events'},
      ],
      watchCacheSizes: ['events#0'],
    });
    try {
      expect(storage.store.engine).toBe('sqlite');
      expect(existsSync(join(dataDir, SQLITE_FILE))).toBe(true);
      await storage.waitSynced(2000);
      expect(storage.synced()).toBe(true);
      expect(storage.caches.flatMap((c) => c.status().map((s) => s.prefix))).toEqual(['/registry/pods/']);
      const revision = await storage.store.create('/registry/events/default/e', 'e');
      expect(await storage.store.get('/registry/events/default/e')).toMatchObject({modRevision: revision});
    } finally {
      await storage.close();
      rmSync(dataDir, {recursive: true, force: true});
    }
  });

  it('has no cache with --watch-cache=false', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'orch-create-'));
    const storage = createStore({dataDir, watchCache: false, cachedResources: [{group: '', resource: 'pods'}]});
    try {
      expect(storage.caches).toEqual([]);
      expect(storage.synced()).toBe(true);
    } finally {
      await storage.close();
      rmSync(dataDir, {recursive: true, force: true});
    }
  });
});
