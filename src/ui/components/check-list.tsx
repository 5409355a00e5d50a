/** A titled list of health checks, each with a live ✓/✗ and, when failing, why (dimmed). */
import {Box, Text} from 'ink';

export interface Check {
  name: string;
  ok: boolean;
  reason?: string;
}

export function CheckMark({ok}: {ok: boolean}) {
  return ok ? <Text color="green">✓</Text> : <Text color="red">✗</Text>;
}

export function CheckList({title, checks}: {title: string; checks: readonly Check[]}) {
  const failing = checks.filter((c) => !c.ok).length;
  return (
    <Box flexDirection="column">
      <Text bold>
        {title}{' '}
        {checks.length === 0 ? (
          <Text dimColor>(no checks yet)</Text>
        ) : failing === 0 ? (
          <Text color="green">ok</Text>
        ) : (
          <Text color="red">{failing} failing</Text>
        )}
      </Text>
      {checks.map((check) => (
        <Text key={check.name}>
          <CheckMark ok={check.ok} /> {check.name}
          {!check.ok && check.reason ? <Text dimColor> {check.reason}</Text> : null}
        </Text>
      ))}
    </Box>
  );
}
