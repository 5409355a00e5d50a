/**
 * Upstream's storage metrics (apiserver/pkg/storage/etcd3/metrics), kept under upstream's names so
 * dashboards built for them work: the latency and count of each store request by operation, group
 * and resource (`etcd_request_duration_seconds`, `etcd_requests_total`, `etcd_request_errors_total`,
 * whichever engine serves them: SQLite too), the stored objects per resource refreshed every
 * `--kvstore-count-metric-poll-period`, and the database size every `--kvstore-db-metric-poll-interval`
 * (SQLite: page_count * page_size; etcd: the status call's dbSize).
 */
import type {Store} from '../storage/store.js';
import type {MetricsRegistry} from '../../shared/metrics/index.js';
import {REQUEST_DURATION_BUCKETS} from './request-metrics.js';

type Resolve = (key: string) => {group: string; resource: string} | undefined;

export interface StorageMetrics {
  /** Wraps an engine so each request is timed (compose with the other engine wrappers). */
  instrument(engine: Store): Store;
  /** Starts the pollers; returns their stop. */
  startPolling(options: PollingOptions): () => void;
}

export interface PollingOptions {
  /** The resources to count, with the key prefix each is stored under. */
  resources: () => Array<{group: string; resource: string; prefix: string}>;
  /** The store to count in (the cached front: counting reads memory). */
  store: Store;
  /** The raw engines, for their size. */
  engines: () => Store[];
  countPeriodMs: number;
  dbSizePeriodMs: number;
  onError?: (error: unknown) => void;
}

export function storageMetrics(registry: MetricsRegistry, resolve: Resolve): StorageMetrics {
  const latency = registry.histogram({
    name: 'etcd_request_duration_seconds',
    help: 'Etcd request latency in seconds for each operation and object type.',
    labelNames: ['operation', 'group', 'resource'],
    buckets: REQUEST_DURATION_BUCKETS,
  });
  const requests = registry.counter({name: 'etcd_requests_total', help: 'Etcd request counts for each operation and object type.', labelNames: ['operation', 'group', 'resource']});
  const errors = registry.counter({name: 'etcd_request_errors_total', help: 'Etcd failed request counts for each operation and object type.', labelNames: ['operation', 'group', 'resource']});
  const objects = registry.gauge({
    name: 'apiserver_storage_objects',
    help: '[DEPRECATED, consider using apiserver_resource_objects instead] Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
    labelNames: ['resource'],
    stabilityLevel: 'STABLE',
    deprecatedVersion: '1.34.0',
  });
  const resourceObjects = registry.gauge({
    name: 'apiserver_resource_objects',
    help: 'Number of stored objects at the time of last check split by kind. In case of a fetching error, the value will be -1.',
    labelNames: ['group', 'resource'],
  });
  const size = registry.gauge({name: 'apiserver_storage_size_bytes', help: 'Size of the storage database file physically allocated in bytes.', labelNames: ['storage_cluster_id'], stabilityLevel: 'STABLE'});

  const timed = async <T>(operation: string, key: string, call: () => Promise<T>): Promise<T> => {
    const start = performance.now();
    const r = resolve(key);
    const labels = {operation, group: r?.group ?? '', resource: r?.resource ?? ''};
    try {
      return await call();
    } catch (error) {
      errors.inc(labels);
      throw error;
    } finally {
      latency.observe(labels, (performance.now() - start) / 1000);
      requests.inc(labels);
    }
  };

  return {
    instrument(engine) {
      // Only the requests upstream times; everything else reaches the engine itself (a proxy, not a
      // prototype copy, so the engine's own state is never shadowed).
      const ops: Partial<Store> = {
        get: (key) => timed('get', key, () => engine.get(key)),
        list: (prefix, options) => timed('listWithCount', prefix, () => engine.list(prefix, options)),
        create: (key, value) => timed('create', key, () => engine.create(key, value)),
        update: (key, value, rev) => timed('update', key, () => engine.update(key, value, rev)),
        delete: (key, rev) => timed('delete', key, () => engine.delete(key, rev)),
      };
      return new Proxy(engine, {
        get(target, prop, receiver) {
          if (typeof prop === 'string' && prop in ops) return ops[prop as keyof Store];
          const value = Reflect.get(target, prop, receiver) as unknown;
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
    },
    startPolling(o) {
      const timers: NodeJS.Timeout[] = [];
      if (o.countPeriodMs > 0) {
        const count = async () => {
          for (const r of o.resources()) {
            const qualified = r.group ? `${r.resource}.${r.group}` : r.resource;
            try {
              const n = (await o.store.list(r.prefix)).items.length;
              objects.set({resource: qualified}, n);
              resourceObjects.set({group: r.group, resource: r.resource}, n);
            } catch (error) {
              objects.set({resource: qualified}, -1);
              resourceObjects.set({group: r.group, resource: r.resource}, -1);
              o.onError?.(error);
            }
          }
        };
        void count();
        timers.push(setInterval(() => void count(), o.countPeriodMs));
      }
      if (o.dbSizePeriodMs > 0) {
        const measure = async () => {
          const engines = o.engines();
          for (const [i, engine] of engines.entries()) {
            try {
              const bytes = await engine.dbSizeBytes?.();
              if (bytes !== undefined) size.set({storage_cluster_id: `${engine.engine}-${i}`}, bytes);
            } catch (error) {
              o.onError?.(error);
            }
          }
        };
        void measure();
        timers.push(setInterval(() => void measure(), o.dbSizePeriodMs));
      }
      for (const t of timers) t.unref();
      return () => timers.forEach(clearInterval);
    },
  };
}
