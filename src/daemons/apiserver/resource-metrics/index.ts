export {parseMetricsPath, serveResourceMetrics, type MetricsRequest, type ResourceMetricsDeps} from './handler.js';
export {metricsResources, nodeMetrics, podMetrics, usageOf, windowText, METRICS_VERSION} from './objects.js';
export {agentEndpoint, fetchSummary, type NodeLike} from './scraper.js';
