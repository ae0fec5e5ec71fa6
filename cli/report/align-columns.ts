// Terminal tables of the demo summary and the advice text.

/**
 * Lays out rows as aligned columns: the first `leftColumns` columns left-aligned, the rest
 * right-aligned (numbers), two spaces between columns.
 *
 * @example alignColumns([['a', '1'], ['bb', '10']], 1) // ['a    1', 'bb  10']
 */
export function alignColumns(rows: readonly (readonly string[])[], leftColumns: number): string[] {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, [...cell].length)));
  return rows.map((row) =>
    row
      .map((cell, i) => {
        const pad = ' '.repeat((widths[i] ?? 0) - [...cell].length);
        return i < leftColumns ? cell + pad : pad + cell;
      })
      .join('  ')
      .trimEnd(),
  );
}
