/**
 * What the controller manager needs to take part in coordinated leader election: whether the API
 * server serves LeaseCandidates (discovery of coordination/v1beta1), and the versions it announces.
 */
import {names} from '../../api/names.js';
import type {VersionInfo} from '../../lib/version.js';
import type {JsonHttp} from './leader-election/lease-lock.js';

export async function servesLeaseCandidates(http: JsonHttp): Promise<boolean> {
  const reply = await http.get(`/apis/${names().groups.coordination}/v1beta1`);
  if (reply.status !== 200) return false;
  const resources = (reply.body as {resources?: {name?: string}[]} | undefined)?.resources ?? [];
  return resources.some((r) => r.name === 'leasecandidates');
}

/** The binary version `major.minor.patch` of --version's text, and the emulation version `major.minor`. */
export function candidateVersions(version: VersionInfo): {binaryVersion: string; emulationVersion: string} {
  const [major = '0', minor = '0', patch = '0'] = version.gitVersion.replace(/^v/, '').split(/[-+]/)[0].split('.');
  return {binaryVersion: `${major}.${minor}.${patch}`, emulationVersion: `${major}.${minor}`};
}
