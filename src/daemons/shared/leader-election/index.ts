/** Lease-based leader election (client-go semantics): the controller manager's, and the API server's coordinated leader election controller. */
export { LeaderElector, type ElectionOutcome, type ElectionState, type ElectionStateName } from './elector.js';
export {
  DEFAULT_LEASE_DURATION_MS,
  defaultLeaseName,
  defaultLeaseNamespace,
  DEFAULT_RENEW_DEADLINE_MS,
  DEFAULT_RETRY_PERIOD_MS,
  JITTER_FACTOR,
  validateElectorConfig,
  type LeaderElectionCallbacks,
  type LeaderElectorConfig,
} from './config.js';
export { ConflictError, type LeaseLock, type LockedRecord } from './lock.js';
export {
  formatMicroTime,
  leaseSpecToRecord,
  parseMicroTime,
  recordToLeaseSpec,
  serializeRecord,
  type LeaderElectionRecord,
  type LeaseSpec,
} from './record.js';
export { HttpLeaseLock, LeaseLockError, leaseApiVersion, leaseCollectionPath, leasePath, type JsonHttp, type JsonReply } from './lease-lock.js';
export { fetchJsonHttp, type FetchJsonHttpOptions } from './fetch-json-http.js';
export { systemClock, type ElectionClock } from './clock.js';
export { newIdentity } from './identity.js';
