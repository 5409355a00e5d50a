/** The controller manager's leader, from its Lease as the API server returns it. Pure. */
import {leasePath} from '../../daemons/shared/leader-election/lease-lock.js';
import type {LeaderStatus} from './report.js';
import {NAME_SET_IDS, nameSet, names, type NameSet} from '../../api/names.js';

/** The controller manager's lease under a name set (`orch-system/orch-controller-manager` with orch's). */
export function leaderLeasePath(n: NameSet = names()): string {
  return leasePath(n.namespaces.system, n.leases.controllerManager, n);
}

export function leaderLeaseName(n: NameSet = names()): string {
  return `${n.namespaces.system}/${n.leases.controllerManager}`;
}

/** The name sets to try, the active one first: `orch status` reads a cluster of either names without being told. */
export function leaseCandidates(): NameSet[] {
  const active = names();
  return [active, ...NAME_SET_IDS.filter((id) => id !== active.id).map((id) => nameSet(id))];
}

export type LeaderLookup = {leader: LeaderStatus | null; note?: string};

function str(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

function int(value: unknown): number | null {
  return typeof value === 'number' && Number.isInteger(value) ? value : null;
}

/** The leader from a GET of the lease: the spec's holder, renew time and transitions; a note when there is none to show. */
export function leaderFromLeaseResponse(httpStatus: number, body: unknown, n: NameSet = names()): LeaderLookup {
  const LEADER_LEASE_NAME = leaderLeaseName(n);
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
