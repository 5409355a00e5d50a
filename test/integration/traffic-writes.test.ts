/**
 * Writes over every connection kind a client uses, with bodies below and above one TLS record
 * (16 KiB), from a client in its own process (test/helpers/traffic-load.mjs): every write is
 * acknowledged or refused with a Status, and a final list holds exactly the acknowledged ones.
 *
 * Issue 18: HTTP/1.1 keep-alive writes over 16 KiB were reset (ECONNRESET) by Node's HTTP/1 parser
 * pausing while TLS kept feeding it (see parseHttp1FromStream in src/daemons/shared/serving/secure-serving.ts).
 */
import {afterAll, beforeAll, describe, expect, it} from '@jest/globals';
import {type InProcessServer, startApiServer} from '../helpers/apiserver.js';
import {accountFor, listNames, runLoad, summarize, type LoadOptions} from '../helpers/traffic.js';

const NS = 'default';
const SIZES = [100, 20_000, 200_000];

describe('writes over HTTP/1.1 and HTTP/2', () => {
  let api: InProcessServer;

  beforeAll(async () => {
    api = await startApiServer({engine: 'sqlite'});
  });
  afterAll(async () => {
    await api?.stop();
  });

  // The reproduction of issue 18 (HTTP/1.1 keep-alive on 1 and 4 connections), scaled down; the other
  // kinds and formats once each. bench/traffic.mjs runs the whole matrix.
  const cases: [string, Omit<LoadOptions, 'orchconfig' | 'prefix'>][] = [
    ['HTTP/1.1 keep-alive, 1 connection', {protocol: 'http1', connections: 1, count: 60, sizes: SIZES}],
    ['HTTP/1.1 keep-alive, 4 connections', {protocol: 'http1', connections: 4, count: 60, sizes: SIZES}],
    ['HTTP/1.1 Connection: close', {protocol: 'http1-close', connections: 2, count: 15, sizes: SIZES}],
    ['HTTP/2, 2 connections x 16 streams', {protocol: 'h2', connections: 2, concurrency: 32, count: 60, sizes: SIZES}],
    ['HTTP/1.1 keep-alive protobuf bodies', {protocol: 'http1', connections: 2, count: 30, sizes: [100, 20_000], format: 'protobuf'}],
    ['HTTP/2 with watches open on the same connections', {protocol: 'h2', connections: 2, concurrency: 16, count: 40, sizes: [100, 20_000], watch: true}],
    ['HTTP/1.1 keep-alive with a watch from the same pool', {protocol: 'http1', connections: 2, count: 40, sizes: [100, 20_000], watch: true}],
  ];

  it.each(cases)('%s: every write acknowledged, none lost', async (title, load) => {
    const prefix = `w${cases.findIndex(([t]) => t === title)}`;
    const results = await runLoad({...load, orchconfig: api.orchconfigPath, prefix, namespace: NS});
    const summary = summarize(results);
    for (const r of results) {
      expect({summary, failures: r.failures, unknown: r.unknown.length, refused: r.refused}).toEqual({summary, failures: 0, unknown: 0, refused: []});
      expect(r.acknowledged).toHaveLength(load.count);
      if (load.watch) expect(r.watchMissing).toEqual([]);
    }
    const listed = await listNames(api.client, NS, `${prefix}-`);
    expect(accountFor(results, listed)).toEqual({lost: [], appliedThoughRefused: [], duplicated: []});
    expect(listed).toHaveLength(load.count * load.sizes.length);
  }, 90_000);
});
