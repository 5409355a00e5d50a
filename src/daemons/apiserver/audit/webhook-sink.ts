/**
 * The audit webhook (`--audit-webhook-config-file`, a client-configuration file as upstream's): each
 * batch is POSTed as an EventList; a failed call is retried with upstream's backoff
 * (`--audit-webhook-initial-backoff`, factor 1.5, 5 attempts) before the batch is given up.
 */
import type {AuditEvent} from './event.js';
import type {AuditSink} from './backend.js';

export interface WebhookSinkOptions {
  post: (eventList: unknown) => Promise<void>;
  apiVersion: string;
  initialBackoffMs: number;
  attempts?: number;
  sleep?: (ms: number) => Promise<void>;
}

export function webhookSink(o: WebhookSinkOptions): AuditSink {
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const attempts = o.attempts ?? 5;
  return {
    async write(events: AuditEvent[]) {
      const list = {kind: 'EventList', apiVersion: o.apiVersion, metadata: {}, items: events.map((e) => ({...e, apiVersion: o.apiVersion}))};
      let delay = o.initialBackoffMs;
      for (let attempt = 1; ; attempt++) {
        try {
          await o.post(list);
          return;
        } catch (error) {
          if (attempt >= attempts) throw error;
          await sleep(delay);
          delay = Math.round(delay * 1.5);
        }
      }
    },
    async close() {},
  };
}
