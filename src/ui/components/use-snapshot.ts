/**
 * React side of StateEmitter, kept out of state-emitter.ts so that a daemon can create an emitter
 * without loading React (only the dashboards, imported lazily on a TTY, load this).
 */
import {useSyncExternalStore} from 'react';
import type {StateEmitter} from '../state-emitter.js';

/** The emitter's last emitted snapshot; the component re-renders on each emit. */
export function useSnapshot<T extends object>(emitter: StateEmitter<T>): T | undefined {
  return useSyncExternalStore(emitter.subscribe, emitter.snapshot);
}
