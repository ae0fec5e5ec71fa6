import { Option, type Command } from 'commander';
import {
  CategoricalDistribution,
  DEFAULT_QUANTILE_SEED,
  MAX_GROUP_SIZE,
  ModelError,
  createSeededRandom,
  expectedLoss,
  formatDistributionSpec,
  lossQuantiles,
  parseDistributionSpec,
  traceLocalityLoss,
  workloadLoss,
  type LossMethod,
} from '../../model/index.ts';
import { readTraceFile, readWeightsFile } from '../counts-file.ts';
import { rejectFlagsThatDoNotApply, type FlagRule } from '../flag-rules.ts';
import { UsageError } from '../usage-error.ts';

interface ModelFlags {
  dist?: string;
  counts?: string;
  pmf?: string;
  trace?: string;
  n: string;
  method: LossMethod;
  quantiles?: string;
  epsilon?: string;
  seed: string;
  json?: boolean;
}

/** One row of `warpwatch model` (the --json `results` entries). */
export interface ModelResultRow {
  n: number;
  expectedLoss: number;
  workloadLoss: number;
  quantiles: Record<string, number>;
  method: LossMethod;
  quantileMethod: 'exact' | 'conditional' | 'monte-carlo' | null;
  /** Set when `--method exact` was refused for this n and the fast method stood in. */
  note?: string;
}

/** The --json output of `warpwatch model`. */
export interface ModelOutput {
  distribution: {
    source: string;
    spec: ReturnType<typeof parseDistributionSpec> | null;
    description: string;
    support: number;
    min: number;
    max: number;
    mean: number;
    variance: number;
    totalWeight: number;
    truncation: { point: number; tailMass: number; epsilon: number } | null;
  };
  results: ModelResultRow[];
  /**
   * With `--trace`: the locality-aware loss of the trace's own layout (docs/model.md §11c) for
   * each n that divides its length, beside the independent-lanes figure of the same units;
   * absent for the other inputs.
   */
  locality?: {
    units: number;
    rows: {
      n: number;
      groups: number;
      layoutLoss: number;
      standardError: number | null;
      low: number | null;
      high: number | null;
      layoutWorkloadLoss: number;
      independentLoss: number;
      independentWorkloadLoss: number;
      localityBenefit: number;
    }[];
    /** Group sizes asked for with --n that do not divide the trace's length. */
    skipped: number[];
  };
}

function parseGroupSizes(text: string): number[] {
  const parts = text.split(',');
  const sizes = parts.map(Number);
  if (parts.some((part) => !/^\d+$/.test(part)) || sizes.some((n) => n < 1 || n > MAX_GROUP_SIZE)) {
    throw new UsageError(`--n must be a comma-separated list of integers 1..${MAX_GROUP_SIZE}, got '${text}'`);
  }
  return sizes;
}

function parseProbabilities(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
  const values = parts.map(Number);
  if (parts.some((part) => part === '') || values.some((p) => !(p > 0 && p < 1))) {
    throw new UsageError(`--quantiles must be a comma-separated list of probabilities in (0, 1), got '${text}'`);
  }
  return values;
}

/**
 * Reads a counts file (`--counts`: JSON `{"value": count}`, a JSON array of per-unit counts, or
 * CSV lines `value,count`), the strict parser of cli/counts-file.ts.
 *
 * @throws UsageError when the file is missing or malformed.
 * @example readCountsFile('counts.csv').mean()
 */
export function readCountsFile(file: string): CategoricalDistribution {
  return readWeightsFile(file, 'counts');
}

function formatNumber(value: number, digits = 6): string {
  return value.toFixed(digits);
}

function renderTable(output: ModelOutput, probabilities: readonly number[]): string {
  const truncation = output.distribution.truncation === null ? '-' : String(output.distribution.truncation.point);
  const header = ['n', 'expected loss', 'workload loss', ...probabilities.map((p) => `q${p}`), 'method', 'truncation'];
  const rows = output.results.map((row) => [
    String(row.n),
    formatNumber(row.expectedLoss),
    formatNumber(row.workloadLoss),
    ...probabilities.map((p) => formatNumber(row.quantiles[String(p)]!, 4)),
    row.quantileMethod !== null && row.quantileMethod !== 'exact' ? `${row.method} (quantiles: ${row.quantileMethod})` : row.method,
    truncation,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column < cells.length - 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  const notes = output.results.flatMap((row) => (row.note === undefined ? [] : [`note: ${row.note}`]));
  return [`distribution: ${output.distribution.description}`, line(header), ...rows.map(line), ...notes, ...renderLocality(output)].join('\n') + '\n';
}

/** The --trace table: layout loss with its interval beside the independent-lanes figure. */
function renderLocality(output: ModelOutput): string[] {
  const locality = output.locality;
  if (locality === undefined) return [];
  const header = ['n', 'groups', 'layout loss', '95% interval', 'layout workload loss', 'if random (independent lanes)', 'locality benefit'];
  const rows = locality.rows.map((row) => [
    String(row.n),
    String(row.groups),
    formatNumber(row.layoutLoss),
    row.low === null || row.high === null ? 'n/a (one group)' : `${formatNumber(row.low)}–${formatNumber(row.high)}`,
    formatNumber(row.layoutWorkloadLoss),
    formatNumber(row.independentLoss),
    `${row.localityBenefit.toFixed(3)}×`,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]): string => cells.map((cell, column) => cell.padStart(widths[column]!)).join('  ');
  return [
    '',
    `locality-aware loss of the trace's own layout (docs/model.md §11c; ${locality.units} units, consecutive groups of n, interval over batches of consecutive groups):`,
    line(header),
    ...rows.map(line),
    ...(locality.skipped.length === 0 ? [] : [`note: n = ${locality.skipped.join(', ')} do not divide the trace's ${locality.units} units (no layout loss)`]),
  ];
}

/** What decides whether a `model` flag applies. */
interface ModelContext {
  readonly input: '--dist' | '--counts' | '--pmf' | '--trace';
  /** The family of --dist; undefined when the spec does not parse (its own error comes first). */
  readonly family: string | undefined;
  readonly quantiles: boolean;
}

/** Families with an infinite support, cut at tail mass --epsilon. */
const UNBOUNDED_FAMILIES: ReadonlySet<string> = new Set(['geo', 'pois', 'nbinom']);

function modelContextOf(flags: ModelFlags): ModelContext {
  let family: string | undefined;
  try {
    family = flags.dist === undefined ? undefined : parseDistributionSpec(flags.dist).family;
  } catch {
    family = undefined;
  }
  const input = flags.counts !== undefined ? '--counts' : flags.pmf !== undefined ? '--pmf' : flags.trace !== undefined ? '--trace' : '--dist';
  return { input, family, quantiles: flags.quantiles !== undefined };
}

/** The flags of `warpwatch model` that apply to some inputs only (an error elsewhere). */
export const MODEL_FLAG_RULES: readonly FlagRule<ModelContext>[] = [
  {
    flag: '--epsilon',
    applies: (c) => c.input === '--dist' && (c.family === undefined || UNBOUNDED_FAMILIES.has(c.family)),
    only: 'the unbounded --dist families geo, pois and nbinom',
    instead: (c) => (c.input === '--dist' ? `${c.family ?? '?'} has a finite support: nothing is cut` : `the input is ${c.input}: nothing is cut`),
  },
  { flag: '--seed', applies: (c) => c.quantiles, only: '--quantiles', instead: () => 'the seed of Monte Carlo quantiles' },
];

/**
 * Computes what `warpwatch model` prints (exported for tests and other commands).
 *
 * @throws {UsageError} for bad flags or inputs; {ModelError} (a RangeError) from the model.
 */
export function runModelCommand(flags: ModelFlags, options: { groupSizesGiven?: boolean } = {}): ModelOutput {
  if ([flags.dist, flags.counts, flags.pmf, flags.trace].filter((f) => f !== undefined).length !== 1) {
    throw new UsageError(
      'give exactly one of --dist SPEC (e.g. nbinom(5,0.3)), --counts FILE (units observed per value), --pmf FILE (probabilities or weights per value) or --trace FILE (per-unit counts in unit order)',
    );
  }
  const trace = flags.trace === undefined ? undefined : readTraceFile(flags.trace);
  // A trace without --n: every n that divides its length, up to 1024 (docs/model.md §11c).
  const sizes =
    trace !== undefined && options.groupSizesGiven !== true
      ? Array.from({ length: Math.min(MAX_GROUP_SIZE, trace.length) }, (_, i) => i + 1).filter((n) => trace.length % n === 0)
      : parseGroupSizes(flags.n);
  const probabilities = flags.quantiles === undefined ? [] : parseProbabilities(flags.quantiles);
  if (!/^\d+$/.test(flags.seed) || !Number.isSafeInteger(Number(flags.seed))) throw new UsageError(`--seed must be a non-negative integer, got '${flags.seed}'`);
  let dist: CategoricalDistribution;
  let source: string;
  if (flags.dist !== undefined) {
    let epsilon: number | undefined;
    if (flags.epsilon !== undefined) {
      epsilon = Number(flags.epsilon);
      if (flags.epsilon.trim() === '' || !(epsilon > 0 && epsilon < 0.5)) {
        throw new UsageError(`--epsilon must be a number in (0, 0.5), got '${flags.epsilon}'`);
      }
    }
    try {
      const spec = parseDistributionSpec(flags.dist);
      dist = CategoricalDistribution.fromFamily(spec, epsilon === undefined ? {} : { epsilon });
      source = formatDistributionSpec(spec);
    } catch (error) {
      if (error instanceof ModelError) throw new UsageError(`--dist: ${error.message}`, { cause: error });
      throw error;
    }
  } else if (trace !== undefined) {
    if (flags.epsilon !== undefined) throw new UsageError('--epsilon applies to --dist families only, not to --trace');
    const counts = new Map<number, number>();
    for (const w of trace) counts.set(w, (counts.get(w) ?? 0) + 1);
    dist = CategoricalDistribution.fromCounts(counts);
    source = `trace:${flags.trace!}`;
  } else {
    dist = flags.counts === undefined ? readWeightsFile(flags.pmf!, 'pmf') : readCountsFile(flags.counts);
    source = flags.counts === undefined ? `pmf:${flags.pmf!}` : `counts:${flags.counts}`;
  }
  const seed = Number(flags.seed);
  const results = sizes.map((n): ModelResultRow => {
    const quantileResult = probabilities.length === 0 ? undefined : lossQuantiles(dist, n, probabilities, { random: createSeededRandom(seed) });
    let method = flags.method;
    let value: number;
    let note: string | undefined;
    try {
      value = expectedLoss(dist, n, { method });
    } catch (error) {
      // One n too large for the exact method falls back to the fast one (§8: they agree to ~1e-13).
      if (!(error instanceof ModelError) || error.code !== 'WW_ERR_MODEL_EXACT_TOO_LARGE') throw error;
      method = 'fast';
      value = expectedLoss(dist, n, { method });
      note = `exact method refused for n=${n} (${error.message}); fast method used`;
    }
    return {
      n,
      expectedLoss: value,
      workloadLoss: workloadLoss(dist, n),
      quantiles: quantileResult?.quantiles ?? {},
      method,
      quantileMethod: quantileResult?.method ?? null,
      ...(note === undefined ? {} : { note }),
    };
  });
  return {
    distribution: {
      source,
      spec: dist.spec ?? null,
      description: dist.describe(),
      support: dist.size,
      min: dist.min,
      max: dist.max,
      mean: dist.mean(),
      variance: dist.variance(),
      totalWeight: dist.totalWeight,
      truncation: dist.truncation === undefined ? null : { ...dist.truncation },
    },
    results,
    ...(trace === undefined ? {} : { locality: traceLocality(trace, sizes) }),
  };
}

/** The --trace sweep: the layout loss per n that divides the trace (model/what-ifs/run-policies.ts traceLocalityLoss). */
function traceLocality(trace: readonly number[], sizes: readonly number[]): NonNullable<ModelOutput['locality']> {
  const result = traceLocalityLoss(trace, sizes);
  const finite = (x: number): number | null => (Number.isFinite(x) ? x : null);
  return {
    units: trace.length,
    rows: result.rows.map((row) => ({
      n: row.groupSize,
      groups: row.groups,
      layoutLoss: row.lossContiguous.value,
      standardError: finite(row.lossContiguous.standardError),
      low: finite(row.lossContiguous.low),
      high: finite(row.lossContiguous.high),
      layoutWorkloadLoss: row.workloadLossContiguous.value,
      independentLoss: row.lossIndependent,
      independentWorkloadLoss: row.workloadLossIndependent,
      localityBenefit: row.localityBenefit,
    })),
    skipped: [...result.skippedGroupSizes],
  };
}

/**
 * Registers `warpwatch model`: the expected lockstep loss E[X_W(n)], workload loss and loss
 * quantiles of a distribution for several group sizes (docs/model.md §2).
 */
export function registerModelCommand(program: Command): void {
  program
    .command('model')
    .description('expected SIMT imbalance loss of a work distribution for group sizes n (docs/model.md §2)')
    .option('--dist <spec>', 'distribution: binom(N,p), geo(p), pois(lambda), unif(a,b), nbinom(r,p), cat(v:w,...)')
    .option('--counts <file>', 'observed counts: JSON {"value": count}, a JSON array of per-unit counts, or CSV lines value,count (integers)')
    .option('--pmf <file>', 'probabilities or relative weights per value (e.g. a published table): JSON {"value": weight} or CSV value,weight')
    .option('--trace <file>', 'per-unit counts in unit order: CSV one count per line (optional header) or a JSON array of integers; adds the locality-aware loss of its layout (docs/model.md §11c)')
    .option('--n <list>', `group sizes, comma-separated integers 1..${MAX_GROUP_SIZE} (default 32; with --trace, every n that divides its length)`, '32')
    .addOption(new Option('--method <method>', 'method for E[X]: fast (docs/model.md §2b) or exact (docs/model.md §2a)').choices(['fast', 'exact']).default('fast'))
    .option('--quantiles <list>', 'quantile probabilities of the loss in (0, 1), e.g. 0.5,0.95,0.99')
    .option('--epsilon <mass>', 'tail mass cut from unbounded families (default 1e-6)')
    .option('--seed <integer>', 'seed of Monte Carlo quantiles (used when the exact method is too large)', String(DEFAULT_QUANTILE_SEED))
    .option('--json', 'print one JSON object instead of the table')
    .addHelpText('after', '\n--epsilon applies to the unbounded families (geo, pois, nbinom) of --dist, --seed to --quantiles; elsewhere they are an error (exit 2).')
    .action((flags: ModelFlags, command: Command) => {
      rejectFlagsThatDoNotApply(command, modelContextOf(flags), MODEL_FLAG_RULES);
      const output = runModelCommand(flags, { groupSizesGiven: command.getOptionValueSource('n') === 'cli' });
      const probabilities = flags.quantiles === undefined ? [] : parseProbabilities(flags.quantiles);
      process.stdout.write(flags.json === true ? `${JSON.stringify(output, null, 2)}\n` : renderTable(output, probabilities));
    });
}
