/**
 * Where the API server sends a webhook named by a Service reference (conversion webhooks now,
 * admission webhooks later): one ready endpoint of the service's port, as upstream's endpoint
 * service resolver does (kube-apiserver `--enable-aggregator-routing`; orch has no proxy that
 * would make the cluster IP reachable from the API server). ExternalName services go to their
 * external name. Pure over the two objects; the handler reads them from the store.
 */
import { isJsonObject, type JsonObject } from '../../../patch/types.js';

export function resolveServiceEndpoint(
  namespace: string, name: string, port: number, service: JsonObject | undefined, endpoints: JsonObject | undefined,
): { host: string; port: number } {
  const qualified = `${namespace}/${name}`;
  if (!service) throw new Error(`service "${qualified}" not found`);
  const spec = isJsonObject(service.spec) ? service.spec : {};
  const ports = (Array.isArray(spec.ports) ? spec.ports : []).filter(isJsonObject);
  const servicePort = ports.find((p) => p.port === port);
  if (!servicePort) throw new Error(`no service port ${port} found for service "${name}"`);
  if (spec.type === 'ExternalName' && typeof spec.externalName === 'string') return { host: spec.externalName, port };
  const portName = typeof servicePort.name === 'string' ? servicePort.name : '';
  for (const subset of (Array.isArray(endpoints?.subsets) ? endpoints!.subsets : []).filter(isJsonObject)) {
    const match = (Array.isArray(subset.ports) ? subset.ports : []).filter(isJsonObject).find((p) => (p.name ?? '') === portName);
    const address = (Array.isArray(subset.addresses) ? subset.addresses : []).find((a) => isJsonObject(a) && typeof a.ip === 'string');
    if (match && typeof match.port === 'number' && isJsonObject(address)) return { host: address.ip as string, port: match.port };
  }
  throw new Error(`no endpoints available for service "${name}"`);
}
