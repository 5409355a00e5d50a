/**
 * The root CA publisher (upstream pkg/controller/certificates/rootcacertpublisher, controller name
 * `root-ca-cert-publisher`): every namespace gets the config map `<product>-root-ca.crt` whose `ca.crt`
 * lets a pod verify the API server (the ServiceAccount admission plugin projects it next to the
 * pod's token). The CA is `--root-ca-file`, else the CA of the controller manager's own orchconfig,
 * as upstream. A changed or deleted config map is put back; terminating namespaces are left alone.
 */
import {readFile} from 'node:fs/promises';
import {names} from '../../../api/names.js';
import {ApiStatusError} from '../../../client/errors.js';
import {deletedObject, RateLimitingQueue, type ApiObject, type ResourceRef} from '../../../client/informers/index.js';
import {runQueueWorkers} from './queue-workers.js';
import type {ControllerContext, ControllerDescriptor, RunningController} from './types.js';

const NAMESPACES: ResourceRef = {group: '', version: 'v1', resource: 'namespaces'};
const CONFIG_MAPS: ResourceRef = {group: '', version: 'v1', resource: 'configmaps'};
const WORKERS = 1;
/** Upstream's description annotation on the config map. */
const DESCRIPTION =
  'Contains a CA bundle that can be used to verify the API server when using internal endpoints such as the internal service IP. No other usage is guaranteed across distributions of clusters.';

interface Namespace extends ApiObject {
  status?: {phase?: string};
}
interface ConfigMap extends ApiObject {
  data?: Record<string, string>;
}

export type PublishAction = {kind: 'none'} | {kind: 'create'; body: ConfigMap} | {kind: 'update'; body: ConfigMap};

/** Pure: what the namespace's config map needs so that it carries `caPem` (upstream's syncNamespace). */
export function publishAction(namespace: Namespace | undefined, existing: ConfigMap | undefined, caPem: string): PublishAction {
  const name = names().rootCaConfigMap;
  const ns = namespace?.metadata?.name;
  if (!ns || namespace?.status?.phase === 'Terminating' || (namespace?.metadata as {deletionTimestamp?: string} | undefined)?.deletionTimestamp) return {kind: 'none'};
  const descriptionKey = `${names().labelDomain}/description`;
  if (!existing) {
    return {kind: 'create', body: {apiVersion: 'v1', kind: 'ConfigMap', metadata: {name, namespace: ns, annotations: {[descriptionKey]: DESCRIPTION}}, data: {'ca.crt': caPem}}};
  }
  const data = existing.data ?? {};
  if (data['ca.crt'] === caPem && Object.keys(data).length === 1 && existing.metadata?.annotations?.[descriptionKey] === DESCRIPTION) return {kind: 'none'};
  // Upstream keeps other annotations, replaces the data and sets its description.
  return {
    kind: 'update',
    body: {...existing, metadata: {...existing.metadata, annotations: {...existing.metadata?.annotations, [descriptionKey]: DESCRIPTION}}, data: {'ca.crt': caPem}},
  };
}

async function rootCa(ctx: ControllerContext): Promise<string | undefined> {
  const file = ctx.options['root-ca-file'];
  if (typeof file === 'string' && file !== '' && file !== 'none') {
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      throw new Error(`--root-ca-file ${file}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  return ctx.clientCaPem;
}

async function start(ctx: ControllerContext, signal: AbortSignal): Promise<RunningController> {
  const caPem = await rootCa(ctx);
  if (!caPem) {
    ctx.logger.info('"root-ca-cert-publisher" is disabled: no --root-ca-file and the orchconfig names no CA');
    return {done: Promise.resolve(), snapshot: () => ({name: 'root-ca-cert-publisher', workers: 0, queueDepth: 0, details: {state: 'disabled'}})};
  }
  const configMapName = names().rootCaConfigMap;
  const queue = new RateLimitingQueue<string>({name: 'root_ca_cert_publisher', metrics: ctx.metrics});
  const namespaces = ctx.informers.informerFor<Namespace>(NAMESPACES);
  const configMaps = ctx.informers.informerFor<ConfigMap>(CONFIG_MAPS);
  const ours = (cm: ApiObject) => (cm.metadata?.name === configMapName ? cm.metadata?.namespace : undefined);
  const registrations = [
    namespaces.addEventHandler({onAdd: (ns) => queue.add(ns.metadata!.name!), onUpdate: (_, ns) => queue.add(ns.metadata!.name!)}),
    configMaps.addEventHandler({
      onUpdate: (_, cm) => {
        const ns = ours(cm);
        if (ns) queue.add(ns);
      },
      onDelete: (cm) => {
        const ns = ours(deletedObject(cm));
        if (ns) queue.add(ns);
      },
    }),
  ];

  const sync = async (ns: string): Promise<void> => {
    const action = publishAction(namespaces.indexer.getByKey(ns), configMaps.indexer.getByKey(`${ns}/${configMapName}`), caPem);
    if (action.kind === 'none') return;
    const path = `/api/v1/namespaces/${encodeURIComponent(ns)}/configmaps`;
    try {
      if (action.kind === 'create') await ctx.client.request({method: 'POST', path, body: action.body});
      else await ctx.client.request({method: 'PUT', path: `${path}/${encodeURIComponent(configMapName)}`, body: action.body});
    } catch (error) {
      // Created meanwhile or the namespace is going away (403 NamespaceTerminating): the next event decides.
      if (error instanceof ApiStatusError && (error.code === 409 || error.code === 403 || error.code === 404)) return;
      throw error;
    }
  };

  const done = runQueueWorkers({ctx, signal, queue, workers: WORKERS, sync, name: 'root-ca-cert-publisher', registrations});
  return {done, snapshot: () => ({name: 'root-ca-cert-publisher', workers: WORKERS, queueDepth: queue.len()})};
}

export const rootCaPublisherController: ControllerDescriptor = {name: 'root-ca-cert-publisher', enabledByDefault: true, start};
