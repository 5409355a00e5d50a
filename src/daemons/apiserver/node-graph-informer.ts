/**
 * Feeds the Node authorizer's graph from the store: pods, persistent volume claims and volumes,
 * and volume attachments, each at the key prefix the REST layer writes it under.
 */
import {NodeGraph} from './authorization/node-graph.js';
import {StoreInformer, type PrefixHandlers} from './store-informer.js';
import {builtinResource} from '../../api/resources.js';
import {names} from '../../api/names.js';
import type {Store} from './storage/store.js';

/** The key prefix of a built-in resource (its catalog entry's, else the catalog's default rule). */
function prefixOf(keyPrefix: string, group: string, plural: string): string {
  const info = builtinResource(group, plural);
  return `${keyPrefix}/${info?.storagePrefix ?? (group === '' || !group.includes('.') ? plural : `${group}/${plural}`)}/`;
}

export class NodeGraphInformer {
  readonly graph = new NodeGraph();
  private readonly informer: StoreInformer;

  constructor(store: Store, keyPrefix: string, onError: (error: Error) => void) {
    const g = this.graph;
    const handlers: Array<[string, string, PrefixHandlers]> = [
      ['', 'pods', {apply: (o) => g.applyPod(o), remove: (o) => g.deletePod(o)}],
      ['', 'persistentvolumeclaims', {apply: (o) => g.applyPersistentVolumeClaim(o), remove: (o) => g.deletePersistentVolumeClaim(o)}],
      ['', 'persistentvolumes', {apply: (o) => g.applyPersistentVolume(o), remove: (o) => g.deletePersistentVolume(o)}],
      [names().groups.storage, 'volumeattachments', {apply: (o) => g.applyVolumeAttachment(o), remove: (o) => g.deleteVolumeAttachment(o)}],
    ];
    this.informer = new StoreInformer(store, new Map(handlers.map(([group, plural, h]) => [prefixOf(keyPrefix, group, plural), h])), onError);
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): void {
    this.informer.stop();
  }
}
