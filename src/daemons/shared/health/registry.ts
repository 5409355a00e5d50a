/**
 * The three health roots of the API server and their checks (health.md §1, §4, §5):
 *
 * | added with             | healthz | livez                | readyz |
 * |------------------------|---------|----------------------|--------|
 * | addHealthChecks        | yes     | yes                  | yes    |
 * | addReadyzChecks        |         |                      | yes    |
 * | addLivezChecks         |         | yes                  |        |
 * | addBootSequenceChecks  | yes     | yes, grace-delayed   | yes    |
 * | setShutdownCheck       |         |                      | yes, always last |
 *
 * Checks keep their registration order; a root with no checks serves a single `ping`. Boot
 * sequence checks (the `poststarthook/*` ones) pass on livez without running until
 * --livez-grace-period has passed since they were registered.
 */
import {systemClock, type Clock} from '../clock.js';
import {pingCheck, type HealthCheck, type HealthLogger} from './check.js';
import {evaluateRoot, type RootResult} from './render.js';

export type HealthRoot = 'healthz' | 'livez' | 'readyz';
export const HEALTH_ROOTS: readonly HealthRoot[] = ['healthz', 'livez', 'readyz'];

export interface HealthRegistryOptions {
  clock?: Clock;
  /** --livez-grace-period in ms (default 0). */
  livezGracePeriodMs?: number;
  /** Receives the failure and exclusion log lines (default: discarded). */
  logger?: HealthLogger;
  /** Called once, the first time /readyz succeeds (upstream's HasBeenReady signal). */
  onFirstReady?: () => void;
}

export class HealthRegistry {
  private readonly clock: Clock;
  private readonly livezGracePeriodMs: number;
  readonly logger: HealthLogger;
  private readonly lists: Record<HealthRoot, HealthCheck[]> = {healthz: [], livez: [], readyz: []};
  private shutdownCheck: HealthCheck | undefined;
  private onFirstReady: (() => void) | undefined;

  constructor(options: HealthRegistryOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.livezGracePeriodMs = options.livezGracePeriodMs ?? 0;
    if (this.livezGracePeriodMs < 0) throw new Error('--livez-grace-period can not be a negative value');
    this.logger = options.logger ?? (() => {});
    this.onFirstReady = options.onFirstReady;
  }

  addHealthChecks(...checks: HealthCheck[]): void {
    for (const check of checks) for (const root of HEALTH_ROOTS) this.add(root, check);
  }

  addReadyzChecks(...checks: HealthCheck[]): void {
    for (const check of checks) this.add('readyz', check);
  }

  addLivezChecks(...checks: HealthCheck[]): void {
    for (const check of checks) this.add('livez', check);
  }

  /** Start-up steps: failing on healthz and readyz until done, on livez only after the grace period. */
  addBootSequenceChecks(...checks: HealthCheck[]): void {
    for (const check of checks) {
      this.add('healthz', check);
      this.add('livez', delayedCheck(check, this.clock, this.clock.now() + this.livezGracePeriodMs));
      this.add('readyz', check);
    }
  }

  /** The readyz-only `shutdown` check; kept last whatever is added afterwards. */
  setShutdownCheck(check: HealthCheck): void {
    this.shutdownCheck = check;
  }

  /** The checks of a root, in the order their lines appear. */
  checks(root: HealthRoot): readonly HealthCheck[] {
    const list = root === 'readyz' && this.shutdownCheck ? [...this.lists.readyz, this.shutdownCheck] : this.lists[root];
    return list.length > 0 ? list : [pingCheck];
  }

  /** Runs a root's checks as a GET without parameters would (for the dashboard and `orch status`). */
  evaluate(root: HealthRoot, query: {verbose?: boolean; exclude?: readonly string[]} = {}): Promise<RootResult> {
    return evaluateRoot(root, this.checks(root), {verbose: query.verbose ?? false, exclude: query.exclude ?? []});
  }

  /** Called by the HTTP handler after each successful readyz. */
  notifyReady(): void {
    const notify = this.onFirstReady;
    this.onFirstReady = undefined;
    notify?.();
  }

  /** Registers the first-ready callback after construction (the lifecycle's HasBeenReady). */
  whenFirstReady(callback: () => void): void {
    this.onFirstReady = callback;
  }

  private add(root: HealthRoot, check: HealthCheck): void {
    if (this.lists[root].some((existing) => existing.name === check.name) || check.name === this.shutdownCheck?.name) {
      throw new Error(`health check "${check.name}" is already registered on /${root}`);
    }
    this.lists[root].push(check);
  }
}

/** Passes without running until `startAt` (strictly after it, the check runs), as upstream's delayedHealthCheck. */
function delayedCheck(check: HealthCheck, clock: Clock, startAt: number): HealthCheck {
  return {
    name: check.name,
    ...(check.group !== undefined ? {group: check.group} : {}),
    check: () => (clock.now() > startAt ? check.check() : undefined),
  };
}
