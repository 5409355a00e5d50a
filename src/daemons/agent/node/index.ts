/** The agent's node part: registration, node status and the node Lease (reference agent-config.md §8-§9). */
export { type InterfaceAddress, type AddressInput, nodeAddresses } from './addresses.js';
export {
  type AllocatableSettings,
  type CapacitySettings,
  type MachineResources,
  allocatableReservation,
  hardEvictionReservation,
  nodeAllocatable,
  nodeCapacity,
  podCapacity,
} from './capacity.js';
export { type NodeApiClient, STRATEGIC_MERGE_PATCH, isAlreadyExists, isConflict, isNotFound, restNodeClient } from './client.js';
export {
  type ConditionInputs,
  type ConditionUpdate,
  type NodeConditionEvent,
  NOT_READY_REASON,
  PRESSURE_TEXTS,
  READY_MESSAGE,
  READY_REASON,
  aggregateMessage,
  missingCapacity,
  updateConditions,
} from './conditions.js';
export {
  LEASE_INITIAL_BACKOFF_MS,
  LEASE_MAX_BACKOFF_MS,
  LEASE_MAX_UPDATE_RETRIES,
  LEASE_RENEW_JITTER,
  nodeLeaseNamespace,
  NodeLeaseController,
  type NodeLeaseOptions,
  RENEW_INTERVAL_FRACTION,
} from './lease.js';
export { type MachineFacts, type MachineIdentity, type MachineSources, goArch, hostMachineSources, prettyName, readMachineFacts } from './machine.js';
export {
  defaultLabels,
  type InitialNodeInput,
  labelArch,
  labelHostname,
  labelOs,
  defaultLabelsPatch,
  initialNode,
  registrationLabels,
  resolveNodeName,
} from './node-object.js';
export { type Amount, type QuantityFormat, amountOf, formatAmount, formatResources, parseAmount, sameQuantity, subtractResources, sumResources } from '../../../api/quantities.js';
export { DEFAULT_NODE_LEASE_DURATION_SECONDS, type NodeSettings, nodeSettingsFromConfig } from './settings.js';
export {
  type StatusComputation,
  type StatusInput,
  computeNodeStatus,
  nodeStatusHasChanged,
  nodeStatusPatch,
  runtimeVersion,
} from './status.js';
export {
  NODE_STATUS_JITTER,
  NODE_STATUS_UPDATE_RETRY,
  type NodeEvent,
  NodeStatusManager,
  type NodeStatusManagerOptions,
  type NodeStatusSnapshot,
  REGISTRATION_INITIAL_BACKOFF_MS,
  REGISTRATION_MAX_BACKOFF_MS,
} from './status-manager.js';
export { formatMicroTime, formatRfc3339 } from './time.js';
export type * from './types.js';
