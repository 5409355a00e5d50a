/**
 * The storage the elector competes on, as small as the algorithm needs: read the record with its
 * resourceVersion, create it, and update it conditionally on a resourceVersion. The API server's
 * optimistic concurrency (AlreadyExists on create, Conflict on a stale resourceVersion) is what
 * makes two candidates' writes exclusive; a lock reports both as ConflictError.
 */
import type { LeaderElectionRecord } from './record.js';

export interface LockedRecord {
  record: LeaderElectionRecord;
  resourceVersion: string;
}

export interface LeaseLock {
  /** The record and its resourceVersion; undefined when the lease does not exist. */
  get(): Promise<LockedRecord | undefined>;
  /** Creates the lease; ConflictError if it already exists. Resolves to the new resourceVersion. */
  create(record: LeaderElectionRecord): Promise<string>;
  /**
   * Replaces the record if the lease is still at `resourceVersion`; ConflictError otherwise.
   * Resolves to the new resourceVersion, which lets a leader renew without reading first.
   */
  update(record: LeaderElectionRecord, resourceVersion: string): Promise<string>;
  /** `<namespace>/<name>`, for logs and health messages. */
  describe(): string;
}

/** Someone else wrote the lease first (HTTP 409: AlreadyExists or Conflict). */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
}
