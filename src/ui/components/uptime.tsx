/**
 * `up 3m5s`: how long the daemon has been running, counted on the dashboard's one-second clock.
 * Snapshots come only on change, so an idle daemon's panel would otherwise stand still, and could not
 * be told from a frozen terminal; this moves every second while the process lives.
 */
import {Text} from 'ink';
import {humanDuration} from './duration.js';

export function Uptime({since, now}: {since: number; now: number}) {
  return <Text dimColor>up {humanDuration(now - since)}</Text>;
}
