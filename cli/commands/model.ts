import { readFileSync } from 'node:fs';
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
  workloadLoss,
  type LossMethod,
} from '../../model/index.ts';
import { UsageError } from '../usage-error.ts';

interface ModelFlags {
  dist?: string;
  counts?: string;
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
  quantileMethod: 'exact' | 'monte-carlo' | null;
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
}

function parseGroupSizes(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
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
 * Reads a counts file: JSON `{"value": count, ...}` or CSV lines `value,count` (an optional
 * header line, blank lines and `#` comments are skipped).
 */
export function readCountsFile(file: string): CategoricalDistribution {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read --counts file '${file}': ${(error as Error).message}`);
  }
  try {
    if (/^\s*[[{]/.test(text)) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (error) {
        throw new UsageError(`--counts file '${file}' is not valid JSON: ${(error as Error).message}`);
      }
      if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
        throw new UsageError(`--counts file '${file}' must hold a JSON object {"value": count, ...}`);
      }
      return CategoricalDistribution.fromCounts(parsed as Record<string, number>);
    }
    const pairs: [number, number][] = [];
    const lines = text.split(/\r?\n/);
    lines.forEach((raw, index) => {
      const line = raw.trim();
      if (line === '' || line.startsWith('#')) return;
      const fields = line.split(',').map((field) => field.trim());
      const numeric = fields.length === 2 && fields.every((field) => field !== '' && Number.isFinite(Number(field)));
      if (!numeric) {
        if (pairs.length === 0 && index === lines.findIndex((l) => l.trim() !== '' && !l.trim().startsWith('#'))) return; // header
        throw new UsageError(`--counts file '${file}' line ${index + 1}: expected 'value,count', got '${line}'`);
      }
      pairs.push([Number(fields[0]), Number(fields[1])]);
    });
    return CategoricalDistribution.fromCounts(pairs);
  } catch (error) {
    if (error instanceof ModelError) throw new UsageError(`--counts file '${file}': ${error.message}`, { cause: error });
    throw error;
  }
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
    row.quantileMethod === 'monte-carlo' ? `${row.method} (quantiles: monte-carlo)` : row.method,
    truncation,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]): string =>
    cells
      .map((cell, column) => (column < cells.length - 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!)))
      .join('  ')
      .trimEnd();
  return [`distribution: ${output.distribution.description}`, line(header), ...rows.map(line)].join('\n') + '\n';
}

/**
 * Computes what `warpwatch model` prints (exported for tests and other commands).
 *
 * @throws {UsageError} for bad flags or inputs; {ModelError} (a RangeError) from the model.
 */
export function runModelCommand(flags: ModelFlags): ModelOutput {
  if ((flags.dist === undefined) === (flags.counts === undefined)) {
    throw new UsageError('give exactly one of --dist SPEC (e.g. nbinom(5,0.3)) or --counts FILE');
  }
  const sizes = parseGroupSizes(flags.n);
  const probabilities = flags.quantiles === undefined ? [] : parseProbabilities(flags.quantiles);
  if (!/^\d+$/.test(flags.seed.trim())) throw new UsageError(`--seed must be a non-negative integer, got '${flags.seed}'`);
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
  } else {
    if (flags.epsilon !== undefined) throw new UsageError('--epsilon applies to --dist families only, not to --counts');
    dist = readCountsFile(flags.counts!);
    source = `counts:${flags.counts!}`;
  }
  const seed = Number(flags.seed);
  const results = sizes.map((n): ModelResultRow => {
    const quantileResult = probabilities.length === 0 ? undefined : lossQuantiles(dist, n, probabilities, { random: createSeededRandom(seed) });
    return {
      n,
      expectedLoss: expectedLoss(dist, n, { method: flags.method }),
      workloadLoss: workloadLoss(dist, n),
      quantiles: quantileResult?.quantiles ?? {},
      method: flags.method,
      quantileMethod: quantileResult?.method ?? null,
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
    .option('--counts <file>', 'observed counts: JSON {"value": count} or CSV lines value,count')
    .option('--n <list>', `group sizes, comma-separated integers 1..${MAX_GROUP_SIZE}`, '32')
    .addOption(new Option('--method <method>', 'method for E[X]: fast (docs/model.md §2b) or exact (docs/model.md §2a)').choices(['fast', 'exact']).default('fast'))
    .option('--quantiles <list>', 'quantile probabilities of the loss in (0, 1), e.g. 0.5,0.95,0.99')
    .option('--epsilon <mass>', 'tail mass cut from unbounded families (default 1e-6)')
    .option('--seed <integer>', 'seed of Monte Carlo quantiles (used when the exact method is too large)', String(DEFAULT_QUANTILE_SEED))
    .option('--json', 'print one JSON object instead of the table')
    .action((flags: ModelFlags) => {
      const output = runModelCommand(flags);
      const probabilities = flags.quantiles === undefined ? [] : parseProbabilities(flags.quantiles);
      process.stdout.write(flags.json === true ? `${JSON.stringify(output, null, 2)}\n` : renderTable(output, probabilities));
    });
}
