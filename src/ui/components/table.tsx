/**
 * A plain text table for the dashboards: a dim header row, then one row per item, columns as wide
 * as their widest cell so they line up like kubectl's output. Ink has no table and the table
 * packages for it lag behind Ink's major versions; column widths are one max() per column.
 */
import {Box, Text} from 'ink';

export interface StyledCell {
  text: string;
  color?: string;
  bold?: boolean;
  dimColor?: boolean;
}

export type Cell = string | StyledCell;

export interface Column {
  header: string;
  align?: 'left' | 'right';
  /** Longer cells are cut with an ellipsis. The last column is not padded; it takes the room left and is cut at its edge. */
  maxWidth?: number;
}

export interface TableProps {
  columns: readonly Column[];
  /** One array of cells per row, in column order; each row's first cell should be unique (its key). */
  rows: readonly (readonly Cell[])[];
  /** Spaces between columns. */
  gap?: number;
}

function styled(cell: Cell): StyledCell {
  return typeof cell === 'string' ? {text: cell} : cell;
}

/** Width of each column but the last: the widest of its header and cells, capped by maxWidth. */
export function columnWidths(columns: readonly Column[], rows: readonly (readonly Cell[])[]): number[] {
  return columns.map((column, i) => {
    const widest = Math.max(column.header.length, ...rows.map((row) => styled(row[i] ?? '').text.length));
    return column.maxWidth === undefined ? widest : Math.min(widest, column.maxWidth);
  });
}

function Row({cells, columns, widths, gap, header}: {cells: readonly StyledCell[]; columns: readonly Column[]; widths: number[]; gap: number; header?: boolean}) {
  return (
    <Box>
      {columns.map((column, i) => {
        const cell = cells[i] ?? {text: ''};
        const last = i === columns.length - 1;
        const text = (
          <Text color={cell.color} bold={cell.bold || undefined} dimColor={header || cell.dimColor || undefined} wrap="truncate-end">
            {cell.text}
          </Text>
        );
        if (last)
          return (
            <Box key={i} flexGrow={1} flexShrink={1} minWidth={0}>
              {text}
            </Box>
          );
        return (
          <Box key={i} width={widths[i]! + gap} flexShrink={0} paddingRight={gap} justifyContent={column.align === 'right' ? 'flex-end' : 'flex-start'}>
            {text}
          </Box>
        );
      })}
    </Box>
  );
}

export function Table({columns, rows, gap = 2}: TableProps) {
  const widths = columnWidths(columns, rows);
  return (
    <Box flexDirection="column">
      <Row header cells={columns.map((c) => ({text: c.header}))} columns={columns} widths={widths} gap={gap} />
      {rows.map((row, i) => (
        <Row key={`${styled(row[0] ?? '').text}#${i}`} cells={row.map(styled)} columns={columns} widths={widths} gap={gap} />
      ))}
    </Box>
  );
}
