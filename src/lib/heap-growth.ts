/**
 * How far the JavaScript heap may grow past what survived the last full collection before the next
 * one: Go's GOGC, which the upstream daemons run with (100 by default: the heap limit is twice the
 * live heap). V8 picks its own factor, up to 4x when collections look costly, so an API server
 * holding 30,000 pods sat at 6x the JSON it stores (bench/scale.mjs, medium size). The same
 * environment variable as upstream's binaries: `GOGC=<percent>`, or `GOGC=off` for V8's own choice.
 *
 * V8 reads the flag each time it sets the heap limit (heap_growing_percent), so setting it at start
 * takes effect without restarting the process.
 */
import {setFlagsFromString} from 'node:v8';
import {UserError} from './errors.js';

export const DEFAULT_GOGC = 100;

/** The growth percent GOGC asks for: a positive integer, `off` (undefined: V8's heuristics), or an error naming the accepted form. */
export function parseGogc(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return DEFAULT_GOGC;
  if (value.toLowerCase() === 'off') return undefined;
  if (!/^\d+$/.test(value) || Number(value) <= 0) throw new UserError(`invalid GOGC "${value}": want a positive whole percent (e.g. 100) or "off"`);
  return Number(value);
}

/** Applies GOGC from the environment to this process's heap. */
export function applyHeapGrowth(env: NodeJS.ProcessEnv = process.env): number | undefined {
  const percent = parseGogc(env.GOGC);
  if (percent !== undefined) setFlagsFromString(`--heap-growing-percent=${percent}`);
  return percent;
}
