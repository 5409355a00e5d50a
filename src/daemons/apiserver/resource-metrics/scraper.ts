/**
 * Reads an agent's summary (`/stats/summary?only_cpu_and_memory=true`, the request metrics-server
 * makes) on the address and port its node reports, with the API server's agent client credentials.
 * Without --agent-certificate-authority the agent's serving certificate is not verified, as for logs.
 */
import {request as httpsRequest} from 'node:https';
import type {Summary} from '../../agent/server/summary.js';

export interface AgentTls {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface NodeLike {
  metadata?: {name?: string; labels?: Record<string, string>};
  status?: {addresses?: {type: string; address: string}[]; daemonEndpoints?: {kubeletEndpoint?: {Port?: number}}};
}

/** https://host:port of a node's agent: its InternalIP (else its first address) and the port it reports. */
export function agentEndpoint(node: NodeLike): string | undefined {
  const addresses = node.status?.addresses ?? [];
  const address = addresses.find((a) => a.type === 'InternalIP')?.address ?? addresses[0]?.address;
  const port = node.status?.daemonEndpoints?.kubeletEndpoint?.Port;
  if (!address || !port) return undefined;
  return `https://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

export function fetchSummary(node: NodeLike, tls: AgentTls, timeoutMs = 10_000): Promise<Summary> {
  const base = agentEndpoint(node);
  if (!base) return Promise.reject(new Error(`node ${node.metadata?.name} reports no address or agent port`));
  const url = `${base}/stats/summary?only_cpu_and_memory=true`;
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, {ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: Boolean(tls.ca), timeout: timeoutMs}, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        if (res.statusCode !== 200) return reject(new Error(`GET ${url}: ${res.statusCode}: ${body.trim().slice(0, 200)}`));
        try {
          resolve(JSON.parse(body) as Summary);
        } catch (error) {
          reject(new Error(`GET ${url}: ${(error as Error).message}`));
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${url}: timed out after ${timeoutMs} ms`)));
    req.on('error', reject);
    req.end();
  });
}
