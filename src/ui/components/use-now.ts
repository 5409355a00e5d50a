/**
 * The current time for a component, refreshed every `periodMs` by a local ticker. Dashboards get
 * snapshots only when something changes, so countdowns and ages ("expires in 12s", "heartbeat 4s
 * ago") need their own clock to keep moving between snapshots. The clock is injected so tests walk
 * time on a FakeClock.
 */
import {useEffect, useState} from 'react';
import {systemClock, type Clock, type TimerHandle} from '../../daemons/shared/clock.js';

export function useNow(clock: Clock = systemClock, periodMs = 1000): number {
  const [now, setNow] = useState(() => clock.now());
  useEffect(() => {
    let handle: TimerHandle | undefined;
    let live = true;
    // Re-armed after each tick (Clock has no setInterval), so a cleared ticker never fires again.
    const arm = () => {
      handle = clock.setTimeout(() => {
        if (!live) return;
        setNow(clock.now());
        arm();
      }, periodMs);
      // A ticking dashboard must never keep the process alive on its own.
      handle.unref?.();
    };
    arm();
    return () => {
      live = false;
      if (handle !== undefined) clock.clearTimeout(handle);
    };
  }, [clock, periodMs]);
  return now;
}
