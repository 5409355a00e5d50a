/**
 * Builds the auditor from the API server's audit options: the policy file, the log backend and the
 * webhook backend. Without a policy file nothing is audited (as upstream: the backends need a policy).
 * A bad policy or webhook configuration stops the start with the option and the problem.
 */
import {readFile} from 'node:fs/promises';
import {names} from '../../../api/names.js';
import {resolveClientConfig} from '../../../client/orchconfig.js';
import {RestClient} from '../../../client/rest-client.js';
import {parsePolicy} from './policy.js';
import {createBackend, splittingSink, type AuditBackend, type AuditMode, type BatchOptions} from './backend.js';
import {logSink} from './log-sink.js';
import {webhookSink} from './webhook-sink.js';
import {Auditor, type AuditMetrics} from './request-audit.js';
import type {LogFormat} from './event.js';

export {Auditor, RequestAudit, type AuditMetrics} from './request-audit.js';

export interface TruncateOptions {
  enabled: boolean;
  maxEventBytes: number;
  maxBatchBytes: number;
}

export interface AuditConfig {
  policyFile?: string;
  log: {
    path?: string;
    format: LogFormat;
    mode: AuditMode;
    version: string;
    maxSizeMb: number;
    maxAgeDays: number;
    maxBackups: number;
    compress: boolean;
    batch: BatchOptions;
    truncate: TruncateOptions;
  };
  webhook: {
    configFile?: string;
    mode: AuditMode;
    version: string;
    initialBackoffMs: number;
    batch: BatchOptions;
    truncate: TruncateOptions;
  };
}

const WEBHOOK_TIMEOUT_MS = 30_000;

function checkVersion(option: string, version: string): void {
  const accepted = `${names().groups.audit}/v1`;
  if (version !== accepted) throw new Error(`--${option}: invalid value "${version}": the accepted value is ${accepted}`);
}

export async function createAuditor(c: AuditConfig, log: (message: string, ...kv: unknown[]) => void, metrics?: AuditMetrics): Promise<Auditor | undefined> {
  if (!c.policyFile) {
    if (c.log.path || c.webhook.configFile) log('Audit backends are configured but --audit-policy-file is not: nothing is audited');
    return undefined;
  }
  let text: string;
  try {
    text = await readFile(c.policyFile, 'utf8');
  } catch (error) {
    throw new Error(`--audit-policy-file: cannot read ${c.policyFile}: ${(error as Error).message}`);
  }
  const policy = parsePolicy(text, `--audit-policy-file ${c.policyFile}`);
  const backends: AuditBackend[] = [];
  const deps = (name: string) => ({
    onDrop: (n: number) => log('Audit buffer full: events dropped', 'backend', name, 'count', n),
    onError: (error: unknown) => log('Unable to write audit events', 'backend', name, 'err', error),
  });
  if (c.log.path) {
    checkVersion('audit-log-version', c.log.version);
    const sink = logSink({
      path: c.log.path,
      format: c.log.format,
      apiVersion: c.log.version,
      maxSizeMb: c.log.maxSizeMb,
      maxAgeDays: c.log.maxAgeDays,
      maxBackups: c.log.maxBackups,
      compress: c.log.compress,
      onError: (error) => log('Audit log error', 'path', c.log.path, 'err', error),
    });
    // The log writes line by line, so splitting its batches changes nothing a reader sees; applied for the option's sake.
    const batches = c.log.truncate.enabled ? splittingSink(sink, c.log.truncate.maxBatchBytes) : sink;
    backends.push(createBackend('log', batches, c.log.mode, c.log.batch, deps('log')));
  }
  if (c.webhook.configFile) {
    checkVersion('audit-webhook-version', c.webhook.version);
    let client: RestClient;
    try {
      const config = await resolveClientConfig({orchconfig: c.webhook.configFile});
      client = new RestClient({config, timeoutMs: WEBHOOK_TIMEOUT_MS, maxRetries: 0, userAgent: 'orch-apiserver/audit-webhook'});
    } catch (error) {
      throw new Error(`--audit-webhook-config-file ${c.webhook.configFile}: ${(error as Error).message}`);
    }
    const sink = webhookSink({
      apiVersion: c.webhook.version,
      initialBackoffMs: c.webhook.initialBackoffMs,
      post: async (list) => {
        await client.request({method: 'POST', path: '', body: list});
      },
    });
    const batches = c.webhook.truncate.enabled ? splittingSink(sink, c.webhook.truncate.maxBatchBytes) : sink;
    backends.push(createBackend('webhook', batches, c.webhook.mode, c.webhook.batch, deps('webhook')));
  }
  // One truncation limit for the events of all backends: the smallest enabled one.
  const limits = [c.log.path && c.log.truncate.enabled ? c.log.truncate.maxEventBytes : 0, c.webhook.configFile && c.webhook.truncate.enabled ? c.webhook.truncate.maxEventBytes : 0].filter((n) => n > 0);
  return new Auditor({policy, backends, log, metrics, truncateMaxEventBytes: limits.length ? Math.min(...limits) : undefined});
}
