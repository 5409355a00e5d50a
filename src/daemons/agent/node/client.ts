/**
 * The API calls the node part makes, as an interface so the status manager and the lease controller
 * run against a fake in unit tests, and restNodeClient: the same over the REST client. Failures are
 * ApiStatusError (with `reason` AlreadyExists, Conflict, NotFound...) or ApiConnectionError.
 */
import { names } from '../../../api/names.js';
import { ApiStatusError } from '../../../client/errors.js';
import type { RestClient } from '../../../client/rest-client.js';
import { leaseApiVersion } from '../../shared/leader-election/lease-lock.js';
import type { LeaseObject, NodeObject } from './types.js';

export { leaseApiVersion };
export const STRATEGIC_MERGE_PATCH = 'application/strategic-merge-patch+json';

export interface NodeApiClient {
  createNode(node: NodeObject): Promise<NodeObject>;
  getNode(name: string): Promise<NodeObject>;
  /** Strategic merge patch of the Node (metadata and spec). */
  patchNode(name: string, patch: unknown): Promise<NodeObject>;
  /** Strategic merge patch of nodes/<name>/status. */
  patchNodeStatus(name: string, patch: unknown): Promise<NodeObject>;
  getLease(namespace: string, name: string): Promise<LeaseObject>;
  createLease(lease: LeaseObject): Promise<LeaseObject>;
  /** PUT with the lease's resourceVersion: Conflict when someone else wrote it since. */
  updateLease(lease: LeaseObject): Promise<LeaseObject>;
}

const reasonOf = (error: unknown) => (error instanceof ApiStatusError ? error.reason : undefined);
export const isAlreadyExists = (error: unknown) => reasonOf(error) === 'AlreadyExists';
export const isConflict = (error: unknown) => reasonOf(error) === 'Conflict';
export const isNotFound = (error: unknown) => reasonOf(error) === 'NotFound';

const nodePath = (name: string) => `/api/v1/nodes/${encodeURIComponent(name)}`;
const leasesPath = (namespace: string) => `/apis/${leaseApiVersion()}/namespaces/${encodeURIComponent(namespace)}/leases`;

export function restNodeClient(rest: RestClient): NodeApiClient {
  const nodeContext = (name?: string) => ({ resource: 'nodes', name });
  const leaseContext = (name?: string) => ({ resource: 'leases', group: names().groups.coordination, name });
  return {
    createNode: async (node) => (await rest.request<NodeObject>({ method: 'POST', path: '/api/v1/nodes', body: node, context: nodeContext(node.metadata.name) })).body,
    getNode: (name) => rest.get<NodeObject>(nodePath(name), undefined, nodeContext(name)),
    patchNode: (name, patch) => rest.patch<NodeObject>(nodePath(name), STRATEGIC_MERGE_PATCH, patch, undefined, nodeContext(name)),
    patchNodeStatus: (name, patch) => rest.patch<NodeObject>(`${nodePath(name)}/status`, STRATEGIC_MERGE_PATCH, patch, undefined, nodeContext(name)),
    getLease: (namespace, name) => rest.get<LeaseObject>(`${leasesPath(namespace)}/${encodeURIComponent(name)}`, undefined, leaseContext(name)),
    createLease: async (lease) =>
      (await rest.request<LeaseObject>({ method: 'POST', path: leasesPath(lease.metadata.namespace), body: lease, context: leaseContext(lease.metadata.name) })).body,
    updateLease: async (lease) =>
      (
        await rest.request<LeaseObject>({
          method: 'PUT',
          path: `${leasesPath(lease.metadata.namespace)}/${encodeURIComponent(lease.metadata.name)}`,
          body: lease,
          context: leaseContext(lease.metadata.name),
        })
      ).body,
  };
}
