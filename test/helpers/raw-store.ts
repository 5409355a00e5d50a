/** The value of a key as the engine holds it, below the API server: straight from the SQLite file, or from etcd with a client of our own. */
import {join} from 'node:path';
import Database from 'better-sqlite3';
import {EtcdStore, SQLITE_FILE} from '../../src/daemons/apiserver/storage/index.js';
import type {Engine} from './apiserver.js';

export async function rawStoredValue(engine: Engine, dataDir: string, etcdEndpoint: string | undefined, key: string): Promise<string | undefined> {
  if (engine === 'sqlite') {
    const db = new Database(join(dataDir, SQLITE_FILE), {readonly: true});
    try {
      return (db.prepare('SELECT value FROM kv WHERE key = ?').get(key) as {value: string} | undefined)?.value;
    } finally {
      db.close();
    }
  }
  const store = new EtcdStore({endpoints: [etcdEndpoint!]});
  try {
    return (await store.get(key))?.value;
  } finally {
    await store.close();
  }
}
