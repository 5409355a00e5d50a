/**
 * The W3C trace context of the active span for an outgoing call (admission and conversion webhooks),
 * through the OpenTelemetry API only: without --tracing-config-file its propagator is the no-op one
 * and this adds nothing.
 */
import {context, propagation} from '@opentelemetry/api';

export function withTraceHeaders(headers: Record<string, string | number> = {}): Record<string, string | number> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length ? {...headers, ...carrier} : headers;
}
