// @kubernetes/client-node as an operator written in JavaScript uses it (HTTP/1.1 through node-fetch):
// ConfigMap creates of the given sizes with an informer of them running (list, then watch, watching
// again from its last resourceVersion whenever the server ends the watch), from its own process.
// Prints JSON: per size the names acknowledged, the errors, and the names the informer never added.
// Usage: node test/helpers/client-node-load.mjs <orchconfig> <namespace> <prefix> <count> <size,...> [concurrency]
import {CoreV1Api, KubeConfig, makeInformer} from '@kubernetes/client-node';

const [orchconfig, namespace, prefix, countArg, sizesArg, concurrencyArg = '4'] = process.argv.slice(2);
const kc = new KubeConfig();
kc.loadFromFile(orchconfig);
const api = kc.makeApiClient(CoreV1Api);
const label = `${prefix}-load`;

const seen = new Set();
const informer = makeInformer(kc, `/api/v1/namespaces/${namespace}/configmaps`, () => api.listNamespacedConfigMap({namespace, labelSelector: `traffic=${label}`}), `traffic=${label}`);
informer.on('add', (object) => seen.add(object.metadata.name));
// An informer restarts on its own after an error; the error itself is not a lost event.
informer.on('error', () => setTimeout(() => informer.start().catch(() => undefined), 100));
await informer.start();

const results = [];
for (const size of sizesArg.split(',').map(Number)) {
  const result = {size, requests: 0, acknowledged: [], errors: {}};
  let next = 0;
  const worker = async () => {
    while (next < Number(countArg)) {
      const name = `${prefix}-${size}-${next++}`;
      result.requests++;
      try {
        await api.createNamespacedConfigMap({namespace, body: {metadata: {name, labels: {traffic: label}}, data: {k: 'x'.repeat(size)}}});
        result.acknowledged.push(name);
      } catch (error) {
        const kind = error.code ?? error.cause?.code ?? error.type ?? String(error.message).slice(0, 80);
        result.errors[kind] = (result.errors[kind] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({length: Number(concurrencyArg)}, worker));
  results.push(result);
}
const acknowledged = results.flatMap((r) => r.acknowledged);
for (let waited = 0; acknowledged.some((n) => !seen.has(n)) && waited < 10_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
for (const r of results) r.watchMissing = r.acknowledged.filter((n) => !seen.has(n));
await informer.stop();
process.stdout.write(JSON.stringify(results));
process.exit(0);
