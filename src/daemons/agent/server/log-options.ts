/**
 * The query of `GET /containerLogs/<ns>/<pod>/<container>`, decoded and validated as upstream does
 * (v1.PodLogOptions through the parameter codec, then ValidatePodLogOptions). Pure.
 */

export interface ContainerLogOptions {
  follow: boolean;
  previous: boolean;
  timestamps: boolean;
  /** Lines counted from the end of the file; undefined: all. */
  tailLines?: number;
  /** Output bytes at most; undefined: no limit. */
  limitBytes?: number;
  /** Only records at or after this time (ms since the epoch), from sinceSeconds or sinceTime. */
  sinceMs?: number;
}

/** Upstream answers these with a JSON-looking text body (sic): the exact strings kubelets send. */
export const UNABLE_TO_DECODE = '{"message": "Unable to decode query."}';
export const INVALID_REQUEST = '{"message": "Invalid request."}';

export type LogOptionsResult = {options: ContainerLogOptions} | {status: 400 | 422; message: string};

/** The apimachinery conversion of a query value to bool: anything but "0" and "false" is true. */
function queryBool(query: URLSearchParams, name: string): boolean {
  const value = query.get(name);
  if (value === null) return false;
  return !(value === '0' || value.toLowerCase() === 'false');
}

/** Go's strconv.ParseInt (base 10, 64 bits); an empty value means unset. */
function queryInt(value: string | null): number | undefined | 'invalid' {
  if (value === null || value === '') return undefined;
  if (!/^[+-]?\d+$/.test(value)) return 'invalid';
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : 'invalid';
}

/** metav1.Time from a query: RFC3339 (with or without a fraction); empty means unset. */
function queryTime(value: string | null): number | undefined | 'invalid' {
  if (value === null || value === '') return undefined;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value)) return 'invalid';
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? 'invalid' : ms;
}

export function parseContainerLogQuery(query: URLSearchParams, nowMs: number): LogOptionsResult {
  // Backwards compatibility: `tail` stands for tailLines, and `tail=all` for no limit.
  const tail = query.get('tail');
  const tailText = tail ? (tail === 'all' ? null : tail) : query.get('tailLines');

  const tailLines = queryInt(tailText);
  const limitBytes = queryInt(query.get('limitBytes'));
  const sinceSeconds = queryInt(query.get('sinceSeconds'));
  const sinceTime = queryTime(query.get('sinceTime'));
  if (tailLines === 'invalid' || limitBytes === 'invalid' || sinceSeconds === 'invalid' || sinceTime === 'invalid') {
    return {status: 400, message: UNABLE_TO_DECODE};
  }
  const invalid =
    (tailLines !== undefined && tailLines < 0) ||
    (limitBytes !== undefined && limitBytes < 1) ||
    (sinceSeconds !== undefined && sinceSeconds < 1) ||
    (sinceSeconds !== undefined && sinceTime !== undefined);
  if (invalid) return {status: 422, message: INVALID_REQUEST};

  const options: ContainerLogOptions = {
    follow: queryBool(query, 'follow'),
    previous: queryBool(query, 'previous'),
    timestamps: queryBool(query, 'timestamps'),
  };
  if (tailLines !== undefined) options.tailLines = tailLines;
  if (limitBytes !== undefined) options.limitBytes = limitBytes;
  if (sinceSeconds !== undefined) options.sinceMs = nowMs - sinceSeconds * 1000;
  if (sinceTime !== undefined) options.sinceMs = sinceTime;
  return {options};
}
