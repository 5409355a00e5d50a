/**
 * Charging quota at admission (upstream's quotaEvaluator): writes to one namespace are checked in
 * batches, one batch per namespace at a time, against the quotas as stored; the usage the batch
 * adds is written to each quota's status with its resourceVersion as precondition. A conflict
 * (the controller or another server wrote meanwhile) re-reads the quotas that failed and checks
 * again, up to three times; then the writes still waiting fail with the last error. Every waiter is
 * denied unless its check passed and the status that counts it was written.
 */
import {ApiError, internalError} from '../../../../../api/status.js';
import type {JsonObject} from '../../../../../patch/types.js';
import type {Clock} from '../../../../shared/clock.js';
import type {QuotaEvaluator} from '../../../../shared/quota/evaluators.js';
import {equals, formatResourceList} from '../../../../shared/quota/resources.js';
import {checkRequest, quotaState, type LimitedResource, type QuotaRequest, type QuotaState} from './check.js';

/** Where quotas are read and their status written (the server's own registry). */
export interface QuotaAccess {
  list(namespace: string): Promise<JsonObject[]>;
  /** Writes the status; rejects with a 409 ApiError when the resourceVersion is stale. */
  updateStatus(quota: JsonObject): Promise<JsonObject>;
}

interface Waiter {
  request: QuotaRequest;
  evaluator: QuotaEvaluator;
  dryRun: boolean;
  /** undefined: admitted; DEFAULT_DENY: still waiting for its status write. */
  result: Error | undefined;
  finish: () => void;
}

const DEFAULT_DENY = new Error('DEFAULT DENY');
const RETRIES = 3;
/** Upstream's wait before answering "resource quota evaluation timed out". */
export const EVALUATION_TIMEOUT_MS = 10_000;

export class QuotaChargeQueue {
  /** Waiters per namespace not yet taken by a batch. */
  private readonly pending = new Map<string, Waiter[]>();
  private readonly running = new Set<string>();
  private closed = false;

  constructor(
    private readonly access: QuotaAccess,
    private readonly limited: readonly LimitedResource[],
    private readonly clock: Clock,
  ) {}

  /** Resolves when the write is admitted; rejects with the refusal. */
  async evaluate(request: QuotaRequest, evaluator: QuotaEvaluator, dryRun: boolean): Promise<void> {
    if (this.closed) throw internalError(new Error('resource quota evaluator is shutting down'));
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const waiter: Waiter = {request, evaluator, dryRun, result: DEFAULT_DENY, finish: () => undefined};
    const finished = new Promise<void>((resolve) => (waiter.finish = resolve));
    const timedOut = new Promise<'timeout'>((resolve) => (timer = this.clock.setTimeout(() => resolve('timeout'), EVALUATION_TIMEOUT_MS)));
    const list = this.pending.get(request.namespace) ?? [];
    list.push(waiter);
    this.pending.set(request.namespace, list);
    this.drain(request.namespace);
    const outcome = await Promise.race([finished, timedOut]);
    if (timer) this.clock.clearTimeout(timer);
    if (outcome === 'timeout') throw internalError(new Error('resource quota evaluation timed out'));
    if (waiter.result) throw waiter.result;
  }

  close(): void {
    this.closed = true;
  }

  /** Runs the namespace's next batch unless one is running (a write arriving meanwhile joins the batch after it). */
  private drain(namespace: string): void {
    if (this.running.has(namespace)) return;
    const batch = this.pending.get(namespace);
    if (!batch?.length) return;
    this.pending.delete(namespace);
    this.running.add(namespace);
    void this.runBatch(namespace, batch).finally(() => {
      for (const waiter of batch) waiter.finish();
      this.running.delete(namespace);
      this.drain(namespace);
    });
  }

  private async runBatch(namespace: string, batch: Waiter[]): Promise<void> {
    let quotas: QuotaState[];
    try {
      quotas = (await this.access.list(namespace)).map(quotaState);
    } catch (error) {
      for (const waiter of batch) waiter.result = asError(error);
      return;
    }
    if (quotas.length === 0 && this.limited.length === 0) {
      for (const waiter of batch) waiter.result = undefined;
      return;
    }
    await this.checkQuotas(namespace, quotas, batch, RETRIES);
  }

  /** Upstream's checkQuotas: check every waiter against a running copy, write what changed, retry on conflicts. */
  private async checkQuotas(namespace: string, start: QuotaState[], batch: Waiter[], retriesLeft: number): Promise<void> {
    let quotas = start;
    let changed = false;
    for (const waiter of batch) {
      // Waiters decided in an earlier round keep their answer.
      if (waiter.result !== DEFAULT_DENY) continue;
      let next: QuotaState[];
      try {
        next = checkRequest(quotas, waiter.request, waiter.evaluator, this.limited, this.clock.now());
      } catch (error) {
        waiter.result = asError(error);
        continue;
      }
      if (waiter.dryRun) {
        waiter.result = undefined;
        continue;
      }
      const chargesSomething = next.some((q, i) => !equals(q.used, quotas[i]!.used));
      if (!chargesSomething) waiter.result = undefined;
      else changed = true;
      quotas = next;
    }
    if (!changed) return;

    const failed: string[] = [];
    let lastError: Error | undefined;
    for (let i = 0; i < quotas.length; i++) {
      if (equals(quotas[i]!.used, start[i]!.used)) continue;
      try {
        await this.access.updateStatus(withUsed(quotas[i]!));
      } catch (error) {
        failed.push(quotas[i]!.name);
        lastError = asError(error);
      }
    }
    const undecided = batch.filter((w) => w.result === DEFAULT_DENY);
    if (failed.length === 0) {
      for (const waiter of undecided) waiter.result = undefined;
      return;
    }
    if (retriesLeft <= 0) {
      for (const waiter of undecided) waiter.result = lastError;
      return;
    }
    let fresh: QuotaState[];
    try {
      fresh = (await this.access.list(namespace)).map(quotaState).filter((q) => failed.includes(q.name));
    } catch {
      for (const waiter of undecided) waiter.result = lastError;
      return;
    }
    // Only the quotas whose write failed are checked again: the others already count these waiters.
    await this.checkQuotas(namespace, fresh, undecided, retriesLeft - 1);
  }
}

function withUsed(state: QuotaState): JsonObject {
  const status = {...(state.quota.status as JsonObject | undefined), used: formatResourceList(state.used)};
  return {...state.quota, status};
}

function asError(error: unknown): Error {
  if (error instanceof ApiError || error instanceof Error) return error;
  return new Error(String(error));
}
