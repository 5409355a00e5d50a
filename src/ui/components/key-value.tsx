/** One dashboard row: a fixed-width bold label, then the value, so rows line up as a table. */
import type {ReactNode} from 'react';
import {Box, Text} from 'ink';

export function KeyValue({label, width = 11, children}: {label: string; width?: number; children: ReactNode}) {
  return (
    <Box>
      <Box width={width} flexShrink={0}>
        <Text bold>{label}</Text>
      </Box>
      <Text>{children}</Text>
    </Box>
  );
}
