/**
 * ResourceQuota admission (upstream's k8s.io/apiserver/pkg/admission/plugin/resourcequota): a
 * validating plugin that refuses a namespaced create or update exceeding a quota of its namespace
 * and charges what it admits to the quotas' status.used, before the object is stored. Writes to
 * subresources, events (upstream's ignored resource) and namespaces themselves are not counted.
 */
import {names} from '../../../../../api/names.js';
import type {JsonObject} from '../../../../../patch/types.js';
import {evaluatorFor} from '../../../../shared/quota/evaluators.js';
import type {AdmissionAttributes, AdmissionObjects, AdmissionPlugin, AdmissionPluginContext} from '../../interfaces.js';
import {parseResourceQuotaConfiguration} from './config.js';
import {QuotaChargeQueue, type QuotaAccess} from './evaluator.js';

/**
 * Resources quota never counts (upstream's DefaultIgnoredResources): virtual ones that are not
 * stored (bindings, reviews) and events, which were never quota-ed.
 */
function ignoredResources(): Set<string> {
  const g = names().groups;
  return new Set([
    '/bindings', '/componentstatuses', `${g.authentication}/tokenreviews`, `${g.authentication}/selfsubjectreviews`,
    `${g.authorization}/subjectaccessreviews`, `${g.authorization}/selfsubjectaccessreviews`,
    `${g.authorization}/localsubjectaccessreviews`, `${g.authorization}/selfsubjectrulesreviews`,
    '/events', `${g.events}/events`,
  ]);
}

/** The quota access of the server's registries. */
export function registryQuotaAccess(objects: AdmissionObjects): QuotaAccess {
  return {
    list: (namespace) => objects.list('', 'resourcequotas', namespace),
    updateStatus: (quota: JsonObject) => {
      const namespace = String((quota.metadata as JsonObject | undefined)?.namespace ?? '');
      return objects.update('', 'resourcequotas', namespace, quota, 'status');
    },
  };
}

export class ResourceQuotaAdmission implements AdmissionPlugin {
  readonly name = 'ResourceQuota';
  private readonly queue: QuotaChargeQueue;
  private readonly ignored = ignoredResources();

  /**
   * Which namespaces have quotas, kept by a watch (upstream's quota lister): a write in a namespace
   * without one needs no quota read at all. Quotas themselves are still read live before charging.
   */
  private readonly withQuotas = new Map<string, Set<string>>();
  private readonly quotaWatch?: ReturnType<NonNullable<AdmissionPluginContext['watch']>>;
  private readonly limitsResources: boolean;

  constructor(context: Pick<AdmissionPluginContext, 'configuration' | 'configurationSource' | 'clock' | 'watch'>, access: QuotaAccess) {
    const configuration = parseResourceQuotaConfiguration(context.configuration, context.configurationSource);
    this.queue = new QuotaChargeQueue(access, configuration.limitedResources, context.clock);
    this.limitsResources = configuration.limitedResources.length > 0;
    const key = (o: {metadata?: unknown}) => {
      const m = (o.metadata ?? {}) as {namespace?: string; name?: string};
      return [m.namespace ?? '', m.name ?? ''] as const;
    };
    this.quotaWatch = context.watch?.('', 'resourcequotas', {
      apply: (o) => {
        const [namespace, name] = key(o);
        let names = this.withQuotas.get(namespace);
        if (!names) this.withQuotas.set(namespace, (names = new Set()));
        names.add(name);
      },
      remove: (o) => {
        const [namespace, name] = key(o);
        const names = this.withQuotas.get(namespace);
        names?.delete(name);
        if (names?.size === 0) this.withQuotas.delete(namespace);
      },
    });
  }

  /** No quota can apply: the watch is in step and the namespace has none (and no resource is limited without one). */
  private quotaFree(namespace: string): boolean {
    return Boolean(this.quotaWatch?.synced) && !this.limitsResources && !this.withQuotas.has(namespace);
  }

  handles(operation: AdmissionAttributes['operation']): boolean {
    return operation === 'CREATE' || operation === 'UPDATE';
  }

  async validate(attributes: AdmissionAttributes): Promise<void> {
    const {resource} = attributes;
    if (attributes.subresource !== '' || !attributes.namespace || !resource.namespaced) return;
    if (resource.group === '' && resource.kind === 'Namespace') return;
    if (this.ignored.has(`${resource.group}/${resource.plural}`)) return;
    if (this.quotaFree(attributes.namespace)) return;
    const evaluator = evaluatorFor(resource.group, resource.plural);
    if (!evaluator.handles(attributes.operation, attributes.subresource, attributes.object, attributes.oldObject)) return;
    await this.queue.evaluate(
      {
        operation: attributes.operation,
        subresource: attributes.subresource,
        group: resource.group,
        resource: resource.plural,
        namespace: attributes.namespace,
        name: attributes.name,
        object: attributes.object,
        oldObject: attributes.oldObject,
      },
      evaluator,
      attributes.dryRun,
    );
  }

  close(): void {
    this.queue.close();
    this.quotaWatch?.stop();
  }
}

export function createResourceQuotaAdmission(context: AdmissionPluginContext): ResourceQuotaAdmission {
  return new ResourceQuotaAdmission(context, registryQuotaAccess(context.objects));
}
