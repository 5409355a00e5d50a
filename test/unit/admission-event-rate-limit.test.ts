/**
 * EventRateLimit: its configuration's validation (upstream's messages), the bucket key of each limit
 * type, token buckets on a fake clock (burst, refill, one bucket per key, LRU eviction giving a
 * full bucket back), and the plugin in the REST API refusing a burst of events with a 429.
 */
import {afterEach, beforeEach, describe, expect, it} from '@jest/globals';
import {names} from '../../src/api/names.js';
import {FakeClock} from '../../src/daemons/shared/clock.js';
import {
  EventRateLimit, limitKey, parseEventRateLimitConfiguration, type EventLimit,
} from '../../src/daemons/apiserver/admission/plugins/event-rate-limit.js';
import type {AdmissionAttributes} from '../../src/daemons/apiserver/admission/interfaces.js';
import {ResourceRegistry} from '../../src/api/resources.js';
import type {JsonObject} from '../../src/patch/types.js';
import {call, startTestApi, type TestApi} from '../helpers/memory-store.js';

const apiVersion = () => `eventratelimit.admission.${names().domain}/v1alpha1`;
const config = (limits: unknown): JsonObject => ({apiVersion: apiVersion(), kind: 'Configuration', limits} as JsonObject);

describe('configuration', () => {
  it('defaults cacheSize to 4096', () => {
    expect(parseEventRateLimitConfiguration(config([{type: 'Namespace', qps: 5, burst: 10}]))).toEqual([{type: 'Namespace', qps: 5, burst: 10, cacheSize: 4096}]);
  });

  it.each([
    ['no limits', config([]), 'limits: Invalid value: null: must not be empty'],
    ['an unknown type', config([{type: 'Pod', qps: 1, burst: 1}]), 'limits[0].type: Unsupported value: "Pod": supported values: "Server", "Namespace", "User", "SourceAndObject"'],
    ['qps zero', config([{type: 'Server', qps: 0, burst: 1}]), 'limits[0].qps: Invalid value: 0: must be positive'],
    ['burst negative', config([{type: 'User', qps: 1, burst: -1}]), 'limits[0].burst: Invalid value: -1: must be positive'],
    ['cacheSize negative', config([{type: 'User', qps: 1, burst: 1, cacheSize: -2}]), 'limits[0].cacheSize: Invalid value: -2: must not be negative'],
    ['a misspelt field', config([{type: 'User', qps: 1, burts: 1}]), 'unknown field "limits[0].burts"'],
    ['a wrong apiVersion', {apiVersion: 'v1', kind: 'Configuration', limits: [{type: 'Server', qps: 1, burst: 1}]}, 'no kind "Configuration" is registered for version "v1"'],
  ])('%s is a start error naming the plugin and the field', (_name, body, message) => {
    expect(() => parseEventRateLimitConfiguration(body as JsonObject, '/etc/erl.yaml')).toThrow('admission plugin EventRateLimit: /etc/erl.yaml: ');
    expect(() => parseEventRateLimitConfiguration(body as JsonObject)).toThrow(message);
  });

  it('a missing configuration is an error: upstream needs at least one limit', () => {
    expect(() => parseEventRateLimitConfiguration(undefined)).toThrow('a configuration is required');
  });
});

const EVENT = new ResourceRegistry().lookup('', 'v1', 'events')!;
function eventWrite(namespace: string, user: string, object: JsonObject = {}): AdmissionAttributes {
  return {operation: 'CREATE', resource: EVENT, subresource: '', namespace, name: 'e', object, user: {name: user, groups: []}, dryRun: false};
}

describe('bucket keys', () => {
  const event = {source: {component: 'kubelet', host: 'n1'}, involvedObject: {kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u1', apiVersion: 'v1'}};
  it.each([
    ['Server', ''],
    ['Namespace', 'ns'],
    ['User', 'alice'],
    ['SourceAndObject', 'kubeletn1Podnspu1v1'],
  ] as const)('%s', (type, key) => {
    expect(limitKey(type, eventWrite('ns', 'alice', event))).toBe(key);
  });
});

describe('token buckets', () => {
  function accepted(plugin: EventRateLimit, attributes: AdmissionAttributes): boolean | string {
    try {
      plugin.validate(attributes);
      return true;
    } catch (error) {
      return `${(error as {code: number}).code} ${(error as Error).message}`;
    }
  }
  const limit = (type: EventLimit['type'], qps: number, burst: number, cacheSize = 4096): EventLimit => ({type, qps, burst, cacheSize});

  it('a burst passes, the next is refused, and the bucket refills at qps', async () => {
    const clock = new FakeClock(1_000_000);
    const plugin = new EventRateLimit([limit('Server', 2, 3)], clock);
    const write = eventWrite('ns', 'u');
    expect([1, 2, 3].map(() => accepted(plugin, write))).toEqual([true, true, true]);
    expect(accepted(plugin, write)).toBe('429 Too many requests: limit reached on type Server for key ');
    await clock.advance(499);
    expect(accepted(plugin, write)).not.toBe(true);
    await clock.advance(1);
    expect(accepted(plugin, write)).toBe(true);
  });

  it('one bucket per namespace; the least recently used is forgotten past cacheSize', () => {
    const clock = new FakeClock(0);
    const plugin = new EventRateLimit([limit('Namespace', 1, 1, 2)], clock);
    expect(accepted(plugin, eventWrite('a', 'u'))).toBe(true);
    expect(accepted(plugin, eventWrite('b', 'u'))).toBe(true);
    expect(accepted(plugin, eventWrite('a', 'u'))).toBe('429 Too many requests: limit reached on type Namespace for key a');
    // c pushes b out (a was used last); b comes back with a full bucket.
    expect(accepted(plugin, eventWrite('c', 'u'))).toBe(true);
    expect(accepted(plugin, eventWrite('b', 'u'))).toBe(true);
  });

  it('every limit takes its token; other kinds are not limited', () => {
    const plugin = new EventRateLimit([limit('User', 1, 1), limit('Server', 1, 100)], new FakeClock(0));
    expect(accepted(plugin, eventWrite('ns', 'alice'))).toBe(true);
    expect(accepted(plugin, eventWrite('ns', 'alice'))).toBe('429 Too many requests: limit reached on type User for key alice');
    expect(accepted(plugin, eventWrite('ns', 'bob'))).toBe(true);
    const pods = new ResourceRegistry().lookup('', 'v1', 'pods')!;
    for (let i = 0; i < 5; i++) expect(accepted(plugin, {...eventWrite('ns', 'alice'), resource: pods})).toBe(true);
  });
});

describe('EventRateLimit in the REST API', () => {
  let api: TestApi;
  beforeEach(async () => {
    const plugin = new EventRateLimit(parseEventRateLimitConfiguration(config([{type: 'Namespace', qps: 1, burst: 5}])), new FakeClock(0));
    api = await startTestApi({admissionPlugins: [plugin]});
  });
  afterEach(() => api.close());

  it('refuses a burst of events past the bucket with a 429; other namespaces keep theirs', async () => {
    const event = (i: number) => ({
      apiVersion: 'v1', kind: 'Event', metadata: {name: `e${i}`}, involvedObject: {kind: 'Pod', name: 'p', namespace: 'default'}, reason: 'Test', message: 'm',
    });
    const replies = [];
    for (let i = 0; i < 8; i++) replies.push(await call(api, 'POST', '/api/v1/namespaces/default/events', {body: event(i)}));
    expect(replies.map((r) => r.status)).toEqual([201, 201, 201, 201, 201, 429, 429, 429]);
    expect(replies[5]!.body).toMatchObject({kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'Too many requests: limit reached on type Namespace for key default'});
    expect((await call(api, 'GET', '/api/v1/namespaces/default/events')).body.items).toHaveLength(5);
    const other = await call(api, 'POST', `/api/v1/namespaces/${names().namespaces.system}/events`, {body: event(9)});
    expect(other.status).toBe(201);
  });
});
