/**
 * The webhook configurations in effect, kept in memory from a watch of the store (upstream's
 * configuration manager over an informer): each configuration's webhooks are parsed and compiled
 * when it changes, and every request reads the current list, configurations sorted by name and
 * webhooks in their order, as upstream calls them.
 */
import {stringAt} from '../../../rest/objects.js';
import type {JsonObject} from '../../../../../patch/types.js';
import type {AdmissionWatch} from '../../interfaces.js';
import {webhookAccessors, type WebhookAccessor} from './accessors.js';

export class WebhookSource {
  private readonly byName = new Map<string, WebhookAccessor[]>();
  private sorted: WebhookAccessor[] | undefined = [];
  private watch: AdmissionWatch | undefined;

  constructor(private readonly mutating: boolean) {}

  /** Feeds the source (the plugin connects it to the store's watch). */
  attach(watch: AdmissionWatch): void {
    this.watch = watch;
  }

  get synced(): boolean {
    return this.watch?.synced ?? true;
  }

  apply(configuration: JsonObject): void {
    this.byName.set(stringAt(configuration, 'metadata', 'name') ?? '', webhookAccessors(configuration, this.mutating));
    this.sorted = undefined;
  }

  remove(configuration: JsonObject): void {
    this.byName.delete(stringAt(configuration, 'metadata', 'name') ?? '');
    this.sorted = undefined;
  }

  has(configurationName: string): boolean {
    return this.byName.has(configurationName);
  }

  webhooks(): readonly WebhookAccessor[] {
    this.sorted ??= [...this.byName.keys()].sort().flatMap((name) => this.byName.get(name)!);
    return this.sorted;
  }

  stop(): void {
    this.watch?.stop();
  }
}
