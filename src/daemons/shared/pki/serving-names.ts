/**
 * The names the generated serving certificate must carry: the advertised address, loopback, and the
 * in-cluster names of the default `orch` service, as upstream's self-signed certificate does for
 * `kubernetes`. Pure.
 */
import {names} from '../../../api/names.js';
import {isIP} from 'node:net';
import type {ServingNames} from './certificates.js';

export interface ServingNameInputs {
  /** `--advertise-address` (or the bind address when that is a specific address). */
  advertiseAddress?: string;
  /** The machine's host name (`os.hostname()`). */
  hostname?: string;
  /** The first address of the service IP range: the ClusterIP of the `orch` service. */
  serviceIp?: string;
  /** Further names, e.g. from `--external-hostname`. */
  extra?: string[];
  /** The cluster DNS domain. */
  clusterDomain?: string;
}

const UNSPECIFIED = new Set(['0.0.0.0', '::', '']);

export function servingCertificateNames(inputs: ServingNameInputs): ServingNames {
  const domain = inputs.clusterDomain ?? 'cluster.local';
  const service = names().defaultService;
  const candidates = [
    inputs.advertiseAddress,
    ...(inputs.extra ?? []),
    inputs.hostname,
    'localhost',
    service,
    `${service}.default`,
    `${service}.default.svc`,
    `${service}.default.svc.${domain}`,
    '127.0.0.1',
    '::1',
    inputs.serviceIp,
  ];
  const hosts: string[] = [];
  const ips: string[] = [];
  for (const name of candidates) {
    if (name === undefined || UNSPECIFIED.has(name)) continue;
    const list = isIP(name) === 0 ? hosts : ips;
    const normalized = isIP(name) === 0 ? name.toLowerCase() : name;
    if (!list.includes(normalized)) list.push(normalized);
  }
  return {hosts, ips};
}
