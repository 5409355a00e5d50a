/**
 * componentstatuses (upstream's pkg/registry/core/componentstatus): computed on each read, never
 * stored. Upstream probes the scheduler's and the controller manager's /healthz on their default
 * local ports and each etcd server; orch's scheduler is a controller of the controller manager,
 * so both probe the controller manager's secure port (10257), and the store answers for itself
 * (`etcd-0` on etcd, `sqlite-0` embedded).
 */
import {request as httpsRequest} from 'node:https';
import {notFound} from '../../../api/status.js';
import type {JsonObject} from '../../../patch/types.js';
import type {Store} from '../storage/store.js';

const PROBE_TIMEOUT_MS = 2000;

export interface ComponentProbe {
  name: string;
  /** Resolves with the healthy message, rejects with the error text. */
  check(): Promise<string>;
}

/** GET https://<host>:<port>/healthz without verifying the serving certificate (as upstream's probe). */
function healthz(url: string): () => Promise<string> {
  return () =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(url, {rejectUnauthorized: false, timeout: PROBE_TIMEOUT_MS}, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => (res.statusCode === 200 ? resolve(body.trim() || 'ok') : reject(new Error(`Get "${url}": status ${res.statusCode}: ${body.trim()}`))));
      });
      req.on('timeout', () => req.destroy(new Error(`Get "${url}": context deadline exceeded`)));
      req.on('error', (error) => reject(new Error(error.message.startsWith('Get ') ? error.message : `Get "${url}": ${error.message}`)));
      req.end();
    });
}

export function defaultProbes(store: Store): ComponentProbe[] {
  const controllerManager = healthz('https://127.0.0.1:10257/healthz');
  return [
    {name: 'controller-manager', check: controllerManager},
    {name: 'scheduler', check: controllerManager},
    {
      name: `${store.engine === 'etcd' ? 'etcd' : 'sqlite'}-0`,
      check: async () => {
        await store.ping(PROBE_TIMEOUT_MS);
        return 'ok';
      },
    },
  ];
}

async function statusOf(probe: ComponentProbe): Promise<JsonObject> {
  let condition: JsonObject;
  try {
    condition = {type: 'Healthy', status: 'True', message: await probe.check()};
  } catch (error) {
    condition = {type: 'Healthy', status: 'False', error: (error as Error).message};
  }
  return {kind: 'ComponentStatus', apiVersion: 'v1', metadata: {name: probe.name, creationTimestamp: null}, conditions: [condition]};
}

export async function listComponentStatuses(probes: ComponentProbe[]): Promise<JsonObject[]> {
  return Promise.all(probes.map(statusOf));
}

export async function getComponentStatus(probes: ComponentProbe[], name: string): Promise<JsonObject> {
  const probe = probes.find((p) => p.name === name);
  if (!probe) throw notFound({group: '', resource: 'componentstatuses'}, name);
  return statusOf(probe);
}
