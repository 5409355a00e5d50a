export {systemClock, FakeClock, sleep, settle, waitAtMost, type Clock, type TimerHandle} from '../../shared/clock.js';
export {TokenBucket, everyMs} from './token-bucket.js';
export {RequestWaitGroup} from './wait-group.js';
export {
  ShutdownLifecycle,
  type ShutdownPhase,
  type LifecycleSignal,
  type ServerControl,
  type ShutdownOptions,
  type LifecycleSnapshot,
} from './shutdown.js';
