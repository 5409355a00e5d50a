/**
 * Which checks a level and version run, and their results put together, as upstream's
 * policy/registry.go and checks.go: for each minor version from v1.0 to the newest a check names,
 * each check's newest version at or below it; restricted runs the baseline checks its own checks do
 * not override, then its own. Checks run in ID order (baseline first), so messages are stable. A
 * version above the newest (and `latest`) uses the newest. Pure.
 */
import {CHECKS, type Check, type CheckPodFn, type CheckResult, type PodMetadata, type PodSpecView} from './checks.js';
import {older, v1, type LevelVersion, type Version} from './levels.js';

export interface AggregateResult {
  allowed: boolean;
  reasons: string[];
  details: string[];
}

/** `host ports, privileged`: the reasons only (namespace warnings, one line a kind of violation). */
export function forbiddenReason(result: AggregateResult): string {
  return result.reasons.join(', ');
}

/** `host ports (8080), privileged (container "c" must not ...)`: reasons with their details. */
export function forbiddenDetail(result: AggregateResult): string {
  return result.reasons.map((reason, i) => (result.details[i] ? `${reason} (${result.details[i]})` : reason)).join(', ');
}

export function aggregate(results: readonly CheckResult[]): AggregateResult {
  const failed = results.filter((r) => !r.allowed);
  return {
    allowed: failed.length === 0,
    reasons: failed.map((r) => r.reason || 'unknown forbidden reason'),
    details: failed.map((r) => r.detail ?? ''),
  };
}

export class Evaluator {
  /** The newest version any check names: `latest` and anything newer evaluate as this one. */
  readonly maxVersion: Version;
  private readonly baseline = new Map<number, CheckPodFn[]>();
  private readonly restricted = new Map<number, CheckPodFn[]>();

  constructor(checks: readonly Check[] = CHECKS) {
    validateChecks(checks);
    let max = 0;
    for (const c of checks) max = Math.max(max, c.versions[c.versions.length - 1]!.minimumVersion.minor);
    this.maxVersion = v1(max);
    const byId = (a: Check, b: Check) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const baselineChecks = checks.filter((c) => c.level === 'baseline').sort(byId);
    const restrictedChecks = checks.filter((c) => c.level === 'restricted').sort(byId);
    for (let minor = 0; minor <= max; minor++) {
      const at = (c: Check) => [...c.versions].reverse().find((v) => v.minimumVersion.minor <= minor);
      const overridden = new Set(restrictedChecks.flatMap((c) => at(c)?.overrides ?? []));
      const baselineFns = baselineChecks.map((c) => ({id: c.id, fn: at(c)?.check})).filter((e) => e.fn);
      this.baseline.set(minor, baselineFns.map((e) => e.fn!));
      this.restricted.set(minor, [
        ...baselineFns.filter((e) => !overridden.has(e.id)).map((e) => e.fn!),
        ...restrictedChecks.map((c) => at(c)?.check).filter((fn): fn is CheckPodFn => !!fn),
      ]);
    }
  }

  evaluate(lv: LevelVersion, metadata: PodMetadata, spec: PodSpecView): CheckResult[] {
    if (lv.level === 'privileged') return [];
    const minor = older(this.maxVersion, lv.version) ? this.maxVersion.minor : lv.version.minor;
    const fns = (lv.level === 'baseline' ? this.baseline : this.restricted).get(minor) ?? [];
    return fns.map((fn) => fn(metadata, spec));
  }

  evaluateAggregate(lv: LevelVersion, metadata: PodMetadata, spec: PodSpecView): AggregateResult {
    return aggregate(this.evaluate(lv, metadata, spec));
  }
}

/** Upstream's validateChecks: unique IDs, increasing versions, overrides only from restricted onto baseline. */
function validateChecks(checks: readonly Check[]): void {
  const levels = new Map<string, string>();
  for (const c of checks) {
    if (levels.has(c.id)) throw new Error(`multiple checks registered for ID ${c.id}`);
    levels.set(c.id, c.level);
    if (!c.versions.length) throw new Error(`check ${c.id}: empty`);
    c.versions.forEach((v, i) => {
      if (v.minimumVersion.latest) throw new Error(`check ${c.id}: version cannot be 'latest'`);
      if (i > 0 && !older(c.versions[i - 1]!.minimumVersion, v.minimumVersion)) throw new Error(`check ${c.id}: versions must be strictly increasing`);
    });
  }
  for (const c of checks) {
    for (const v of c.versions) {
      if (!v.overrides?.length) continue;
      if (c.level !== 'restricted') throw new Error(`check ${c.id}: only restricted checks may set overrides`);
      for (const id of v.overrides) {
        const level = levels.get(id);
        if (level !== undefined && level !== 'baseline') throw new Error(`check ${c.id}: overrides ${level} check ${id}`);
      }
    }
  }
}
