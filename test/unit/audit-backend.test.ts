import {describe, expect, it} from '@jest/globals';
import {EventEmitter} from 'node:events';
import {batchBackend, blockingBackend, type AuditSink} from '../../src/daemons/apiserver/audit/backend.js';
import {Auditor} from '../../src/daemons/apiserver/audit/request-audit.js';
import {webhookSink} from '../../src/daemons/apiserver/audit/webhook-sink.js';
import {parsePolicy} from '../../src/daemons/apiserver/audit/policy.js';
import type {AuditEvent} from '../../src/daemons/apiserver/audit/event.js';

const ev = (id: string) => ({auditID: id}) as AuditEvent;

function recordingSink(fail = false): AuditSink & {batches: string[][]; closed: boolean} {
  const sink = {
    batches: [] as string[][],
    closed: false,
    async write(events: AuditEvent[]) {
      if (fail) throw new Error('disk full');
      sink.batches.push(events.map((e) => e.auditID));
    },
    async close() {
      sink.closed = true;
    },
  };
  return sink;
}

describe('audit batch backend', () => {
  it('sends full batches at once, holds short ones until max-wait, flushes everything on shutdown', async () => {
    const sink = recordingSink();
    const backend = batchBackend('log', sink, {bufferSize: 10, maxBatchSize: 2, maxWaitMs: 3_600_000}, {onDrop: () => undefined, onError: () => undefined});
    await backend.process([ev('a'), ev('b'), ev('c')]);
    await new Promise((r) => setTimeout(r, 20));
    expect(sink.batches).toEqual([['a', 'b']]);
    await backend.shutdown();
    expect(sink.batches).toEqual([['a', 'b'], ['c']]);
    expect(sink.closed).toBe(true);
  });

  it('drops events past the buffer size and says how many', async () => {
    const sink = recordingSink();
    let dropped = 0;
    const backend = batchBackend('log', sink, {bufferSize: 2, maxBatchSize: 100, maxWaitMs: 3_600_000}, {onDrop: (n) => (dropped += n), onError: () => undefined});
    await backend.process([ev('a'), ev('b'), ev('c'), ev('d')]);
    expect(dropped).toBe(2);
    await backend.shutdown();
    expect(sink.batches).toEqual([['a', 'b']]);
  });

  it('throttles batches to qps after the burst', async () => {
    const sink = recordingSink();
    let now = 0;
    const backend = batchBackend('webhook', sink, {bufferSize: 100, maxBatchSize: 1, maxWaitMs: 0, throttleQps: 1, throttleBurst: 2}, {onDrop: () => undefined, onError: () => undefined, now: () => now});
    await backend.process([ev('a'), ev('b'), ev('c')]);
    await new Promise((r) => setTimeout(r, 50));
    // Two go out in the burst; the third waits for a token (a second of the injected clock).
    expect(sink.batches).toEqual([['a'], ['b']]);
    now = 1000;
    await backend.shutdown();
    expect(sink.batches).toEqual([['a'], ['b'], ['c']]);
  });
});

describe('audit webhook retries', () => {
  it('retries with growing backoff, then gives the batch up', async () => {
    const waits: number[] = [];
    let calls = 0;
    const sink = webhookSink({apiVersion: 'audit.orch.io/v1', initialBackoffMs: 100, sleep: async (ms) => void waits.push(ms), post: async () => {
      calls++;
      throw new Error('connection refused');
    }});
    await expect(sink.write([ev('a')])).rejects.toThrow('connection refused');
    expect(calls).toBe(5);
    expect(waits).toEqual([100, 150, 225, 338]);
  });
});

describe('auditor', () => {
  const policy = parsePolicy('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
  const request = () => Object.assign(new EventEmitter(), {method: 'GET', url: '/api/v1/namespaces/a/pods?watch=true', headers: {'user-agent': 'test', 'x-forwarded-for': '10.0.0.1, 10.0.0.2'}, socket: {remoteAddress: '::ffff:127.0.0.1'}});
  const response = () => {
    const headers: Record<string, unknown> = {};
    return Object.assign(new EventEmitter(), {
      statusCode: 200,
      headers,
      setHeader: (k: string, v: unknown) => void (headers[k] = v),
      getHeader: (k: string) => headers[k],
      writeHead(code: number) {
        this.statusCode = code;
        return this;
      },
      write: () => true,
      end() {
        return this;
      },
    });
  };

  it('refuses a request whose RequestReceived event a blocking-strict backend cannot store', async () => {
    const logs: string[] = [];
    const auditor = new Auditor({policy, backends: [blockingBackend('log', recordingSink(true), 'blocking-strict')], log: (m) => void logs.push(m)});
    expect(await auditor.begin(request() as never, response() as never, {name: 'u', groups: []})).toBe(false);
    expect(logs).toContain('Unable to write an audit event');
    const lenient = new Auditor({policy, backends: [blockingBackend('log', recordingSink(true), 'blocking')], log: () => undefined});
    expect(await lenient.begin(request() as never, response() as never, {name: 'u', groups: []})).toBeTruthy();
  });

  it('emits ResponseStarted for a watch when its headers go out, with source IPs and the Audit-ID header', async () => {
    const events: AuditEvent[] = [];
    const sink: AuditSink = {write: async (e) => void events.push(...e), close: async () => undefined};
    const auditor = new Auditor({policy, backends: [blockingBackend('log', sink, 'blocking')], log: () => undefined});
    const res = response();
    const audit = await auditor.begin(request() as never, res as never, {name: 'u', groups: ['g']});
    expect(audit).toBeTruthy();
    res.writeHead(200);
    res.end();
    await new Promise((r) => setTimeout(r, 10));
    expect(events.map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseStarted', 'ResponseComplete']);
    expect(events[0]).toMatchObject({verb: 'watch', sourceIPs: ['10.0.0.1', '10.0.0.2', '127.0.0.1'], userAgent: 'test', objectRef: {resource: 'pods', namespace: 'a'}});
    expect(res.headers['Audit-ID']).toBe(events[0].auditID);
  });
});

describe('audit batch splitting', () => {
  it('splits a batch over the byte limit, keeping order and every event', async () => {
    const {splittingSink} = await import('../../src/daemons/apiserver/audit/backend.js');
    const sink = recordingSink();
    const one = Buffer.byteLength(JSON.stringify(ev('a')));
    await splittingSink(sink, one * 2).write([ev('a'), ev('b'), ev('c'), ev('d'), ev('e')]);
    expect(sink.batches).toEqual([['a', 'b'], ['c', 'd'], ['e']]);
  });
});
