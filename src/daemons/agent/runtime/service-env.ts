/**
 * The variables that name the API server to every container, as the kubelet's service environment
 * for the default service (`KUBERNETES_SERVICE_HOST`, `KUBERNETES_SERVICE_PORT` and the Docker-link
 * style `KUBERNETES_PORT_443_TCP...`), under the name set's service name (`ORCH_...` by default). Pods
 * of the process runtime share the host's network, so the address is the one the agent itself uses
 * to reach the API server, not a cluster IP.
 */
import {names} from '../../../api/names.js';

export function serviceEnvironment(serverUrl: string): Record<string, string> {
  const url = new URL(serverUrl);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  const prefix = names().defaultService.toUpperCase().replace(/-/g, '_');
  const tcp = `${prefix}_PORT_${port}_TCP`;
  const address = host.includes(':') ? `[${host}]` : host;
  return {
    [`${prefix}_SERVICE_HOST`]: host,
    [`${prefix}_SERVICE_PORT`]: port,
    [`${prefix}_SERVICE_PORT_HTTPS`]: port,
    [`${prefix}_PORT`]: `tcp://${address}:${port}`,
    [tcp]: `tcp://${address}:${port}`,
    [`${tcp}_PROTO`]: 'tcp',
    [`${tcp}_PORT`]: port,
    [`${tcp}_ADDR`]: host,
  };
}
