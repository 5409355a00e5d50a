/**
 * Keeps a mirror pod in the API server for each static pod: creates missing mirrors, recreates
 * mirrors that were deleted, changed through the API (hash annotation no longer the static pod's)
 * or are terminating, and deletes mirrors whose static pod is gone. Runs the pure plan
 * (mirror-plan.ts) whenever the static pods or the mirror pods change, one run at a time, and
 * again every `resyncMs` so a failure (no Node registered yet, API server away) is retried.
 */
import { klog, type Logger } from '../../../lib/klog.js';
import { mirrorPodOf, type MirrorPodClient } from './mirror-client.js';
import { planMirrorPods, type MirrorAction } from './mirror-plan.js';
import { podFullName, type ProblemReporter, type SourcePod } from './types.js';

export interface MirrorPodManagerOptions {
  client: MirrorPodClient;
  /** True once every static source has been read (PodConfig.seenAllSources): orphans may go. */
  sourcesReady: () => boolean;
  /** Default 10 s; 0: no periodic retry. */
  resyncMs?: number;
  onProblem?: ProblemReporter;
  logger?: Logger;
}

export class MirrorPodManager {
  private readonly log: Logger;
  private staticPods: SourcePod[] = [];
  private mirrorPods = new Map<string, SourcePod>();
  private running?: Promise<void>;
  private again = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly options: MirrorPodManagerOptions) {
    this.log = options.logger ?? klog('mirror-manager.ts');
  }

  start(): void {
    const resync = this.options.resyncMs ?? 10_000;
    if (resync > 0 && !this.timer) this.timer = setInterval(() => void this.sync(), resync);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** The current static pods (file and URL sources). */
  setStaticPods(pods: readonly SourcePod[]): void {
    this.staticPods = [...pods];
    void this.sync();
  }

  /** The mirror pods the API server has on this node (from the API source). */
  setMirrorPods(pods: readonly SourcePod[]): void {
    this.mirrorPods = new Map(pods.map((p) => [podFullName(p), p]));
    void this.sync();
  }

  /** One reconciliation; a call during one causes one more after it. Never rejects. */
  sync(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        const actions = planMirrorPods(this.staticPods, [...this.mirrorPods.values()], this.options.sourcesReady());
        for (const action of actions) {
          if (this.stopped) return;
          await this.apply(action);
        }
      } while (this.again && !this.stopped);
    })().finally(() => (this.running = undefined));
    return this.running;
  }

  private async apply(action: MirrorAction): Promise<void> {
    try {
      if (action.type === 'create') {
        const pod = action.staticPod;
        this.log.v(4).info('Creating a mirror pod for static pod', 'pod', `${pod.metadata.namespace}/${pod.metadata.name}`);
        await this.options.client.createMirrorPod(pod);
        // Until the watch reports it, assume the mirror is there, so it is not created twice.
        this.mirrorPods.set(podFullName(pod), mirrorPodOf(pod));
      } else {
        this.log.info('Deleting a mirror pod', 'pod', `${action.namespace}/${action.name}`, 'podUID', action.uid ?? '', 'reason', action.reason);
        await this.options.client.deleteMirrorPod(action.namespace, action.name, action.uid);
        this.mirrorPods.delete(`${action.name}_${action.namespace}`);
      }
    } catch (error) {
      const name = action.type === 'create' ? `${action.staticPod.metadata.namespace}/${action.staticPod.metadata.name}` : `${action.namespace}/${action.name}`;
      const message = `failed to ${action.type} mirror pod ${name}: ${(error as Error).message}`;
      this.log.error('Mirror pod sync failed', 'pod', name, 'err', (error as Error).message);
      this.options.onProblem?.({ source: 'api', origin: name, message });
    }
  }
}
