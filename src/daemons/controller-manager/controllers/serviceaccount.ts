/**
 * The service account controller (upstream pkg/controller/serviceaccount/serviceaccounts_controller.go):
 * every active namespace has a `default` ServiceAccount; one deleted is created again. A namespace
 * is synced when it appears or changes, and when one of its service accounts is deleted.
 * Upstream runs it with one worker and no option for more; so does orch.
 */
import { ApiStatusError } from '../../../client/errors.js';
import { deletedObject, RateLimitingQueue, type ApiObject, type ResourceRef } from '../../../client/informers/index.js';
import type { ControllerContext, ControllerDescriptor, RunningController } from './types.js';

/** The service accounts every namespace gets (upstream's DefaultServiceAccountsControllerOptions). */
export const SERVICE_ACCOUNTS_TO_ENSURE = ['default'] as const;

const NAMESPACES: ResourceRef = { group: '', version: 'v1', resource: 'namespaces' };
const SERVICE_ACCOUNTS: ResourceRef = { group: '', version: 'v1', resource: 'serviceaccounts' };
const WORKERS = 1;

interface Namespace extends ApiObject {
  status?: { phase?: string };
}

/** Pure: the service accounts a namespace lacks; none unless it is Active (a terminating one takes no new content). */
export function missingServiceAccounts(namespace: Namespace | undefined, exists: (name: string) => boolean): string[] {
  if (namespace?.status?.phase !== 'Active') return [];
  return SERVICE_ACCOUNTS_TO_ENSURE.filter((name) => !exists(name));
}

/** The API server refused content because the namespace is being deleted: nothing to do there. */
function isNamespaceTerminating(error: unknown): boolean {
  if (!(error instanceof ApiStatusError) || error.code !== 403) return false;
  return Boolean(error.details?.causes?.some((c) => c.reason === 'NamespaceTerminating')) || /being terminated/.test(error.message);
}

function start(ctx: ControllerContext, signal: AbortSignal): RunningController {
  const queue = new RateLimitingQueue<string>({ name: 'serviceaccount', metrics: ctx.metrics });
  const namespaces = ctx.informers.informerFor<Namespace>(NAMESPACES);
  const serviceAccounts = ctx.informers.informerFor(SERVICE_ACCOUNTS);

  const registrations = [
    namespaces.addEventHandler({
      onAdd: (ns) => queue.add(ns.metadata!.name!),
      onUpdate: (_, ns) => queue.add(ns.metadata!.name!),
    }),
    serviceAccounts.addEventHandler({
      onDelete: (object) => {
        const namespace = deletedObject(object).metadata?.namespace;
        if (namespace) queue.add(namespace);
      },
    }),
  ];

  const sync = async (name: string): Promise<void> => {
    const namespace = namespaces.indexer.getByKey(name);
    const missing = missingServiceAccounts(namespace, (sa) => serviceAccounts.indexer.getByKey(`${name}/${sa}`) !== undefined);
    const failures: string[] = [];
    for (const sa of missing) {
      try {
        await ctx.client.request({
          method: 'POST',
          path: `/api/v1/namespaces/${encodeURIComponent(name)}/serviceaccounts`,
          body: { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: name } },
        });
        ctx.logger.v(2).info('Created service account', 'namespace', name, 'serviceAccount', sa);
      } catch (error) {
        // Already there (our cache lags) or the namespace is going away: both are fine.
        if (error instanceof ApiStatusError && error.code === 409) continue;
        if (isNamespaceTerminating(error)) continue;
        failures.push(error instanceof Error ? error.message : String(error));
      }
    }
    if (failures.length) throw new Error(failures.join('; '));
  };

  const worker = async () => {
    for (;;) {
      const name = await queue.get();
      if (name === undefined) return;
      try {
        await sync(name);
        queue.forget(name);
      } catch (error) {
        ctx.logger.error('Syncing service accounts failed', 'namespace', name, 'err', String(error));
        queue.addRateLimited(name);
      } finally {
        queue.done(name);
      }
    }
  };

  const done = (async () => {
    ctx.informers.start();
    const synced = await Promise.all([namespaces.waitForSync({ signal }), serviceAccounts.waitForSync({ signal })]);
    const running = !signal.aborted && synced.every(Boolean) ? Array.from({ length: WORKERS }, worker) : [];
    if (!signal.aborted) await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    for (const registration of registrations) registration.remove();
    await queue.shutDownWithDrain();
    await Promise.all(running);
  })();

  return {
    done,
    snapshot: () => ({ name: 'serviceaccount', workers: WORKERS, queueDepth: queue.len() }),
  };
}

export const serviceAccountController: ControllerDescriptor = {
  name: 'serviceaccount',
  enabledByDefault: true,
  start,
};

export default serviceAccountController;
