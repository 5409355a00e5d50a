export {pingCheck, namedCheck, errorText, runCheck, type HealthCheck, type HealthLogger} from './check.js';
export {evaluateRoot, parseHealthQuery, type CheckOutcome, type RootResult} from './render.js';
export {HealthRegistry, HEALTH_ROOTS, type HealthRoot, type HealthRegistryOptions} from './registry.js';
export {createHealthHandler} from './handler.js';
export {LogCheck, type LogCheckOptions} from './log-check.js';
export {KvstoreCheck, kvstoreChecks, kvstoreOverrideChecks, type KvstorePing, type KvstoreCheckOptions} from './kvstore-check.js';
export {PostStartHooks, type PostStartHook, type PostStartHookContext, type PostStartHooksOptions} from './post-start-hooks.js';
export {informerSyncCheck} from './informer-sync.js';
export {storageReadinessHook, STORAGE_READINESS_HOOK, type StorageReadinessOptions} from './storage-readiness.js';
