/** The API server's own health checks, beside the shared registry and handler (re-exported for the server's modules). */
export * from '../../shared/health/index.js';
export {KvstoreCheck, kvstoreChecks, kvstoreOverrideChecks, type KvstorePing, type KvstoreCheckOptions} from './kvstore-check.js';
export {PostStartHooks, type PostStartHook, type PostStartHookContext, type PostStartHooksOptions} from './post-start-hooks.js';
export {informerSyncCheck} from './informer-sync.js';
export {storageReadinessHook, STORAGE_READINESS_HOOK, type StorageReadinessOptions} from './storage-readiness.js';
export {kvstoreWritableCheck, writeFailureText, KVSTORE_WRITABLE} from './kvstore-writable.js';
