/** The controller manager's leader, from its Lease as the API server returns it. Pure. */
import {leasePath} from '../../daemons/controller-manager/leader-election/lease-lock.js';
import {DEFAULT_LEASE_NAME, DEFAULT_LEASE_NAMESPACE} from '../../daemons/controller-manager/leader-election/config.js';
import type {LeaderStatus} from './report.js';

export const LEADER_LEASE_PATH = leasePath(DEFAULT_LEASE_NAMESPACE, DEFAULT_LEASE_NAME);
export const LEADER_LEASE_NAME = `${DEFAULT_LEASE_NAMESPACE}/${DEFAULT_LEASE_NAME}`;

export type LeaderLookup = {leader: LeaderStatus | null; note?: string};

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function int(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}

/** The leader from a GET of the lease: the spec's holder, renew time and transitions; a note when there is none to show. */
export function leaderFromLeaseResponse(httpStatus: number, body: unknown): LeaderLookup {
  const object = (typeof body === 'object' && body !== null ? body : {}) as {spec?: Record<string, unknown>; message?: unknown};
  if (httpStatus === 404) return {leader: null, note: `lease ${LEADER_LEASE_NAME} not found: no controller manager has won leader election yet`};
  if (httpStatus !== 200) {
    const message = typeof object.message === 'string' ? object.message : 'unexpected answer';
    return {leader: null, note: `lease ${LEADER_LEASE_NAME} not readable: HTTP ${httpStatus}: ${message}`};
  }
  const spec = object.spec ?? {};
  return {
    leader: {
      holder: str(spec.holderIdentity),
      renewTime: str(spec.renewTime),
      transitions: int(spec.leaseTransitions) ?? 0,
      leaseDurationSeconds: int(spec.leaseDurationSeconds),
    },
  };
}
