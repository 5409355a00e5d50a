/**
 * Prints a LogBuffer's lines above the live part of a dashboard through Ink's <Static>: each line is
 * written once and scrolls with the terminal, and redraws of the live area never repaint it.
 */
import {useEffect, useRef, useState} from 'react';
import {Static, Text} from 'ink';
import type {LogBuffer} from './log-buffer.js';

interface Line {
  n: number;
  text: string;
}

interface Batch {
  /** <Static> remembers how many items it printed; a new key starts a fresh one (see below). */
  key: number;
  lines: Line[];
}

/** Warnings yellow, errors red, by klog's severity letter (`W1122 10:00:00.000000 ...`). */
export function LogLine({text}: {text: string}) {
  const severity = /^([IWEF])\d{4} /.exec(text)?.[1];
  if (severity === 'W') return <Text color="yellow">{text}</Text>;
  if (severity === 'E' || severity === 'F') return <Text color="red">{text}</Text>;
  return <Text>{text}</Text>;
}

function numbered(lines: string[], first: number): Line[] {
  return lines.map((text, i) => ({n: first + i, text}));
}

/**
 * `maxBatch` bounds memory: <Static> needs every item it ever printed in its `items`, so once a
 * batch is that long and printed, the pane starts a new <Static> holding only what came after.
 */
export function LogPane({buffer, maxBatch = 500}: {buffer: LogBuffer; maxBatch?: number}) {
  const cursor = useRef<number | undefined>(undefined);
  const [batch, setBatch] = useState<Batch>(() => {
    const {lines, next} = buffer.read(0);
    cursor.current = next;
    return {key: 0, lines: numbered(lines, next - lines.length)};
  });

  useEffect(() => {
    const pull = () => {
      const {lines, next} = buffer.read(cursor.current ?? 0);
      cursor.current = next;
      if (lines.length === 0) return;
      const added = numbered(lines, next - lines.length);
      setBatch((prev) => ({key: prev.key, lines: [...prev.lines, ...added]}));
    };
    const unsubscribe = buffer.subscribe(pull);
    pull(); // lines appended between the first render and this subscription
    return unsubscribe;
  }, [buffer]);

  useEffect(() => {
    if (batch.lines.length < maxBatch) return;
    // This effect runs after `batch` was committed, so its lines are on the terminal already.
    const printed = batch.lines.length;
    setBatch((prev) => (prev.key === batch.key ? {key: prev.key + 1, lines: prev.lines.slice(printed)} : prev));
  }, [batch, maxBatch]);

  return (
    <Static key={batch.key} items={batch.lines}>
      {(line) => <LogLine key={line.n} text={line.text} />}
    </Static>
  );
}
