/**
 * The candidate identity kube-controller-manager uses: `<hostname>_<uuid>`, new at every process
 * start so two processes on one host never share it.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

export function newIdentity(host: string = hostname(), uuid: string = randomUUID()): string {
  return `${host}_${uuid}`;
}
