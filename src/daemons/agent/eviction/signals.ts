/**
 * What each eviction signal stands for (reference/eviction.md §1 and §8): the resource that evicting
 * a pod reclaims, the node condition it drives, and how its amounts print in messages.
 */
import type { EvictionSignal } from '../../../options/types.js';

export type { EvictionSignal } from '../../../options/types.js';
export { EVICTION_SIGNALS } from '../../../options/types.js';

/** The resource a signal starves; the word used in "The node was low on resource: <resource>". */
export type ReclaimableResource = 'memory' | 'ephemeral-storage' | 'inodes' | 'pids';

export type PressureCondition = 'MemoryPressure' | 'DiskPressure' | 'PIDPressure';
export const PRESSURE_CONDITIONS: readonly PressureCondition[] = ['MemoryPressure', 'DiskPressure', 'PIDPressure'];

export const SIGNAL_RESOURCE: Readonly<Record<EvictionSignal, ReclaimableResource>> = {
  'memory.available': 'memory',
  'allocatableMemory.available': 'memory',
  'nodefs.available': 'ephemeral-storage',
  'nodefs.inodesFree': 'inodes',
  'imagefs.available': 'ephemeral-storage',
  'imagefs.inodesFree': 'inodes',
  'containerfs.available': 'ephemeral-storage',
  'containerfs.inodesFree': 'inodes',
  'pid.available': 'pids',
};

export const SIGNAL_CONDITION: Readonly<Record<EvictionSignal, PressureCondition>> = {
  'memory.available': 'MemoryPressure',
  'allocatableMemory.available': 'MemoryPressure',
  'nodefs.available': 'DiskPressure',
  'nodefs.inodesFree': 'DiskPressure',
  'imagefs.available': 'DiskPressure',
  'imagefs.inodesFree': 'DiskPressure',
  'containerfs.available': 'DiskPressure',
  'containerfs.inodesFree': 'DiskPressure',
  'pid.available': 'PIDPressure',
};

/** Memory signals are reclaimed first when several thresholds are actionable (upstream byEvictionPriority). */
export function isMemorySignal(signal: EvictionSignal): boolean {
  return signal === 'memory.available' || signal === 'allocatableMemory.available';
}

/** Disk signals are the ones that node-level reclaim (container and image GC) can relieve. */
export function isDiskSignal(signal: EvictionSignal): boolean {
  return SIGNAL_RESOURCE[signal] === 'ephemeral-storage' || SIGNAL_RESOURCE[signal] === 'inodes';
}

/**
 * Byte signals print in binary SI (84772Ki), counts (inodes, pids) in decimal SI (16310930, 32k), as
 * upstream builds their observations with resource.BinarySI and resource.DecimalSI.
 */
export function signalUnit(signal: EvictionSignal): 'bytes' | 'count' {
  const resource = SIGNAL_RESOURCE[signal];
  return resource === 'inodes' || resource === 'pids' ? 'count' : 'bytes';
}

export interface NodeConditionStatus {
  type: PressureCondition;
  status: 'True' | 'False';
  reason: string;
  message: string;
}

const CONDITION_TEXTS: Readonly<Record<PressureCondition, { true: [string, string]; false: [string, string] }>> = {
  MemoryPressure: {
    true: ['KubeletHasInsufficientMemory', 'kubelet has insufficient memory available'],
    false: ['KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
  },
  DiskPressure: {
    true: ['KubeletHasDiskPressure', 'kubelet has disk pressure'],
    false: ['KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
  },
  PIDPressure: {
    true: ['KubeletHasInsufficientPID', 'kubelet has insufficient PID available'],
    false: ['KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
  },
};

/**
 * The node condition the agent's status loop posts. Reasons and messages are upstream's word for word
 * (they are API-visible strings that tools match on), so they keep the name "kubelet".
 */
export function pressureConditionStatus(type: PressureCondition, active: boolean): NodeConditionStatus {
  const [reason, message] = CONDITION_TEXTS[type][active ? 'true' : 'false'];
  return { type, status: active ? 'True' : 'False', reason, message };
}
