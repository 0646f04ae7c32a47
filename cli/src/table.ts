// Column layout as kubectl prints it (Go's text/tabwriter with minwidth 6,
// padding 3): every column but the last is padded, so wide cells push the
// next column right instead of being cut.

const MIN_WIDTH = 6;
const PADDING = 3;

export interface TableOptions {
  /** Prefix for every line (describe's nested tables are indented). */
  indent?: string;
}

/** Header row plus rows, each line ending in "\n"; missing cells print empty. */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly string[])[],
  opts: TableOptions = {},
): string {
  const all = [headers, ...rows];
  const columns = Math.max(...all.map((r) => r.length));
  const widths: number[] = [];
  for (let c = 0; c < columns - 1; c++) {
    widths.push(Math.max(MIN_WIDTH, ...all.map((r) => width(r[c] ?? "") + PADDING)));
  }
  const indent = opts.indent ?? "";
  return all
    .map((r) => {
      let line = "";
      for (let c = 0; c < columns; c++) {
        const cell = oneLine(r[c] ?? "");
        line += c < columns - 1 ? cell + " ".repeat(widths[c]! - width(cell)) : cell;
      }
      return `${indent}${line.trimEnd()}\n`;
    })
    .join("");
}

/** Display width in code points (names and reasons are ASCII; this keeps é or µ from skewing a column). */
function width(s: string): number {
  return [...s].length;
}

/** A newline in a cell would break the grid; kubectl shows messages on one line too. */
function oneLine(s: string): string {
  return s.replace(/\s*\n\s*/g, " ");
}
