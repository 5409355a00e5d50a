/** Health checks every daemon serves (`/healthz`, `/livez`, `/readyz`): the checks, their registry and the handler. */
export {pingCheck, namedCheck, errorText, runCheck, type HealthCheck, type HealthLogger} from './check.js';
export {evaluateRoot, parseHealthQuery, type CheckOutcome, type RootResult} from './render.js';
export {HealthRegistry, HEALTH_ROOTS, type HealthRoot, type HealthRegistryOptions} from './registry.js';
export {createHealthHandler} from './handler.js';
export {LogCheck, type LogCheckOptions} from './log-check.js';
