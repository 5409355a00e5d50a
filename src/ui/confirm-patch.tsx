/**
 * The --interactive prompt of `orch patch`: the diff of one object, then "Apply? [y/N]".
 * `y` applies; `n`, Enter, Escape or Ctrl-C decline.
 */
import {useEffect, useState} from 'react';
import {Box, Text, useApp, useInput} from 'ink';

export interface ConfirmPatchProps {
  name: string;
  diff: string;
  onAnswer(apply: boolean): void;
}

function DiffLine({line}: {line: string}) {
  if (line.startsWith('+++') || line.startsWith('---')) return <Text bold>{line}</Text>;
  if (line.startsWith('@@')) return <Text color="cyan">{line}</Text>;
  if (line.startsWith('+')) return <Text color="green">{line}</Text>;
  if (line.startsWith('-')) return <Text color="red">{line}</Text>;
  return <Text>{line}</Text>;
}

export function ConfirmPatch({name, diff, onAnswer}: ConfirmPatchProps) {
  const {exit} = useApp();
  const [answer, setAnswer] = useState<boolean | undefined>(undefined);
  useInput((input, key) => {
    if (answer !== undefined) return;
    const yes = input.toLowerCase() === 'y';
    if (yes || input.toLowerCase() === 'n' || key.return || key.escape || (key.ctrl && input === 'c')) {
      setAnswer(yes);
      onAnswer(yes);
    }
  });
  // Leave only after the answer has been drawn, so the terminal keeps it.
  useEffect(() => {
    if (answer !== undefined) exit();
  }, [answer, exit]);
  const lines = diff.replace(/\n$/, '').split('\n');
  return (
    <Box flexDirection="column">
      {lines.map((line, i) => (
        <DiffLine key={i} line={line} />
      ))}
      <Text>
        Apply this patch to <Text bold>{name}</Text>? [y/N]{' '}
        {answer === undefined ? '' : answer ? <Text color="green">yes</Text> : <Text color="red">no</Text>}
      </Text>
    </Box>
  );
}

/** Mounts the prompt on the terminal and resolves with the answer. Only called when stdin and stdout are TTYs. */
export async function confirmPatch(name: string, diff: string): Promise<boolean> {
  const {render} = await import('ink');
  let result = false;
  const app = render(<ConfirmPatch name={name} diff={diff} onAnswer={(apply) => (result = apply)} />, {exitOnCtrlC: false});
  await app.waitUntilExit();
  return result;
}
