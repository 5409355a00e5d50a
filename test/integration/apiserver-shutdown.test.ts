/**
 * The shutdown sequence of the seed's state table on a real server: with --shutdown-delay-duration,
 * /readyz fails at once through the `shutdown` check while ordinary requests are still served;
 * then the server stops listening and stop() resolves.
 */
import {describe, expect, it} from '@jest/globals';
import {startApiServer} from '../helpers/apiserver.js';

describe('graceful shutdown', () => {
  it('fails readiness at once during the shutdown delay, keeps serving, then stops', async () => {
    const s = await startApiServer({engine: 'sqlite', config: {shutdownDelayMs: 1500}});
    try {
      expect((await s.client.get('/readyz')).status).toBe(200);
      const stopping = s.server.stop();
      const started = Date.now();
      await new Promise((r) => setTimeout(r, 100));

      const ready = await s.client.get('/readyz?verbose');
      expect(ready.status).toBe(500);
      expect(ready.text).toContain('[-]shutdown failed: reason withheld');
      expect(ready.text.trimEnd().endsWith('readyz check failed')).toBe(true);
      // Liveness and ordinary requests still succeed while the delay runs.
      expect((await s.client.get('/livez')).status).toBe(200);
      expect((await s.client.get('/api/v1/namespaces/default')).status).toBe(200);
      expect(s.server.snapshot().shutdown.phase).toBe('delaying termination');

      await stopping;
      expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
      expect(s.server.snapshot().shutdown.phase).toBe('stopped');
      await expect(s.client.get('/readyz', {timeoutMs: 1000})).rejects.toThrow();
    } finally {
      await s.stop().catch(() => undefined);
    }
  }, 30_000);
});
