/**
 * Priority and fairness's store side (upstream's config consumer and config producer):
 * - watches FlowSchemas and PriorityLevelConfigurations and puts each new set in effect in the
 *   FlowControl (the mandatory objects stand in, in memory, while missing from the store, as upstream);
 * - writes each FlowSchema's `Dangling` condition (True when it names a level that does not exist);
 * - keeps the bootstrap objects: mandatory ones always exist with upstream's spec (a deletion or an
 *   edit is undone at once), suggested ones are created when missing and their spec is put back only
 *   while their autoupdate-spec annotation says true (no annotation: while never edited, generation 1).
 *   Upstream's producer checks once a minute; reacting to the watch restores a deleted mandatory
 *   object as soon as its deletion is seen, and the periodic pass covers the rest.
 */
import {names} from '../../../../api/names.js';
import {builtinResources, type ResourceInfo} from '../../../../api/resources.js';
import {ApiError} from '../../../../api/status.js';
import {jsonEqual, type JsonObject} from '../../../../patch/types.js';
import type {Clock, TimerHandle} from '../../../shared/clock.js';
import {AdmissionChain} from '../../admission/chain.js';
import {RegistryStore, type WriteContext} from '../../rest/registry-store.js';
import type {Store} from '../../storage/store.js';
import {resourceKeyPrefix} from '../../storage-keys.js';
import {StoreInformer} from '../../store-informer.js';
import {mandatoryFlowSchemas, mandatoryPriorityLevels, suggestedFlowSchemas, suggestedPriorityLevels} from './bootstrap.js';
import type {FlowControl} from './flow-control.js';
import type {FlowSchema, FlowSchemaCondition, PriorityLevelConfiguration} from './types.js';

/** Upstream's field managers of the two halves. */
const PRODUCER: WriteContext = {user: {name: 'system:apiserver', groups: ['system:masters']}, dryRun: false, fieldManager: 'api-priority-and-fairness-config-producer-v1'};
const CONSUMER: WriteContext = {...PRODUCER, fieldManager: 'api-priority-and-fairness-config-consumer-v1', subresource: 'status'};

export interface ConfigControllerOptions {
  store: Store;
  keyPrefix: string;
  flowControl: FlowControl;
  clock: Clock;
  /** How often the bootstrap objects are checked besides on changes (upstream: a minute). */
  ensureIntervalMs?: number;
  log: (message: string, ...kv: unknown[]) => void;
}

export class ConfigController {
  private readonly schemas = new Map<string, FlowSchema>();
  private readonly levels = new Map<string, PriorityLevelConfiguration>();
  private readonly informer: StoreInformer;
  private readonly schemaStore: RegistryStore;
  private readonly levelStore: RegistryStore;
  private scheduled = false;
  private stopped = false;
  private timer?: TimerHandle;
  private ensuring: Promise<void> = Promise.resolve();

  constructor(private readonly options: ConfigControllerOptions) {
    const group = names().groups.flowcontrol;
    const info = (plural: string) => builtinResources().find((r) => r.group === group && r.plural === plural) as ResourceInfo;
    const registry = (plural: string) =>
      new RegistryStore(info(plural), {store: options.store, clock: {now: () => new Date(options.clock.now())}, keyPrefix: options.keyPrefix.replace(/\/+$/, ''), admission: new AdmissionChain([])});
    this.schemaStore = registry('flowschemas');
    this.levelStore = registry('prioritylevelconfigurations');
    const track = <T extends {metadata: {name: string}}>(map: Map<string, T>) => ({
      apply: (object: Record<string, unknown>) => {
        const typed = object as unknown as T;
        map.set(typed.metadata.name, typed);
        this.schedule();
      },
      remove: (object: Record<string, unknown>) => {
        map.delete((object as unknown as T).metadata.name);
        this.schedule();
      },
    });
    this.informer = new StoreInformer(
      options.store,
      new Map([
        [resourceKeyPrefix(options.keyPrefix, group, 'flowschemas'), track(this.schemas)],
        [resourceKeyPrefix(options.keyPrefix, group, 'prioritylevelconfigurations'), track(this.levels)],
      ]),
      (error) => options.log('Priority and fairness informer error', 'err', error),
    );
  }

  get synced(): boolean {
    return this.informer.synced;
  }

  start(): void {
    void this.informer.start();
    // The first rebuild once both kinds are listed (an empty list calls no handler).
    const whenSynced = () => {
      if (this.stopped) return;
      if (this.informer.synced) this.schedule();
      else this.options.clock.setTimeout(whenSynced, 20).unref?.();
    };
    whenSynced();
    const every = this.options.ensureIntervalMs ?? 60_000;
    const tick = () => {
      if (this.stopped) return;
      this.queueEnsure();
      this.timer = this.options.clock.setTimeout(tick, every);
      this.timer.unref?.();
    };
    tick();
  }

  stop(): void {
    this.stopped = true;
    this.informer.stop();
    if (this.timer) this.options.clock.clearTimeout(this.timer);
  }

  /** Changes come in bursts (a list, a kubectl apply of many): one rebuild per burst. */
  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      if (!this.informer.synced) return;
      this.rebuild();
    });
  }

  private rebuild(): void {
    const schemas = [...this.schemas.values()];
    const levels = [...this.levels.values()];
    // Missing mandatory objects stand in from memory until the producer has put them back.
    for (const level of mandatoryPriorityLevels()) if (!this.levels.has(level.metadata.name)) levels.push(level);
    for (const schema of mandatoryFlowSchemas()) if (!this.schemas.has(schema.metadata.name)) schemas.push(schema);
    this.options.flowControl.applyConfig(schemas, levels);
    this.writeDanglingConditions();
    const missingMandatory = mandatoryPriorityLevels().some((l) => !this.levels.has(l.metadata.name)) || mandatoryFlowSchemas().some((s) => !this.schemas.has(s.metadata.name));
    if (missingMandatory || this.mandatoryEdited()) this.queueEnsure();
  }

  private mandatoryEdited(): boolean {
    const edited = <T extends {metadata: {name: string}; spec: unknown}>(wanted: T[], have: Map<string, T>) => wanted.some((w) => {
      const current = have.get(w.metadata.name);
      return current !== undefined && !jsonEqual(current.spec as JsonObject, w.spec as JsonObject);
    });
    return edited(mandatoryPriorityLevels(), this.levels) || edited(mandatoryFlowSchemas(), this.schemas);
  }

  private writeDanglingConditions(): void {
    for (const schema of this.schemas.values()) {
      const levelName = schema.spec.priorityLevelConfiguration.name;
      const exists = this.levels.has(levelName) || mandatoryPriorityLevels().some((l) => l.metadata.name === levelName);
      const wanted: FlowSchemaCondition = exists
        ? {type: 'Dangling', status: 'False', reason: 'Found', message: `This FlowSchema references the PriorityLevelConfiguration object named "${levelName}" and it exists`}
        : {type: 'Dangling', status: 'True', reason: 'NotFound', message: `This FlowSchema references the PriorityLevelConfiguration object named "${levelName}" but there is no such object`};
      const current = schema.status?.conditions?.find((c) => c.type === 'Dangling');
      if (current && current.status === wanted.status && current.reason === wanted.reason && current.message === wanted.message) continue;
      const name = schema.metadata.name;
      this.schemaStore
        .update('', name, CONSUMER, (object) => {
          const status = (object.status ?? {}) as {conditions?: FlowSchemaCondition[]};
          const others = (status.conditions ?? []).filter((c) => c.type !== 'Dangling');
          object.status = {...status, conditions: [...others, {...wanted, lastTransitionTime: new Date(this.options.clock.now()).toISOString().replace(/\.\d+Z$/, 'Z')}]} as unknown as JsonObject;
          return object;
        })
        .catch((error: Error) => this.options.log('Could not write a FlowSchema\'s Dangling condition', 'flowSchema', name, 'err', error.message));
    }
  }

  /** One producer pass at a time; a request while one runs queues one more. */
  private queueEnsure(): void {
    this.ensuring = this.ensuring.then(() => (this.stopped ? undefined : this.ensure())).catch((error: Error) => this.options.log('Could not ensure the priority and fairness bootstrap configuration', 'err', error.message));
  }

  /** Upstream's config producer: mandatory objects as bootstrapped, suggested ones per their annotation. */
  async ensure(): Promise<void> {
    for (const level of mandatoryPriorityLevels()) await this.ensureObject(this.levelStore, level as unknown as JsonObject, true);
    for (const schema of mandatoryFlowSchemas()) await this.ensureObject(this.schemaStore, schema as unknown as JsonObject, true);
    for (const level of suggestedPriorityLevels()) await this.ensureObject(this.levelStore, level as unknown as JsonObject, false);
    for (const schema of suggestedFlowSchemas()) await this.ensureObject(this.schemaStore, schema as unknown as JsonObject, false);
  }

  private async ensureObject(store: RegistryStore, wanted: JsonObject, mandatory: boolean): Promise<void> {
    const annotation = names().annotations.apfAutoupdateSpec;
    const name = (wanted.metadata as {name: string}).name;
    const withAnnotation = {...wanted, metadata: {...(wanted.metadata as JsonObject), annotations: {[annotation]: 'true'}}};
    try {
      await store.update('', name, PRODUCER, (current) => {
        const meta = current.metadata as {annotations?: Record<string, string>; generation?: number};
        const flag = meta.annotations?.[annotation];
        const autoUpdate = mandatory || (flag !== undefined ? flag.toLowerCase() === 'true' : meta.generation === 1);
        if (!autoUpdate) return current;
        if (jsonEqual(current.spec as JsonObject, wanted.spec as JsonObject) && flag === 'true') return current;
        current.spec = wanted.spec as JsonObject;
        meta.annotations = {...meta.annotations, [annotation]: 'true'};
        return current;
      }, {createIfMissing: () => withAnnotation});
    } catch (error) {
      // Another server (or a quick user) created it meanwhile: the next pass looks again.
      if (error instanceof ApiError && (error.status.reason === 'AlreadyExists' || error.status.reason === 'Conflict')) return;
      throw error;
    }
  }
}
