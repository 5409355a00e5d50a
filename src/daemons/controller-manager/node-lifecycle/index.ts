/** The node lifecycle controller: the class and its pure building blocks. */
export * from './types.js';
export * from './options.js';
export * from './health.js';
export * from './taints.js';
export * from './zones.js';
export * from './rate-limited-queue.js';
export * from './taint-eviction.js';
export * from './controller.js';
