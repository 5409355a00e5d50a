/** The process runtime of the agent: pods as local processes. */
export {ProcessRuntime, ISOLATION_NOTE} from './runtime.js';
export type {AttachTarget, ProcessRuntimeOptions, RuntimeEvent, RuntimeEvents, PodSnapshot, ContainerSnapshot, PodFailure} from './runtime.js';
export {noEnvSources, type EnvSourceResolver} from './env.js';
export {PodCgroups, podLimits, type PodLimits} from './cgroup.js';
export {DEFAULT_BACKOFF, type BackoffOptions} from './backoff.js';
export {COMMAND_REQUIRED} from './preflight.js';
export {defaultSpawn, type SpawnFn} from './process.js';
export type {ProbeKind, ProbeResult} from './probe-tracker.js';
export type * from './types.js';
export type {ExecProcess, ExecRequest} from './exec.js';
