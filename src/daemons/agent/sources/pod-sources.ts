/**
 * The agent's pod sources assembled (upstream makePodSourceConfig): the file source when
 * `--pod-manifest-path` is set, the URL source when `--manifest-url` is set, and in API server
 * mode the API source and the mirror pod manager, all feeding one PodConfig whose listener (the
 * pod workers) hears ADD / UPDATE / DELETE / REMOVE / RECONCILE.
 */
import type { SharedInformerFactory } from '../../../client/informers/factory.js';
import type { Logger } from '../../../lib/klog.js';
import { ApiSource } from './api-source.js';
import { FileSource } from './file-source.js';
import { HttpSource } from './http-source.js';
import { MirrorClient, type MirrorRestClient } from './mirror-client.js';
import { MirrorPodManager } from './mirror-manager.js';
import { PodConfig } from './pod-config.js';
import { isStaticPod, type PodUpdateListener, type ProblemReporter, type SourceName, type SourcePod } from './types.js';

export interface PodSourcesOptions {
  nodeName: string;
  /** `--pod-manifest-path` (staticPodPath); empty: no file source. */
  staticPodPath?: string;
  fileCheckFrequencyMs: number;
  /** `--manifest-url` (staticPodURL); empty: no URL source. */
  staticPodURL?: string;
  staticPodURLHeader?: Record<string, string[]>;
  httpCheckFrequencyMs: number;
  /** API server mode: the agent's informer factory and REST client. Absent: standalone. */
  api?: { factory: SharedInformerFactory; client: MirrorRestClient; mirrorResyncMs?: number };
  listener: PodUpdateListener;
  onProblem?: ProblemReporter;
  logger?: Logger;
  now?: () => Date;
}

export class PodSources {
  readonly config: PodConfig;
  /** The sources configured, in upstream's order. */
  readonly sources: SourceName[];
  readonly mirrors?: MirrorPodManager;
  private readonly file?: FileSource;
  private readonly http?: HttpSource;
  private readonly apiSource?: ApiSource;

  constructor(options: PodSourcesOptions) {
    const { nodeName, onProblem, logger } = options;
    this.config = new PodConfig({ listener: options.listener, onProblem, logger, now: options.now });
    const staticSources: SourceName[] = [];
    const push = (source: SourceName, pods: SourcePod[]) => {
      this.config.set(source, pods);
      if (source !== 'api') this.mirrors?.setStaticPods(this.config.pods().filter(isStaticPod));
    };
    if (options.staticPodPath) {
      staticSources.push('file');
      this.file = new FileSource({ path: options.staticPodPath, nodeName, checkFrequencyMs: options.fileCheckFrequencyMs, push, onProblem, logger });
    }
    if (options.staticPodURL) {
      staticSources.push('http');
      this.http = new HttpSource({
        url: options.staticPodURL,
        headers: options.staticPodURLHeader,
        nodeName,
        checkFrequencyMs: options.httpCheckFrequencyMs,
        push,
        onProblem,
        logger,
      });
    }
    this.sources = [...staticSources];
    if (options.api) {
      this.sources.push('api');
      this.mirrors = new MirrorPodManager({
        client: new MirrorClient({ client: options.api.client, nodeName }),
        sourcesReady: () => this.config.seenAllSources(staticSources),
        resyncMs: options.api.mirrorResyncMs,
        onProblem,
        logger,
      });
      this.apiSource = new ApiSource({ factory: options.api.factory, nodeName, push, onMirrorPods: (mirrors) => this.mirrors?.setMirrorPods(mirrors) });
    }
  }

  start(): void {
    this.mirrors?.start();
    this.file?.start();
    this.http?.start();
    this.apiSource?.start();
  }

  async stop(): Promise<void> {
    this.apiSource?.stop();
    await Promise.all([this.file?.stop(), this.http?.stop(), this.mirrors?.stop()]);
  }

  /** Every configured source has pushed its first set (upstream SeenAllSources). */
  allSourcesReady(): boolean {
    return this.config.seenAllSources(this.sources);
  }
}
