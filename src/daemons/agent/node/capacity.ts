/**
 * The node's capacity and allocatable (upstream: nodestatus.MachineInfo and the container manager's
 * GetNodeAllocatableReservation):
 *
 *   allocatable = capacity - orch-reserved - system-reserved - hard eviction thresholds
 *
 * where the eviction part is the hard `memory.available` threshold against memory and the hard
 * `nodefs.available` threshold against ephemeral-storage (percentages resolved against the capacity),
 * left out with --experimental-allocatable-ignore-eviction. Only cpu, memory and ephemeral-storage are
 * reserved; pods are never reduced. Pure functions over measured machine facts.
 */
import { isDisabledThreshold, type EvictionThreshold } from '../../../options/value-eviction.js';
import { valueQuantity } from '../eviction/thresholds.js';
import { type Amount, amountOf, parseAmount, subtractResources, sumResources } from '../../../api/quantities.js';

export interface MachineResources {
  /** Online CPUs. */
  cpuCores: number;
  /** MemTotal of /proc/meminfo, in bytes. */
  memoryBytes: number;
  /** Size of the filesystem holding --root-dir (statfs blocks * bsize); undefined when it could not be measured. */
  rootfsBytes?: number;
}

export interface CapacitySettings {
  /** --max-pods. */
  maxPods: number;
  /** --pods-per-core; 0 turns it off. */
  podsPerCore: number;
  /** --local-storage-capacity-isolation: only then is ephemeral-storage part of the capacity. */
  localStorageCapacityIsolation: boolean;
}

export interface AllocatableSettings {
  /** --orch-reserved, e.g. {cpu: '200m', memory: '500Mi'}. */
  orchReserved?: Readonly<Record<string, string>>;
  /** --system-reserved. */
  systemReserved?: Readonly<Record<string, string>>;
  /** The effective hard eviction thresholds (--eviction-hard with its defaults). */
  hardEvictionThresholds?: readonly EvictionThreshold[];
  /** --experimental-allocatable-ignore-eviction. */
  ignoreEviction?: boolean;
}

/** Resources that reservations apply to (upstream reserves against the container manager's capacity, which has no pods). */
const RESERVABLE = new Set(['cpu', 'memory', 'ephemeral-storage']);

/** --max-pods, or cores * --pods-per-core when that is lower. */
export function podCapacity(settings: Pick<CapacitySettings, 'maxPods' | 'podsPerCore'>, cpuCores: number): number {
  if (settings.podsPerCore > 0) return Math.min(cpuCores * settings.podsPerCore, settings.maxPods);
  return settings.maxPods;
}

export function nodeCapacity(machine: MachineResources, settings: CapacitySettings): Record<string, Amount> {
  const capacity: Record<string, Amount> = {
    cpu: amountOf(machine.cpuCores, 'DecimalSI'),
    memory: amountOf(machine.memoryBytes, 'BinarySI'),
    pods: amountOf(podCapacity(settings, machine.cpuCores), 'DecimalSI'),
  };
  if (settings.localStorageCapacityIsolation && machine.rootfsBytes !== undefined) {
    capacity['ephemeral-storage'] = amountOf(machine.rootfsBytes, 'BinarySI');
  }
  return capacity;
}

/** Upstream's hardEvictionReservation: what the hard memory and nodefs thresholds keep back. */
export function hardEvictionReservation(thresholds: readonly EvictionThreshold[], capacity: Readonly<Record<string, Amount>>): Record<string, Amount> {
  const reservation: Record<string, Amount> = {};
  const unitsOf = (name: string) => Number((capacity[name]?.milli ?? 0n) / 1000n);
  for (const threshold of thresholds) {
    // 0% and 100% thresholds are how a default is switched off: upstream drops them while parsing.
    if (threshold.operator !== 'LessThan' || isDisabledThreshold(threshold)) continue;
    if (threshold.signal === 'memory.available') {
      reservation.memory = amountOf(valueQuantity(threshold.value, unitsOf('memory')), 'BinarySI');
    } else if (threshold.signal === 'nodefs.available') {
      reservation['ephemeral-storage'] = amountOf(valueQuantity(threshold.value, unitsOf('ephemeral-storage')), 'BinarySI');
    }
  }
  return reservation;
}

function parseReservation(option: string, reserved: Readonly<Record<string, string>> | undefined): Record<string, Amount> {
  const amounts: Record<string, Amount> = {};
  for (const [name, text] of Object.entries(reserved ?? {})) {
    try {
      amounts[name] = parseAmount(text);
    } catch (error) {
      throw new Error(`--${option}: invalid quantity for ${name}: ${(error as Error).message}`);
    }
  }
  return amounts;
}

/** Everything kept back from the pods, per reservable resource of the capacity. */
export function allocatableReservation(capacity: Readonly<Record<string, Amount>>, settings: AllocatableSettings): Record<string, Amount> {
  const eviction = settings.ignoreEviction ? {} : hardEvictionReservation(settings.hardEvictionThresholds ?? [], capacity);
  const total = sumResources(parseReservation('system-reserved', settings.systemReserved), parseReservation('orch-reserved', settings.orchReserved), eviction);
  return Object.fromEntries(Object.entries(total).filter(([name, amount]) => RESERVABLE.has(name) && name in capacity && amount.milli !== 0n));
}

export function nodeAllocatable(capacity: Readonly<Record<string, Amount>>, settings: AllocatableSettings): Record<string, Amount> {
  return subtractResources(capacity, allocatableReservation(capacity, settings));
}
