/**
 * The leader election record and its mapping to and from a Lease's spec, as client-go's
 * resourcelock package does (interface.go, leaselock.go).
 *
 * Times are kept as epoch milliseconds: the elector only ever compares them with each other or
 * shows them, and JavaScript's clock has millisecond precision. On the wire they are
 * metav1.MicroTime: RFC 3339 in UTC with exactly six fractional digits.
 */

export interface LeaderElectionRecord {
  /** The holder; `''` once the holder released the lease. */
  holderIdentity: string;
  /** The holder's lease duration in whole seconds (`1` after a release). */
  leaseDurationSeconds: number;
  /** When this holder first acquired the lease (epoch ms); kept across renewals. */
  acquireTime?: number;
  /** When the lease was last acquired or renewed (epoch ms). */
  renewTime?: number;
  /** How many times the holder changed. */
  leaderTransitions: number;
  /** Coordinated leader election: the strategy the controller set, and the holder it prefers (end of term). */
  strategy?: string;
  preferredHolder?: string;
}

/** The Lease spec fields (coordination/v1), all optional on the wire. */
export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
  strategy?: string;
  preferredHolder?: string;
}

/** metav1.MicroTime's layout `2006-01-02T15:04:05.000000Z07:00`, always in UTC. */
export function formatMicroTime(epochMs: number): string {
  return new Date(epochMs).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/**
 * Parses any RFC 3339 time (MicroTime or second-precision Time, any offset); digits below the
 * millisecond are dropped. Undefined for a missing or unparsable value, as a nil pointer would be.
 */
export function parseMicroTime(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

/** LeaderElectionRecordToLeaseSpec: the elector always writes the five main fields. */
export function recordToLeaseSpec(record: LeaderElectionRecord): LeaseSpec {
  const spec: LeaseSpec = {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    ...(record.acquireTime !== undefined ? { acquireTime: formatMicroTime(record.acquireTime) } : {}),
    ...(record.renewTime !== undefined ? { renewTime: formatMicroTime(record.renewTime) } : {}),
    leaseTransitions: record.leaderTransitions,
  };
  if (record.strategy !== undefined) spec.strategy = record.strategy;
  if (record.preferredHolder !== undefined) spec.preferredHolder = record.preferredHolder;
  return spec;
}

/** LeaseSpecToLeaderElectionRecord: missing fields read as their zero values. */
export function leaseSpecToRecord(spec: LeaseSpec | undefined): LeaderElectionRecord {
  const record: LeaderElectionRecord = {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: parseMicroTime(spec?.acquireTime),
    renewTime: parseMicroTime(spec?.renewTime),
    leaderTransitions: spec?.leaseTransitions ?? 0,
  };
  if (spec?.strategy !== undefined) record.strategy = spec.strategy;
  if (spec?.preferredHolder !== undefined) record.preferredHolder = spec.preferredHolder;
  return record;
}

/**
 * The record's serialized form, which the elector compares to notice that the holder wrote
 * something (upstream compares the JSON bytes). The key order is fixed so equal records give
 * equal text.
 */
export function serializeRecord(record: LeaderElectionRecord): string {
  return JSON.stringify({
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: record.acquireTime === undefined ? null : formatMicroTime(record.acquireTime),
    renewTime: record.renewTime === undefined ? null : formatMicroTime(record.renewTime),
    leaderTransitions: record.leaderTransitions,
    strategy: record.strategy ?? null,
    preferredHolder: record.preferredHolder ?? null,
  });
}
