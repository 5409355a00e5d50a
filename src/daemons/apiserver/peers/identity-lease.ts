/**
 * The API server's identity lease (upstream's APIServerIdentity, GA): a Lease in the system namespace
 * named `apiserver-<hash of the hostname>`, labelled `apiserver.<labelDomain>/identity=<product>-apiserver`
 * and with the host name, renewed every 10 s with a 3600 s duration. With the
 * UnknownVersionInteroperabilityProxy gate on, it carries `<labelDomain>/peer-advertise-address`
 * (`<ip>:<port>`), the address peer API servers proxy to (upstream's mixed version proxy reads it).
 */
import {createHash, randomUUID} from 'node:crypto';
import {names} from '../../../api/names.js';
import {builtinResources, type ResourceInfo} from '../../../api/resources.js';
import type {JsonObject} from '../../../patch/types.js';
import {AdmissionChain} from '../admission/chain.js';
import {RegistryStore, type WriteContext} from '../rest/registry-store.js';
import {rfc3339Micro} from '../rest/objects.js';
import {systemClock as restClock} from '../rest/types.js';
import type {Store} from '../storage/store.js';
import {systemClock, type Clock, type TimerHandle} from '../../shared/clock.js';
import {familyOf} from '../services/ip-range.js';

/** Upstream's IdentityLeaseDurationSeconds and IdentityLeaseRenewIntervalPeriod. */
export const IDENTITY_LEASE_DURATION_SECONDS = 3600;
export const IDENTITY_LEASE_RENEW_INTERVAL_MS = 10_000;

const WRITE: WriteContext = {user: {name: 'system:apiserver', groups: ['system:masters']}, dryRun: false, fieldManager: 'orch-apiserver'};

/**
 * Upstream's identity: `apiserver-` and the lower-case unpadded base32 of the first 16 bytes of the
 * sha256 of the host name and the component name, each prefixed by its 16-bit length.
 */
export function identityLeaseName(hostname: string, component = `${names().product}-apiserver`): string {
  const prefixed = (text: string) => {
    const bytes = Buffer.from(text);
    const length = Buffer.alloc(2);
    length.writeUInt16BE(bytes.length);
    return Buffer.concat([length, bytes]);
  };
  const digest = createHash('sha256').update(Buffer.concat([prefixed(hostname), prefixed(component)])).digest().subarray(0, 16);
  // Base32 (RFC 4648 alphabet, lower case, no padding): five bits at a time.
  const alphabet = 'abcdefghijklmnopqrstuvwxyz234567';
  const bits = [...digest].map((byte) => byte.toString(2).padStart(8, '0')).join('');
  let out = '';
  for (let i = 0; i < bits.length; i += 5) out += alphabet[parseInt(bits.slice(i, i + 5).padEnd(5, '0'), 2)];
  return `apiserver-${out}`;
}

/** `ip:port`, bracketed for IPv6 as Go's net.JoinHostPort. */
export function joinHostPort(ip: string, port: number | string): string {
  return familyOf(ip) === 'IPv6' ? `[${ip}]:${port}` : `${ip}:${port}`;
}

export interface IdentityLeaseOptions {
  store: Store;
  keyPrefix: string;
  hostname: string;
  /** The peer address to publish (gate UnknownVersionInteroperabilityProxy on), or undefined. */
  peerAddress?: string;
  clock?: Clock;
  renewIntervalMs?: number;
  onError?: (error: unknown) => void;
}

export class IdentityLease {
  readonly name: string;
  /** This run's holder identity (`<name>_<uuid>`): a restarted server is a new holder. */
  readonly holder: string;
  private readonly leases: RegistryStore;
  private readonly clock: Clock;
  private timer?: TimerHandle;
  private stopped = false;

  constructor(private readonly o: IdentityLeaseOptions) {
    this.name = identityLeaseName(o.hostname);
    this.holder = `${this.name}_${randomUUID()}`;
    this.clock = o.clock ?? systemClock;
    const info = builtinResources().find((r) => r.group === names().groups.coordination && r.plural === 'leases' && r.version === 'v1') as ResourceInfo;
    this.leases = new RegistryStore(info, {store: o.store, clock: restClock, keyPrefix: o.keyPrefix, admission: new AdmissionChain([])});
  }

  private desired(current?: JsonObject): JsonObject {
    const n = names();
    const now = rfc3339Micro(new Date(this.clock.now()));
    const meta = (current?.metadata ?? {}) as JsonObject;
    const annotations = {...((meta.annotations as Record<string, string>) ?? {})};
    if (this.o.peerAddress) annotations[n.annotations.peerAdvertiseAddress] = this.o.peerAddress;
    else delete annotations[n.annotations.peerAdvertiseAddress];
    return {
      ...(current ?? {}),
      apiVersion: `${n.groups.coordination}/v1`, kind: 'Lease',
      metadata: {
        ...meta, name: this.name, namespace: n.namespaces.system,
        labels: {...((meta.labels as Record<string, string>) ?? {}), [n.labels.apiserverIdentity]: `${n.product}-apiserver`, [n.labels.hostname]: this.o.hostname},
        ...(Object.keys(annotations).length ? {annotations} : {}),
      },
      spec: {holderIdentity: this.holder, leaseDurationSeconds: IDENTITY_LEASE_DURATION_SECONDS, renewTime: now, acquireTime: now},
    };
  }

  /** Creates or renews the lease. */
  async renew(): Promise<void> {
    await this.leases.update(names().namespaces.system, this.name, WRITE, (current) => {
      const next = this.desired(current);
      // The acquire time stays while this run holds the lease.
      const spec = current.spec as JsonObject | undefined;
      if (spec?.holderIdentity === this.holder && spec.acquireTime) (next.spec as JsonObject).acquireTime = spec.acquireTime;
      return next;
    }, {createIfMissing: () => this.desired()});
  }

  /** Renews every interval until stop() (the caller runs the first renew()). */
  start(): void {
    const tick = () => {
      if (this.stopped) return;
      this.renew()
        .catch((error) => this.o.onError?.(error))
        .finally(() => {
          if (!this.stopped) this.timer = this.clock.setTimeout(tick, this.o.renewIntervalMs ?? IDENTITY_LEASE_RENEW_INTERVAL_MS);
        });
    };
    this.timer = this.clock.setTimeout(tick, this.o.renewIntervalMs ?? IDENTITY_LEASE_RENEW_INTERVAL_MS);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.clock.clearTimeout(this.timer);
  }
}
