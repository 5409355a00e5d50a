/**
 * The coordinated leader election controller of the API server (gate CoordinatedLeaderElection):
 * leader-elected itself on the `leader-election-controller` Lease of the system namespace with the
 * --coordinated-leadership-* timings, as upstream's RunWithLeaderElection. While leading it keeps an
 * in-memory view of Leases and LeaseCandidates (list + watch on the store), runs an election step
 * (election.ts) for every lease a candidate names whenever one of them changes or a step asks to
 * look again, and garbage-collects candidates not renewed for 30 minutes (upstream's
 * LeaseCandidateGC).
 */
import {randomUUID} from 'node:crypto';
import {names} from '../../../api/names.js';
import {builtinResources, type ResourceInfo} from '../../../api/resources.js';
import {ApiError} from '../../../api/status.js';
import type {JsonObject} from '../../../patch/types.js';
import {AdmissionChain} from '../admission/chain.js';
import {RegistryStore, type WriteContext} from '../rest/registry-store.js';
import {rfc3339Micro} from '../rest/objects.js';
import {systemClock as restClock} from '../rest/types.js';
import {resourceKeyPrefix} from '../storage-keys.js';
import {StoreInformer} from '../store-informer.js';
import type {Store} from '../storage/store.js';
import {LeaderElector, ConflictError, leaseSpecToRecord, recordToLeaseSpec, type LeaseLock, type LockedRecord, type LeaderElectionRecord, type LeaseSpec} from '../../controller-manager/leader-election/index.js';
import {klog} from '../../../lib/klog.js';
import {admissibleCandidates, electionStep, isCandidateExpired, type CandidateView, type LeaseSpecView} from './election.js';

const log = klog('coordinated-leader-election');

/** Upstream's controller (and its own lease's) name. */
export const CONTROLLER_NAME = 'leader-election-controller';
/** Upstream's LeaseCandidateGCPeriod. */
export const LEASE_CANDIDATE_GC_PERIOD_MS = 30 * 60_000;

const WRITE: WriteContext = {user: {name: 'system:apiserver', groups: ['system:masters']}, dryRun: false, fieldManager: CONTROLLER_NAME};

export interface CoordinatedTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export interface CoordinatedLeaderElectionOptions {
  store: Store;
  keyPrefix: string;
  timings: CoordinatedTimings;
  /** This server's identity in its own election. */
  identity?: string;
  now?: () => number;
}

function registry(store: Store, keyPrefix: string, group: string, plural: string, version: string): RegistryStore {
  const info = builtinResources().find((r) => r.group === group && r.plural === plural && r.version === version) as ResourceInfo;
  return new RegistryStore(info, {store, clock: restClock, keyPrefix, admission: new AdmissionChain([])});
}

const isStatus = (error: unknown, code: number): boolean => error instanceof ApiError && error.code === code;

/** The LeaseLock over the store itself: the API server needs no client to lead its own controller. */
export class StoreLeaseLock implements LeaseLock {
  constructor(private readonly leases: RegistryStore, readonly namespace: string, readonly name: string) {}

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  async get(): Promise<LockedRecord | undefined> {
    try {
      const lease = await this.leases.get(this.namespace, this.name);
      return {record: leaseSpecToRecord(lease.spec as LeaseSpec), resourceVersion: String((lease.metadata as JsonObject).resourceVersion ?? '')};
    } catch (error) {
      if (isStatus(error, 404)) return undefined;
      throw error;
    }
  }

  async create(record: LeaderElectionRecord): Promise<string> {
    const lease = {apiVersion: `${names().groups.coordination}/v1`, kind: 'Lease', metadata: {name: this.name, namespace: this.namespace}, spec: recordToLeaseSpec(record)};
    try {
      return String(((await this.leases.create(this.namespace, lease, WRITE)).metadata as JsonObject).resourceVersion);
    } catch (error) {
      if (isStatus(error, 409)) throw new ConflictError((error as Error).message);
      throw error;
    }
  }

  async update(record: LeaderElectionRecord, resourceVersion: string): Promise<string> {
    try {
      const {object} = await this.leases.update(this.namespace, this.name, WRITE, (current) => {
        if ((current.metadata as JsonObject).resourceVersion !== resourceVersion) throw new ConflictError('the lease changed');
        return {...current, spec: {...(current.spec as JsonObject), ...recordToLeaseSpec(record)}} as JsonObject;
      });
      return String((object.metadata as JsonObject).resourceVersion);
    } catch (error) {
      if (isStatus(error, 409) || isStatus(error, 404)) throw new ConflictError((error as Error).message);
      throw error;
    }
  }
}

const keyOf = (namespace: string, name: string) => `${namespace}/${name}`;

export class CoordinatedLeaderElection {
  private readonly leases: RegistryStore;
  private readonly candidatesStore: RegistryStore;
  private readonly elector: LeaderElector;
  private readonly now: () => number;
  private readonly stopper = new AbortController();
  private running?: Promise<unknown>;

  constructor(private readonly o: CoordinatedLeaderElectionOptions) {
    const g = names().groups.coordination;
    this.leases = registry(o.store, o.keyPrefix, g, 'leases', 'v1');
    this.candidatesStore = registry(o.store, o.keyPrefix, g, 'leasecandidates', 'v1beta1');
    this.now = o.now ?? Date.now;
    this.elector = new LeaderElector({
      lock: new StoreLeaseLock(this.leases, names().namespaces.system, CONTROLLER_NAME),
      identity: o.identity ?? `${names().product}-apiserver_${randomUUID()}`,
      leaseDurationMs: o.timings.leaseDurationMs,
      renewDeadlineMs: o.timings.renewDeadlineMs,
      retryPeriodMs: o.timings.retryPeriodMs,
      releaseOnCancel: true,
      logger: log,
      callbacks: {onStartedLeading: (signal) => this.lead(signal), onStoppedLeading: () => undefined},
    });
  }

  get identity(): string {
    return this.elector.identity;
  }

  /** Campaigns, then leads, until stop(); a lost lease campaigns again. */
  start(): void {
    this.running = (async () => {
      while (!this.stopper.signal.aborted) {
        await this.elector.run(this.stopper.signal).catch((error) => log.error('coordinated leader election failed', 'err', String(error)));
        if (!this.stopper.signal.aborted) await new Promise((r) => setTimeout(r, this.o.timings.retryPeriodMs));
      }
    })();
  }

  async stop(): Promise<void> {
    this.stopper.abort();
    await this.running;
  }

  /** The controller and the candidate GC while this server leads. */
  private async lead(signal: AbortSignal): Promise<void> {
    const leases = new Map<string, LeaseSpecView>();
    const candidates = new Map<string, {namespace: string; view: CandidateView; object: JsonObject}>();
    const queue = new Set<string>();
    const timers = new Map<string, NodeJS.Timeout>();
    let wake: (() => void) | undefined;
    const enqueue = (key: string) => {
      queue.add(key);
      wake?.();
    };
    const meta = (o: Record<string, unknown>) => (o.metadata ?? {}) as {name: string; namespace: string; creationTimestamp?: string};
    const g = names().groups.coordination;
    const informer = new StoreInformer(this.o.store, new Map([
      [resourceKeyPrefix(this.o.keyPrefix, g, 'leases'), {
        apply: (o) => {
          const m = meta(o);
          leases.set(keyOf(m.namespace, m.name), (o.spec ?? {}) as LeaseSpecView);
          enqueue(keyOf(m.namespace, m.name));
        },
        remove: (o) => {
          const m = meta(o);
          leases.delete(keyOf(m.namespace, m.name));
          enqueue(keyOf(m.namespace, m.name));
        },
      }],
      [resourceKeyPrefix(this.o.keyPrefix, g, 'leasecandidates'), {
        apply: (o) => {
          const m = meta(o);
          const view: CandidateView = {name: m.name, creationTimestamp: m.creationTimestamp, spec: (o.spec ?? {}) as CandidateView['spec']};
          candidates.set(keyOf(m.namespace, m.name), {namespace: m.namespace, view, object: o as JsonObject});
          // A candidate that has not answered a ping yet changes nothing (upstream enqueueCandidate).
          const ping = Date.parse(view.spec.pingTime ?? '');
          const renew = Date.parse(view.spec.renewTime ?? '');
          if (!(ping > renew)) enqueue(keyOf(m.namespace, view.spec.leaseName));
        },
        remove: (o) => {
          const m = meta(o);
          const found = candidates.get(keyOf(m.namespace, m.name));
          candidates.delete(keyOf(m.namespace, m.name));
          if (found) enqueue(keyOf(m.namespace, found.view.spec.leaseName));
        },
      }],
    ]), (error) => log.v(2).info('coordinated leader election watch error', 'err', error.message));
    void informer.start();

    const gc = async () => {
      for (const [key, c] of candidates) {
        if (!isCandidateExpired(c.view, this.now())) continue;
        await this.candidatesStore.delete(c.namespace, c.view.name, {}, WRITE).catch(() => undefined);
        log.info('Deleted expired LeaseCandidate', 'candidate', key);
      }
    };
    const gcTimer = setInterval(() => void gc(), LEASE_CANDIDATE_GC_PERIOD_MS);

    const step = async (key: string) => {
      const [namespace, name] = key.split('/');
      const now = this.now();
      const admissible = admissibleCandidates([...candidates.values()].filter((c) => c.namespace === namespace).map((c) => c.view), name, now);
      const lease = leases.get(key);
      const decision = electionStep(lease ?? 'missing', admissible, now, rfc3339Micro(new Date(now)));
      if (decision.error) log.v(2).info('Election step', 'lease', key, 'problem', decision.error);
      for (const candidate of decision.ping) {
        await this.candidatesStore.update(namespace, candidate, WRITE, (current) => ({...current, spec: {...(current.spec as JsonObject), pingTime: rfc3339Micro(new Date(now))}}));
      }
      if (decision.create) {
        try {
          await this.leases.create(namespace, {apiVersion: `${g}/v1`, kind: 'Lease', metadata: {name, namespace}, spec: decision.create}, WRITE);
          log.info('Created lease', 'lease', key, 'holder', decision.create.holderIdentity ?? '');
        } catch (error) {
          if (!isStatus(error, 409)) throw error;
          return 100; // someone created it meanwhile: look again at once
        }
      }
      if (decision.update && lease) {
        const desired = decision.update;
        await this.leases.update(namespace, name, WRITE, (current) => {
          // Written on what this step read: a lease renewed meanwhile is decided again.
          if (JSON.stringify(current.spec ?? {}) !== JSON.stringify(lease)) throw new ConflictError('lease changed');
          return {...current, spec: desired as JsonObject};
        }).then(
          () => log.info('Updated lease', 'lease', key, 'holder', desired.holderIdentity ?? '', 'preferredHolder', desired.preferredHolder ?? ''),
          (error) => {
            if (!(error instanceof ConflictError)) throw error;
          },
        );
      }
      return decision.requeueMs;
    };

    const schedule = (key: string, ms: number) => {
      clearTimeout(timers.get(key));
      timers.set(key, setTimeout(() => enqueue(key), ms));
    };

    // As upstream's wait.Until: the first collection once the view is complete, then every period.
    let collected = false;
    try {
      while (!signal.aborted) {
        if (informer.synced && !collected) {
          collected = true;
          await gc();
        }
        if (!informer.synced || queue.size === 0) {
          // Woken by an event, the abort, or a short poll until the view is complete.
          let poll: NodeJS.Timeout | undefined;
          let onAbort = (): void => undefined;
          await new Promise<void>((resolve) => {
            wake = resolve;
            onAbort = resolve;
            poll = setTimeout(resolve, informer.synced ? 1000 : 50);
            signal.addEventListener('abort', onAbort, {once: true});
          });
          clearTimeout(poll);
          signal.removeEventListener('abort', onAbort);
          wake = undefined;
          continue;
        }
        const [key] = queue;
        queue.delete(key);
        // Only leases some candidate names take part (upstream lists candidates first).
        if (![...candidates.values()].some((c) => keyOf(c.namespace, c.view.spec.leaseName) === key)) continue;
        try {
          const requeue = await step(key);
          if (requeue > 0) schedule(key, requeue);
        } catch (error) {
          log.v(2).info('Election step failed', 'lease', key, 'err', String(error));
          schedule(key, 1000);
        }
      }
    } finally {
      clearInterval(gcTimer);
      for (const t of timers.values()) clearTimeout(t);
      informer.stop();
    }
  }
}
