/**
 * The informer machinery of orch's controller manager and agent (client-go's tools/cache and
 * util/workqueue). Typical use by a controller:
 *
 *   const factory = new SharedInformerFactory({
 *     listWatcherFor: (ref, path) => clientListWatcher(restClient, path),   // or fetchListWatcher(url, path)
 *     resyncPeriodMs: () => randomResyncPeriod(minResyncMs),
 *   });
 *   const pods = factory.informerFor({ group: '', version: 'v1', resource: 'pods' });
 *   const queue = new RateLimitingQueue<string>({ name: 'replicaset', metrics });  // metrics: one PrometheusWorkqueueMetrics per registry
 *   pods.addEventHandler({ onAdd: (p) => queue.add(metaNamespaceKey(p)), ... });
 *   factory.start();
 *   await factory.waitForCacheSync();
 *   while (await processNextItem(queue, (key) => sync(key)));                      // one loop per worker
 */
export * from './types.js';
export * from './clock.js';
export * from './errors.js';
export * from './jitter.js';
export * from './backoff.js';
export * from './store.js';
export * from './resource.js';
export * from './reflector.js';
export * from './informer.js';
export * from './factory.js';
export * from './fetch-list-watcher.js';
export * from './client-list-watcher.js';
export * from './ndjson.js';
export * from './workqueue/metrics.js';
export * from './workqueue/queue.js';
export * from './workqueue/delaying-queue.js';
export * from './workqueue/rate-limiters.js';
export * from './workqueue/rate-limiting-queue.js';
export * from './fake-list-watcher.js';
