/**
 * Reads an agent's summary (`/stats/summary?only_cpu_and_memory=true`, the request metrics-server
 * makes) on the node's preferred address (--agent-preferred-address-types) and the port it reports,
 * with the API server's agent client credentials, as the log proxy reaches it (../pod-logs.ts).
 * Without --agent-certificate-authority the agent's serving certificate is not verified.
 */
import {request as httpsRequest} from 'node:https';
import type {Summary} from '../../agent/server/summary.js';
import {nodeAgentAddress, type AgentTls, type NodeLike as AgentNode} from '../pod-logs.js';

export interface NodeLike extends AgentNode {
  metadata?: {name?: string; labels?: Record<string, string>};
}

/** https://host:port of a node's agent, or undefined when it reports no usable address or port. */
export function agentEndpoint(node: NodeLike, addressTypes?: readonly string[]): string | undefined {
  const {address, port} = nodeAgentAddress(node, addressTypes);
  if (!address || !port) return undefined;
  return `https://${address.includes(':') ? `[${address}]` : address}:${port}`;
}

export function fetchSummary(node: NodeLike, tls: AgentTls, timeoutMs = 10_000): Promise<Summary> {
  const base = agentEndpoint(node, tls.addressTypes);
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
