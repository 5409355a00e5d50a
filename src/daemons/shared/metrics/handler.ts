/**
 * Serving a registry in the Prometheus text format (the body of /metrics and /metrics/slis).
 */
import type {ServerResponse} from 'node:http';

export interface Exposition {
  contentType: string;
  metrics(): Promise<string>;
}

export async function serveMetrics(res: ServerResponse, registry: Exposition): Promise<void> {
  const body = await registry.metrics();
  res.writeHead(200, {'Content-Type': registry.contentType, 'Content-Length': Buffer.byteLength(body)});
  res.end(body);
}
