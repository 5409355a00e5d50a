export {MetricsRegistry, isHidden, type StabilityLevel} from './registry.js';
export {loadMetricsOptions, validateMetricsOptions, parseAllowLists, readAllowListManifest, NO_METRICS_OPTIONS, type MetricsOptions, type MetricsOptionValues} from './options.js';
export {serveMetrics, type Exposition} from './handler.js';
