/**
 * A one-line chart of recent values (request rate and the like). Written by hand: it is a few
 * lines of arithmetic, not worth a dependency.
 */
import {useState} from 'react';
import {Text} from 'ink';

const BARS = '▁▂▃▄▅▆▇█';

/** One bar per value, scaled to the largest; any non-zero value gets at least the second bar so it is told apart from idle. */
export function sparkline(values: readonly number[]): string {
  const max = Math.max(0, ...values);
  return values
    .map((v) => {
      if (!(v > 0) || max === 0) return BARS[0];
      return BARS[Math.max(1, Math.round((v / max) * (BARS.length - 1)))];
    })
    .join('');
}

/**
 * The last `length` values of `value`, one per distinct `sample` (e.g. each emitted snapshot), so
 * re-renders for other reasons do not add points. Uses React's "adjust state while rendering"
 * pattern: no extra render pass per sample.
 */
export function useHistory(sample: unknown, value: number | undefined, length: number): number[] {
  const [history, setHistory] = useState<{sample: unknown; values: number[]}>({sample: undefined, values: []});
  if (sample !== history.sample && value !== undefined) {
    const values = [...history.values, value].slice(-length);
    setHistory({sample, values});
    return values;
  }
  return history.values;
}

export function Sparkline({values, color = 'cyan'}: {values: readonly number[]; color?: string}) {
  return <Text color={color}>{sparkline(values)}</Text>;
}
