/**
 * The event recorder against a real REST API (startTestApi on loopback): what lands in the API
 * server, how repeats are counted, how the rate limit and the queue bound behave (fake limiter clock).
 */
import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {EventRecorder, type EventRecorderOptions} from '../../src/client/event-recorder.js';
import type {LimiterClock} from '../../src/client/rate-limiter.js';
import {RestClient} from '../../src/client/rest-client.js';
import {startTestApi, type TestApi} from '../helpers/memory-store.js';

/** A limiter clock that moves only when the test says so. */
class FakeLimiterClock implements LimiterClock {
  time = 0;
  private sleepers: {until: number; wake: () => void}[] = [];
  now(): number {
    return this.time;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((wake) => this.sleepers.push({until: this.time + ms, wake}));
  }
  async advance(ms: number): Promise<void> {
    this.time += ms;
    const due = this.sleepers.filter((s) => s.until <= this.time);
    this.sleepers = this.sleepers.filter((s) => s.until > this.time);
    for (const s of due) s.wake();
    await new Promise((r) => setTimeout(r, 50));
  }
}

const pod = {apiVersion: 'v1', kind: 'Pod', name: 'web', namespace: 'default', uid: 'u-1', fieldPath: 'spec.containers{app}'};
const settle = () => new Promise((r) => setTimeout(r, 100));

describe('EventRecorder', () => {
  let api: TestApi;
  let client: RestClient;
  let wall: number;
  const warnings: string[] = [];
  const recorder = (options: Partial<EventRecorderOptions> = {}) =>
    new EventRecorder({
      client, source: {component: 'agent', host: 'node-1'}, qps: 0, burst: 10, now: () => wall,
      log: {warning: (m, ...kv) => warnings.push(`${m} ${kv.join(' ')}`)}, ...options,
    });
  const events = async (namespace = 'default') =>
    ((await client.request<{items: Record<string, any>[]}>({method: 'GET', path: `/api/v1/namespaces/${namespace}/events`})).body as {items: Record<string, any>[]}).items;

  beforeEach(async () => {
    api = await startTestApi();
    client = new RestClient({config: {server: api.url, insecure: false}});
    wall = Date.parse('2026-11-22T10:00:00Z');
    warnings.length = 0;
  });
  afterEach(async () => {
    await api.close();
  });

  it('writes an event about a container with its source, and one about a node in default', async () => {
    const r = recorder();
    r.event(pod, 'Normal', 'Started', 'Started container app');
    r.event({kind: 'Node', name: 'node-1', uid: 'node-1'}, 'Normal', 'NodeReady', 'Node node-1 status is now: NodeReady');
    await r.flush();
    const [started, ready] = (await events()).sort((a, b) => a.reason.localeCompare(b.reason)).reverse();
    expect(started).toMatchObject({
      involvedObject: pod, reason: 'Started', message: 'Started container app', type: 'Normal', count: 1,
      source: {component: 'agent', host: 'node-1'}, firstTimestamp: '2026-11-22T10:00:00Z', lastTimestamp: '2026-11-22T10:00:00Z',
      reportingComponent: 'agent', reportingInstance: 'node-1',
    });
    expect(started!.metadata.name).toMatch(/^web\.[0-9a-f]+$/);
    expect(ready).toMatchObject({involvedObject: {kind: 'Node', name: 'node-1'}, reason: 'NodeReady', metadata: {namespace: 'default'}});
  });

  it('counts a repeated event on the first one instead of creating another', async () => {
    const r = recorder();
    r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container app');
    await r.flush();
    wall += 30_000;
    r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container app');
    r.event(pod, 'Warning', 'BackOff', 'Back-off restarting failed container app');
    r.event(pod, 'Warning', 'Unhealthy', 'Liveness probe failed');
    await r.flush();
    const all = await events();
    expect(all).toHaveLength(2);
    expect(all.find((e) => e.reason === 'BackOff')).toMatchObject({count: 3, firstTimestamp: '2026-11-22T10:00:00Z', lastTimestamp: '2026-11-22T10:00:30Z'});
    expect(r.written).toBe(4);
  });

  it('writes a repeated event again, with its count, when the first one has expired', async () => {
    const r = recorder();
    r.event(pod, 'Normal', 'Killing', 'Stopping container app');
    await r.flush();
    const [first] = await events();
    await client.request({method: 'DELETE', path: `/api/v1/namespaces/default/events/${first!.metadata.name}`});
    r.event(pod, 'Normal', 'Killing', 'Stopping container app');
    await r.flush();
    expect(await events()).toEqual([expect.objectContaining({reason: 'Killing', count: 2})]);
  });

  it('writes no faster than qps after a burst', async () => {
    const clock = new FakeLimiterClock();
    const r = recorder({qps: 1, burst: 2, limiterClock: clock});
    for (let i = 0; i < 4; i++) r.event({...pod, name: `p${i}`}, 'Normal', 'Started', `event ${i}`);
    await settle();
    expect(await events()).toHaveLength(2);
    await clock.advance(1000);
    expect(await events()).toHaveLength(3);
    await clock.advance(1000);
    expect(await events()).toHaveLength(4);
  });

  it('drops events beyond the queue bound and says so once', async () => {
    const clock = new FakeLimiterClock();
    const r = recorder({qps: 1, burst: 1, limiterClock: clock, maxQueued: 2});
    for (let i = 0; i < 6; i++) r.event({...pod, name: `p${i}`}, 'Normal', 'Started', `event ${i}`);
    // One is being written, two wait in the queue, three are dropped.
    expect(r.dropped).toBe(3);
    expect(warnings.filter((w) => w.startsWith('Event queue full'))).toHaveLength(1);
    await clock.advance(1000);
    await clock.advance(1000);
    await r.flush();
    expect((await events()).map((e) => e.message).sort()).toEqual(['event 0', 'event 1', 'event 2']);
  });

  it('logs and drops an event the server refuses, and goes on with the next', async () => {
    const r = recorder();
    r.event({...pod, namespace: 'missing'}, 'Normal', 'Started', 'nowhere');
    r.event(pod, 'Normal', 'Started', 'here');
    await r.flush();
    expect(warnings).toEqual([expect.stringMatching(/^Could not record an event reason Started object Pod\/web err .*missing/)]);
    expect((await events()).map((e) => e.message)).toEqual(['here']);
  });

  it('retries a write the server did not answer, then gives up', async () => {
    const down = new RestClient({config: {server: 'http://127.0.0.1:1', insecure: false}, maxRetries: 0});
    const clock = new FakeLimiterClock();
    const r = recorder({client: down, maxAttempts: 3, retryDelayMs: 10_000, limiterClock: clock});
    r.event(pod, 'Normal', 'Started', 'lost');
    await settle();
    expect(warnings).toEqual([]);
    await clock.advance(10_000);
    await clock.advance(10_000);
    await r.flush();
    expect(warnings).toEqual([expect.stringMatching(/^Could not record an event reason Started/)]);
  });

  it('records nothing after close', async () => {
    const r = recorder();
    r.close();
    r.event(pod, 'Normal', 'Started', 'late');
    await r.flush();
    expect(await events()).toEqual([]);
  });
});
