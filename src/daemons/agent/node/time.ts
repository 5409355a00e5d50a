/** The API's time formats: metav1.Time (RFC 3339, whole seconds) and metav1.MicroTime (six fractional digits). */

export function formatRfc3339(epochMs: number): string {
  return new Date(Math.floor(epochMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

export { formatMicroTime } from '../../shared/leader-election/record.js';
