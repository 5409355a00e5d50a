/**
 * Checks that decide, before anything runs, whether the process runtime can run a pod or a
 * container at all. Pure: the agent's uid is passed in.
 */
import type {Container, Pod} from './types.js';

export const COMMAND_REQUIRED = 'CommandRequired';

/** The pod-level failure of a pod with a container the process runtime cannot run, or undefined. */
export function commandRequiredFailure(pod: Pod): {reason: string; message: string; containers: string[]} | undefined {
  const all = [...(pod.spec.initContainers ?? []), ...pod.spec.containers];
  const missing = all.filter((c) => !c.command || c.command.length === 0);
  if (missing.length === 0) return undefined;
  const names = missing.map((c) => `"${c.name}"`).join(', ');
  const images = [...new Set(missing.map((c) => c.image).filter(Boolean))].map((i) => `"${i}"`).join(', ');
  return {
    reason: COMMAND_REQUIRED,
    message:
      `container ${names} has no command: the process runtime runs commands on this host and cannot run ` +
      `${images ? `the entrypoint of image ${images}` : 'an image'}; set command (and args)`,
    containers: missing.map((c) => c.name),
  };
}

export interface Identity {
  uid?: number;
  gid?: number;
}

/** The user and group a container runs as: the container's securityContext, else the pod's. */
export function runAsIdentity(pod: Pod, container: Container): Identity {
  return {
    uid: container.securityContext?.runAsUser ?? pod.spec.securityContext?.runAsUser,
    gid: container.securityContext?.runAsGroup ?? pod.spec.securityContext?.runAsGroup,
  };
}

/**
 * Why the agent (running as `agentUid`/`agentGid`) cannot start a process as `identity`, or undefined.
 * Only root may switch user or group; any agent may "switch" to its own ids.
 */
export function identityProblem(identity: Identity, agentUid: number, agentGid: number): string | undefined {
  if (agentUid === 0) return undefined;
  if (identity.uid !== undefined && identity.uid !== agentUid) {
    return `runAsUser ${identity.uid} needs the agent to run as root (it runs as uid ${agentUid}): the process runtime starts processes with setuid`;
  }
  if (identity.gid !== undefined && identity.gid !== agentGid) {
    return `runAsGroup ${identity.gid} needs the agent to run as root (it runs as gid ${agentGid}): the process runtime starts processes with setgid`;
  }
  return undefined;
}
