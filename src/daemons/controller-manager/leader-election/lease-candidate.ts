/**
 * A component's LeaseCandidate for coordinated leader election (client-go
 * tools/leaderelection/leasecandidate.go): created with the lease it wants to lead, its binary and
 * emulation versions and its strategy; renewed when the API server's coordinated controller pings it
 * (sets `spec.pingTime`) and every five minutes, so the controller keeps counting it.
 *
 * Upstream watches its candidate through an informer; this polls it every pollMs (default 1 s),
 * well within the 5 s the controller waits for an answer to a ping.
 */
import { names } from '../../../api/names.js';
import { formatMicroTime, parseMicroTime } from './record.js';
import type { ElectionClock } from './clock.js';
import { systemClock } from './clock.js';
import type { JsonHttp } from './lease-lock.js';

/** Upstream's requeueInterval: a candidate renews at least this often. */
export const CANDIDATE_RENEW_INTERVAL_MS = 5 * 60_000;

export interface LeaseCandidateConfig {
  http: JsonHttp;
  namespace: string;
  /** The candidate's name, which the coordinated controller writes as the lease's holder. */
  name: string;
  /** The lease it competes for. */
  leaseName: string;
  binaryVersion: string;
  emulationVersion: string;
  strategy: string;
  pollMs?: number;
  clock?: ElectionClock;
  onError?: (error: unknown) => void;
}

export const leaseCandidatesPath = (namespace: string): string =>
  `/apis/${names().groups.coordination}/v1beta1/namespaces/${encodeURIComponent(namespace)}/leasecandidates`;

interface CandidateObject {
  metadata?: Record<string, unknown>;
  spec?: Record<string, unknown>;
  [key: string]: unknown;
}

export class LeaseCandidate {
  private readonly clock: ElectionClock;

  constructor(private readonly c: LeaseCandidateConfig) {
    this.clock = c.clock ?? systemClock;
  }

  private get path(): string {
    return `${leaseCandidatesPath(this.c.namespace)}/${encodeURIComponent(this.c.name)}`;
  }

  /** ensureLease: creates the candidate, or renews it when pinged or due; true when it wrote. */
  async ensure(): Promise<boolean> {
    const now = this.clock.now();
    const reply = await this.c.http.get(this.path);
    if (reply.status === 404) {
      const created = await this.c.http.post(leaseCandidatesPath(this.c.namespace), {
        apiVersion: `${names().groups.coordination}/v1beta1`,
        kind: 'LeaseCandidate',
        metadata: { name: this.c.name, namespace: this.c.namespace },
        spec: {
          leaseName: this.c.leaseName,
          binaryVersion: this.c.binaryVersion,
          emulationVersion: this.c.emulationVersion,
          strategy: this.c.strategy,
          renewTime: formatMicroTime(now),
        },
      });
      if (created.status !== 201 && created.status !== 200) throw new Error(`creating LeaseCandidate ${this.c.name}: HTTP ${created.status}`);
      return true;
    }
    if (reply.status !== 200) throw new Error(`reading LeaseCandidate ${this.c.name}: HTTP ${reply.status}`);
    const current = reply.body as CandidateObject;
    const spec = current.spec ?? {};
    const renewTime = parseMicroTime(spec.renewTime as string | undefined);
    const pinged = spec.pingTime !== undefined && spec.pingTime !== null;
    if (!pinged && renewTime !== undefined && now - renewTime < CANDIDATE_RENEW_INTERVAL_MS) return false;
    const { pingTime: _ping, ...rest } = spec;
    const updated = await this.c.http.put(this.path, { ...current, spec: { ...rest, renewTime: formatMicroTime(now) } });
    if (updated.status !== 200) throw new Error(`renewing LeaseCandidate ${this.c.name}: HTTP ${updated.status}`);
    return true;
  }

  /** Keeps the candidate until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.ensure();
      } catch (error) {
        this.c.onError?.(error);
      }
      await this.clock.sleep(this.c.pollMs ?? 1000, signal);
    }
  }
}
