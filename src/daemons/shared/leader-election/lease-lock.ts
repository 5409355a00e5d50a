/**
 * The LeaseLock over the API server's REST API (`coordination.orch.io/v1` Lease), through a
 * minimal JSON-over-HTTP interface so it can sit on the REST client or on plain fetch.
 */
import { names, type NameSet } from '../../../api/names.js';
import { ConflictError, type LeaseLock, type LockedRecord } from './lock.js';
import { leaseSpecToRecord, recordToLeaseSpec, type LeaderElectionRecord, type LeaseSpec } from './record.js';

export interface JsonReply {
  status: number;
  /** The parsed JSON body; undefined when the body was empty or not JSON. */
  body: unknown;
}

/** Requests by absolute API path; a reply for every HTTP status, a rejection only when no reply came. */
export interface JsonHttp {
  get(path: string): Promise<JsonReply>;
  post(path: string, body: unknown): Promise<JsonReply>;
  put(path: string, body: unknown): Promise<JsonReply>;
}

/** Any other error status from the API server; the message is the Status message when there is one. */
export class LeaseLockError extends Error {
  override readonly name = 'LeaseLockError';
  constructor(readonly status: number, message: string) {
    super(message);
  }
}

interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [key: string]: unknown };
  spec?: LeaseSpec;
  [key: string]: unknown;
}

export const leaseApiVersion = (): string => `${names().groups.coordination}/v1`;

export function leaseCollectionPath(namespace: string, n: NameSet = names()): string {
  return `/apis/${n.groups.coordination}/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
}

export function leasePath(namespace: string, name: string, n: NameSet = names()): string {
  return `${leaseCollectionPath(namespace, n)}/${encodeURIComponent(name)}`;
}

export class HttpLeaseLock implements LeaseLock {
  /**
   * The lease as last read or written. An update starts from it (as upstream's LeaseLock does)
   * so labels, annotations and fields the elector does not own survive the PUT.
   */
  private cached?: LeaseObject;

  constructor(private readonly http: JsonHttp, readonly namespace: string, readonly name: string) {}

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  async get(): Promise<LockedRecord | undefined> {
    const reply = await this.http.get(leasePath(this.namespace, this.name));
    if (reply.status === 404) return undefined;
    const lease = this.expectLease(reply, 200);
    return { record: leaseSpecToRecord(lease.spec), resourceVersion: lease.metadata?.resourceVersion ?? '' };
  }

  async create(record: LeaderElectionRecord): Promise<string> {
    const lease: LeaseObject = {
      apiVersion: leaseApiVersion(),
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: recordToLeaseSpec(record),
    };
    return this.resourceVersionOf(this.expectLease(await this.http.post(leaseCollectionPath(this.namespace), lease), 201, 200));
  }

  async update(record: LeaderElectionRecord, resourceVersion: string): Promise<string> {
    const base: LeaseObject = this.cached?.metadata?.resourceVersion === resourceVersion
      ? this.cached
      : { apiVersion: leaseApiVersion(), kind: 'Lease', metadata: { name: this.name, namespace: this.namespace } };
    const lease: LeaseObject = {
      ...base,
      metadata: { ...base.metadata, resourceVersion },
      spec: { ...base.spec, ...recordToLeaseSpec(record) },
    };
    return this.resourceVersionOf(this.expectLease(await this.http.put(leasePath(this.namespace, this.name), lease), 200, 201));
  }

  private resourceVersionOf(lease: LeaseObject): string {
    return lease.metadata?.resourceVersion ?? '';
  }

  /** The Lease of a successful reply, cached; ConflictError on 409, LeaseLockError on any other status. */
  private expectLease(reply: JsonReply, ...ok: number[]): LeaseObject {
    if (ok.includes(reply.status) && isObject(reply.body)) {
      this.cached = reply.body as LeaseObject;
      return this.cached;
    }
    const message = statusMessage(reply);
    if (reply.status === 409) throw new ConflictError(message);
    throw new LeaseLockError(reply.status, message);
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function statusMessage(reply: JsonReply): string {
  const message = isObject(reply.body) ? reply.body.message : undefined;
  return typeof message === 'string' && message ? message : `unexpected HTTP status ${reply.status}`;
}
