/**
 * The audit log's group commit: lines of one turn of the event loop, and lines appended while a
 * write is in flight, leave in one write; each caller's promise settles with its own write (after
 * the bytes are stored, rejected when they are not); order kept; a real file and /dev/full for the
 * log sink and blocking-strict.
 */
import {describe, expect, it} from '@jest/globals';
import {EventEmitter} from 'node:events';
import {mkdtempSync, readFileSync, rmSync} from 'node:fs';
import {tmpdir} from 'node:os';
import {join} from 'node:path';
import {GroupCommitWriter} from '../../src/daemons/apiserver/audit/group-commit.js';
import {logSink} from '../../src/daemons/apiserver/audit/log-sink.js';
import {blockingBackend} from '../../src/daemons/apiserver/audit/backend.js';
import {Auditor} from '../../src/daemons/apiserver/audit/request-audit.js';
import {parsePolicy} from '../../src/daemons/apiserver/audit/policy.js';
import type {AuditEvent} from '../../src/daemons/apiserver/audit/event.js';

/** A writer whose writes complete when the test says so. */
function manualWriter() {
  const writes: string[] = [];
  const callbacks: Array<(error?: Error | null) => void> = [];
  return {
    writes,
    write: (text: string, done: (error?: Error | null) => void) => {
      writes.push(text);
      callbacks.push(done);
    },
    complete: (index: number, error?: Error) => callbacks[index]!(error),
  };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('audit group commit', () => {
  it('joins the lines of one turn into one write and settles every caller only when it completes', async () => {
    const out = manualWriter();
    const writer = new GroupCommitWriter(out.write);
    const settled: number[] = [];
    const promises = Array.from({length: 50}, (_, i) => writer.append(`line ${i}\n`).then(() => void settled.push(i)));
    expect(out.writes).toEqual([]);
    await turn();
    expect(out.writes).toEqual([Array.from({length: 50}, (_, i) => `line ${i}\n`).join('')]);
    await turn();
    expect(settled).toEqual([]); // the write has not completed: nobody is acknowledged
    out.complete(0);
    await Promise.all(promises);
    expect(settled).toHaveLength(50);
  });

  it('keeps one write in flight: lines appended meanwhile leave together, in order, right after it', async () => {
    const out = manualWriter();
    const writer = new GroupCommitWriter(out.write);
    const first = writer.append('a\n');
    await turn();
    const later = [writer.append('b\n'), writer.append('c\n')];
    await turn();
    const last = writer.append('d\n');
    await turn();
    expect(out.writes).toEqual(['a\n']);
    out.complete(0);
    await first;
    expect(out.writes).toEqual(['a\n', 'b\nc\nd\n']);
    out.complete(1);
    await Promise.all([...later, last]);
  });

  it('rejects the callers of a failed write only, and goes on with the next group', async () => {
    const out = manualWriter();
    const writer = new GroupCommitWriter(out.write);
    const failed = [writer.append('a\n'), writer.append('b\n')];
    await turn();
    const next = writer.append('c\n');
    out.complete(0, new Error('disk full'));
    for (const p of failed) await expect(p).rejects.toThrow('disk full');
    expect(out.writes).toEqual(['a\nb\n', 'c\n']);
    out.complete(1);
    await expect(next).resolves.toBeUndefined();
  });

  it('drains: resolves once everything appended so far is written', async () => {
    const out = manualWriter();
    const writer = new GroupCommitWriter(out.write);
    await writer.drained(); // nothing pending
    void writer.append('a\n');
    let drained = false;
    const d = writer.drained().then(() => (drained = true));
    await turn();
    void writer.append('b\n');
    out.complete(0);
    await turn();
    expect(drained).toBe(false);
    out.complete(1);
    await d;
    expect(out.writes).toEqual(['a\n', 'b\n']);
  });
});

describe('audit log sink with group commit', () => {
  const event = (id: string, stage: AuditEvent['stage']) => ({kind: 'Event', apiVersion: 'audit.orch.io/v1', level: 'Metadata', auditID: id, stage, requestURI: '/', verb: 'get', user: {username: 'u'}, requestReceivedTimestamp: 't', stageTimestamp: 't'}) as AuditEvent;

  for (const maxSizeMb of [0, 1]) {
    it(`stores every event of many concurrent writers before acknowledging it (${maxSizeMb ? 'rotating stream' : 'plain file'})`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'orch-audit-group-'));
      try {
        const path = join(dir, 'audit.log');
        const sink = logSink({path, format: 'json', apiVersion: 'audit.orch.io/v1', maxSizeMb, maxAgeDays: 0, maxBackups: 0, compress: false});
        const ids = Array.from({length: 300}, (_, i) => `id-${i}`);
        const seen = (id: string) => readFileSync(path, 'utf8').includes(`"auditID":"${id}","stage":"ResponseComplete"`);
        // Each writer: its first stage, then (once acknowledged) its last; at its acknowledgement its line is in the file.
        const missing: string[] = [];
        await Promise.all(
          ids.map(async (id, i) => {
            if (i % 3) await new Promise((r) => setTimeout(r, i % 7));
            await sink.write([event(id, 'RequestReceived')]);
            await sink.write([event(id, 'ResponseComplete')]);
            if (!seen(id)) missing.push(id);
          }),
        );
        expect(missing).toEqual([]);
        await sink.close();
        const events = readFileSync(path, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as AuditEvent);
        expect(events).toHaveLength(600);
        for (const id of ids) expect(events.filter((e) => e.auditID === id).map((e) => e.stage)).toEqual(['RequestReceived', 'ResponseComplete']);
      } finally {
        rmSync(dir, {recursive: true, force: true});
      }
    });
  }

  it('blocking-strict refuses the request whose event the log cannot store (/dev/full); blocking lets it through', async () => {
    const policy = parsePolicy('apiVersion: audit.orch.io/v1\nkind: Policy\nrules:\n  - level: Metadata\n');
    const request = () => Object.assign(new EventEmitter(), {method: 'GET', url: '/api/v1/namespaces/a/pods/p', headers: {}, socket: {remoteAddress: '127.0.0.1'}});
    const response = () => Object.assign(new EventEmitter(), {statusCode: 200, setHeader: () => undefined, getHeader: () => undefined, end: () => undefined});
    const errors: unknown[] = [];
    for (const mode of ['blocking-strict', 'blocking'] as const) {
      const sink = logSink({path: '/dev/full', format: 'json', apiVersion: 'audit.orch.io/v1', maxSizeMb: 0, maxAgeDays: 0, maxBackups: 0, compress: false, onError: (e) => void errors.push(e)});
      const logs: string[] = [];
      const auditor = new Auditor({policy, backends: [blockingBackend('log', sink, mode)], log: (m) => void logs.push(m)});
      const results = await Promise.all(Array.from({length: 5}, () => auditor.begin(request() as never, response() as never, {name: 'u', groups: []})));
      if (mode === 'blocking-strict') expect(results).toEqual([false, false, false, false, false]);
      else for (const r of results) expect(r).toBeTruthy();
      await auditor.shutdown();
      if (mode === 'blocking-strict') expect(logs.filter((m) => m === 'Unable to write an audit event')).toHaveLength(5);
    }
    expect(String(errors[0])).toMatch(/ENOSPC/);
  });
});
