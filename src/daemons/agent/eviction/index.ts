/** The agent's eviction manager (reference/eviction.md): signals, thresholds, ranking, decision, loop. */
export * from './signals.js';
export * from './types.js';
export * from './thresholds.js';
export * from './observations.js';
export * from './ranking.js';
export * from './message.js';
export * from './evaluate.js';
export * from './snapshot.js';
export * from './manager.js';
