/**
 * The API server pod source (upstream pkg/kubelet/config/apiserver.go): the pods bound to this
 * node, from a shared pod informer with the field selector `spec.nodeName=<node>`. After the
 * informer's first list and after every change, the whole cached set is pushed (SET), a burst of
 * events (the initial list) as one push.
 *
 * Mirror pods (annotation `orch.io/config.mirror`) are split off and never pushed as pods to run:
 * a static pod is defined by its file or URL, so what the API server says about its mirror only
 * tells the mirror pod manager whether the mirror must be created again.
 */
import type { SharedIndexInformer } from '../../../client/informers/informer.js';
import type { SharedInformerFactory } from '../../../client/informers/factory.js';
import { isMirrorPod, type SetPods, type SourcePod } from './types.js';

export interface ApiSourceOptions {
  /** The agent's informer factory (listWatcherFor: clientListWatcher over its RestClient). */
  factory: SharedInformerFactory;
  nodeName: string;
  push: SetPods;
  /** Told of the current mirror pods on this node whenever they may have changed. */
  onMirrorPods?: (mirrors: SourcePod[]) => void;
}

/** The informer request of the pods bound to a node. Pure. */
export function nodePodsRef(nodeName: string) {
  return { group: '', version: 'v1', resource: 'pods', fieldSelector: `spec.nodeName=${nodeName}` };
}

/** Splits the node's pods into pods to run and mirror pods. Pure. */
export function splitMirrorPods(pods: readonly SourcePod[]): { pods: SourcePod[]; mirrors: SourcePod[] } {
  const result = { pods: [] as SourcePod[], mirrors: [] as SourcePod[] };
  for (const pod of pods) (isMirrorPod(pod) ? result.mirrors : result.pods).push(pod);
  return result;
}

export class ApiSource {
  readonly informer: SharedIndexInformer<SourcePod>;
  private scheduled = false;
  private synced = false;
  private registration?: { remove(): void };

  constructor(private readonly options: ApiSourceOptions) {
    this.informer = options.factory.informerFor<SourcePod>(nodePodsRef(options.nodeName));
  }

  /** Registers on the informer and starts the factory's informers; pushes once synced. */
  start(): void {
    const changed = () => this.schedulePush();
    this.registration = this.informer.addEventHandler({ onAdd: changed, onUpdate: changed, onDelete: changed });
    this.options.factory.start();
    void this.informer.waitForSync().then((synced) => {
      if (!synced) return;
      this.synced = true;
      this.schedulePush();
    });
  }

  /** Stops listening; the shared informer itself is the factory's to stop. */
  stop(): void {
    this.registration?.remove();
    this.registration = undefined;
  }

  /** One push per burst of events: the first list arrives as many adds. */
  private schedulePush(): void {
    if (!this.synced || this.scheduled || !this.registration) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      if (!this.registration) return;
      const { pods, mirrors } = splitMirrorPods(this.informer.indexer.list());
      this.options.push('api', pods);
      this.options.onMirrorPods?.(mirrors);
    });
  }
}
