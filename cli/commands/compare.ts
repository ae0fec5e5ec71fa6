import type { Command } from 'commander';
import { compareRuns, type ComparedValue, type RunComparison, type StreamComparison, type StreamPair } from '../compare/compare-runs.ts';
import { ACCEPT_DAMAGE_FLAG, ACCEPT_DAMAGE_HELP, failOnFrameFileDamage, frameFileJson, readFrameFile } from '../frame-file.ts';
import { UsageError } from '../usage-error.ts';

const LABELS: Record<ComparedValue['quantity'], string> = {
  lossMeasured: 'loss measured',
  lossCounts: 'loss from counts',
  meanCount: 'mean iterations',
  lossPredicted: 'loss predicted',
  groups: 'groups',
};

function formatNumber(x: number, quantity: ComparedValue['quantity']): string {
  return quantity === 'groups' ? String(x) : x.toFixed(4);
}

function formatValue(v: ComparedValue): string {
  const withSe = (x: number, se: number | null): string => `${formatNumber(x, v.quantity)}${se === null ? '' : ` ± ${se.toFixed(4)}`}`;
  const sign = v.difference >= 0 ? '+' : '−';
  const difference = `${sign}${formatNumber(Math.abs(v.difference), v.quantity)}`;
  const ratio = v.ratio === null ? 'n/a' : `×${v.ratio.toFixed(4)}`;
  // Both standard errors 0 (every unit gave the same value): z is not defined, and says so.
  const z = v.z === null ? (v.verdict === 'beyond noise' ? ' (both standard errors are 0)' : '') : ` (z ${v.z < 0 ? '−' : '+'}${Math.abs(v.z).toFixed(1)})`;
  const verdict = v.verdict === 'unknown' ? (v.quantity === 'lossPredicted' || v.quantity === 'groups' ? '' : '  noise unknown') : `  ${v.verdict}${z}`;
  return `  ${LABELS[v.quantity].padEnd(17)} ${withSe(v.a, v.standardErrorA).padEnd(20)} ${withSe(v.b, v.standardErrorB).padEnd(20)} ${difference.padEnd(10)} ${ratio.padEnd(9)}${verdict}`;
}

function formatStream(s: StreamComparison): string {
  return [
    `${s.streamB === undefined ? s.stream : `A ${s.stream} ↔ B ${s.streamB}`} n=${s.n}  (A: ${s.launchesA} launch(es), SE over ${s.basisA}; B: ${s.launchesB} launch(es), SE over ${s.basisB})`,
    `  ${''.padEnd(17)} ${'A'.padEnd(20)} ${'B'.padEnd(20)} ${'B − A'.padEnd(10)} ${'B / A'.padEnd(9)}  change`,
    ...s.values.map(formatValue),
    ...(s.notMeasured === undefined ? [] : [`  ${LABELS.lossMeasured.padEnd(17)} not measured in ${s.notMeasured.join(' and ')} (no clocks: counts-only frames)`]),
  ].join('\n');
}

/**
 * The terminal text of a comparison: per stream a table of A, B (± standard error), B − A, B / A
 * and the verdict; then the streams found in one run only.
 *
 * @example process.stdout.write(formatComparison('a.wwf', 'b.wwf', compareRuns(a, b)));
 */
export function formatComparison(fileA: string, fileB: string, comparison: RunComparison): string {
  const lines = [`A = ${fileA}, B = ${fileB}; beyond noise: |z| > ${comparison.noiseZ} (z = (B − A)/√(SE_A² + SE_B²))`];
  if (comparison.streams.length === 0) lines.push('no stream is in both runs');
  lines.push(...comparison.streams.map(formatStream));
  if (comparison.onlyInA.length > 0) lines.push(`only in A: ${comparison.onlyInA.join(', ')}`);
  if (comparison.onlyInB.length > 0) lines.push(`only in B: ${comparison.onlyInB.join(', ')}`);
  return `${lines.join('\n')}\n`;
}

/**
 * Parses `--pair A_STREAM=B_STREAM` values.
 *
 * @throws UsageError when a value has no '=' or an empty side, or a stream of A is paired twice.
 * @example parsePairs(['local/escape=local/escape-sorted']) // [{ a: 'local/escape', b: 'local/escape-sorted' }]
 */
export function parsePairs(values: readonly string[]): StreamPair[] {
  const pairs = values.map((value) => {
    const at = value.indexOf('=');
    const a = at < 0 ? '' : value.slice(0, at).trim();
    const b = at < 0 ? '' : value.slice(at + 1).trim();
    if (a === '' || b === '') throw new UsageError(`--pair must be A_STREAM=B_STREAM (stream ids <job>/<kernel>), got '${value}'`);
    return { a, b };
  });
  const twice = pairs.find((p, i) => pairs.findIndex((q) => q.a === p.a) !== i);
  if (twice !== undefined) throw new UsageError(`--pair names stream '${twice.a}' of A twice`);
  return pairs;
}

/** The stream id of a `<stream> n=<n>` key of the only-in lists. */
const streamOfKey = (key: string): string => key.replace(/ n=\d+$/, '');

/**
 * Registers `warpwatch compare A B [--json]`: two frame files side by side per stream, the change
 * and whether it is beyond noise (cli/compare/compare-runs.ts says how).
 *
 * @example warpwatch compare before.wwf after.wwf --json
 */
export function registerCompareCommand(program: Command): void {
  program
    .command('compare')
    .description('Compare two frame files per stream: loss measured, from counts, predicted, mean iterations, groups; the change and whether it is beyond noise')
    .argument('<a>', 'frame file of run A (the baseline)')
    .argument('<b>', 'frame file of run B')
    .option('--json', 'print { "a", "b", "inputs", "noiseZ", "streams": [ ... ], "onlyInA", "onlyInB" } as JSON ("inputs": what was read of each file, damage included)')
    .option('--pair <A_STREAM=B_STREAM>', 'compare stream A_STREAM of run A with B_STREAM of run B (ids differ, e.g. local/escape=local/escape-sorted); repeatable', (value: string, previous: string[] = []) => [...previous, value])
    .option(ACCEPT_DAMAGE_FLAG, ACCEPT_DAMAGE_HELP)
    .addHelpText(
      'after',
      '\nA damaged frame file is read like the collector reads a stream: each damaged stretch is skipped up to the next valid frame\n' +
        'and said on stderr with its offset and exact length (and under "inputs" in --json); the exit code is then 1\n' +
        '(WW_ERR_FRAME_FILE_DAMAGED) unless --accept-damage is given. A cut-off last frame is a warning only.',
    )
    .action((fileA: string, fileB: string, flags: { json?: boolean; pair?: string[]; acceptDamage?: boolean }) => {
      const pairs = parsePairs(flags.pair ?? []);
      const readA = readFrameFile(fileA);
      const readB = readFrameFile(fileB);
      const comparison = compareRuns(readA.frames, readB.frames, pairs);
      if (flags.json === true) {
        // A non-finite number (NaN from an empty quantity) is not JSON: written as a string.
        const replacer = (_key: string, value: unknown): unknown => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value);
        process.stdout.write(`${JSON.stringify({ a: fileA, b: fileB, inputs: { a: frameFileJson(readA), b: frameFileJson(readB) }, ...comparison }, replacer, 2)}\n`);
      } else {
        process.stdout.write(formatComparison(fileA, fileB, comparison));
      }
      failOnFrameFileDamage([readA, readB], flags.acceptDamage === true);
      if (comparison.streams.length === 0) {
        // Nothing compared is a failure of the comparison asked for, not a result (exit 2).
        const a = comparison.onlyInA[0];
        const b = comparison.onlyInB[0];
        const nOf = (key: string): string | undefined => /\bn=(\d+)\b/.exec(key)?.[1];
        const paired = (flags.pair ?? []).length > 0;
        const hint =
          a !== undefined && b !== undefined && nOf(a) !== nOf(b)
            ? `the streams differ in n (${streamOfKey(a)} at n = ${nOf(a) ?? '?'} in ${fileA}, ${streamOfKey(b)} at n = ${nOf(b) ?? '?'} in ${fileB}) and runs are compared at the same n only${paired ? ' (--pair matches names, not n)' : ''}: record both runs at one n`
            : a !== undefined && b !== undefined
              ? `pair them, e.g. --pair ${streamOfKey(a)}=${streamOfKey(b)}`
              : `pair streams of different names with --pair A_STREAM=B_STREAM`;
        throw new UsageError(`nothing was compared: no stream of ${fileA} matches one of ${fileB} by stream id and n; ${hint}`, { code: 'WW_ERR_COMPARE_NOTHING' });
      }
    });
}
