/**
 * The context a benchmark receives: timing of cases (median of repeated runs), baselines
 * measured in the same run, and targets checked against the medians.
 */

/** Parameters recorded with a case (sizes, n, distribution names). */
export type BenchParameters = Readonly<Record<string, string | number | boolean>>;

/** How to time one case. */
export interface MeasureOptions {
  /** Timed runs wanted (default 15); fewer when maxTotalMillis runs out first (at least minRuns). */
  readonly runs?: number;
  /** Lower bound on timed runs even past maxTotalMillis (default 3). */
  readonly minRuns?: number;
  /** Untimed warm-up runs first (default 2), so the JIT has compiled the code. */
  readonly warmupRuns?: number;
  /** Time budget for the timed runs (default 5000 ms). */
  readonly maxTotalMillis?: number;
  /** Name of another case of this bench (measured earlier) to report the ratio against. */
  readonly baseline?: string;
  /** Time basis of the ratio to the baseline; default the context's (see {@link TimeBasis}). */
  readonly basis?: TimeBasis;
  readonly parameters?: BenchParameters;
}

/** One measured case. */
export interface BenchCaseResult {
  readonly name: string;
  readonly parameters: BenchParameters;
  readonly runs: number;
  readonly medianMillis: number;
  readonly minMillis: number;
  readonly maxMillis: number;
  /** Median and minimum CPU time of this process per run (user + system, all threads). */
  readonly medianCpuMillis: number;
  readonly minCpuMillis: number;
  readonly baseline?: string;
  /** Ratio of this case's median to the baseline's median (both from this run, on the context's time basis). */
  readonly ratioToBaseline?: number;
}

/**
 * Which time targets and baseline ratios use: `cpu` (default) is the process's CPU time per
 * run, unaffected by other processes taking turns on the cores (on a shared 2-core machine wall
 * time swings by 2–4× with their load); `wall` is elapsed time.
 */
export type TimeBasis = 'cpu' | 'wall';

/** A target checked against medians: an upper time limit, or a minimum speedup of one case over another. */
export interface BenchTargetResult {
  readonly description: string;
  readonly kind: 'max-millis' | 'min-speedup';
  readonly case: string;
  readonly versus?: string;
  readonly limit: number;
  readonly measured: number;
  readonly timeBasis: TimeBasis;
  readonly pass: boolean;
}

/** What a bench's run() may return in addition to what it recorded through the context. */
export interface BenchResult {
  /** Free-form notes (what was skipped and why, the distributions used). */
  readonly notes?: readonly string[];
  /** Extra numbers worth recording (e.g. computed values, node counts). */
  readonly metrics?: Readonly<Record<string, number>>;
}

/** The API a bench/<name>.bench.ts `run(ctx)` uses. */
export interface BenchContext {
  /** True with `npm run bench -- --quick`: fewer runs, same cases. */
  readonly quick: boolean;
  /** The time basis of targets and baseline ratios. */
  readonly timeBasis: TimeBasis;
  /** Times fn (sync or async) and records the case; returns its result. */
  measure(name: string, fn: () => unknown, options?: MeasureOptions): Promise<BenchCaseResult>;
  /**
   * Records a target: the case's median must be at most maxMillis. `basis` overrides the
   * context's time basis (e.g. 'wall' for cases that run child processes, whose CPU time this
   * process does not see).
   */
  targetMaxMillis(caseName: string, maxMillis: number, description: string, basis?: TimeBasis): BenchTargetResult;
  /** Records a target: slowCase's median / fastCase's median must be at least minSpeedup (`basis` as above). */
  targetMinSpeedup(fastCase: string, slowCase: string, minSpeedup: number, description: string, basis?: TimeBasis): BenchTargetResult;
  /** Adds a note to the result file. */
  note(text: string): void;
  /** Prints a progress line (stderr). */
  log(text: string): void;
  readonly cases: readonly BenchCaseResult[];
  readonly targets: readonly BenchTargetResult[];
  readonly notes: readonly string[];
}

function median(sorted: readonly number[]): number {
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * Creates a context; `now` is the clock in milliseconds (performance.now by default).
 *
 * @example const ctx = createBenchContext({ quick: false, log: (t) => process.stderr.write(t + '\n') });
 */
export function createBenchContext(options: {
  quick: boolean;
  log: (text: string) => void;
  now?: () => number;
  cpuNow?: () => number;
  timeBasis?: TimeBasis;
}): BenchContext {
  const now = options.now ?? (() => performance.now());
  const cpuNow =
    options.cpuNow ??
    (() => {
      const usage = process.cpuUsage();
      return (usage.user + usage.system) / 1000;
    });
  const timeBasis = options.timeBasis ?? 'cpu';
  const basisOf = (c: BenchCaseResult, basis: TimeBasis = timeBasis): number => (basis === 'cpu' ? c.medianCpuMillis : c.medianMillis);
  const cases: BenchCaseResult[] = [];
  const targets: BenchTargetResult[] = [];
  const notes: string[] = [];
  const find = (name: string): BenchCaseResult => {
    const found = cases.find((c) => c.name === name);
    if (found === undefined) throw new RangeError(`bench case '${name}' was not measured; measured: ${cases.map((c) => c.name).join(', ')}`);
    return found;
  };
  return {
    quick: options.quick,
    timeBasis,
    cases,
    targets,
    notes,
    async measure(name, fn, measureOptions = {}) {
      const runs = options.quick ? Math.min(3, measureOptions.runs ?? 15) : (measureOptions.runs ?? 15);
      const minRuns = Math.min(runs, measureOptions.minRuns ?? 3);
      const warmups = options.quick ? Math.min(1, measureOptions.warmupRuns ?? 2) : (measureOptions.warmupRuns ?? 2);
      const budget = measureOptions.maxTotalMillis ?? 5000;
      for (let i = 0; i < warmups; i++) await fn();
      const durations: number[] = [];
      const cpuDurations: number[] = [];
      const started = now();
      while (durations.length < runs && (durations.length < minRuns || now() - started < budget)) {
        const before = now();
        const cpuBefore = cpuNow();
        await fn();
        cpuDurations.push(cpuNow() - cpuBefore);
        durations.push(now() - before);
      }
      durations.sort((a, b) => a - b);
      cpuDurations.sort((a, b) => a - b);
      let result: BenchCaseResult = {
        name,
        parameters: measureOptions.parameters ?? {},
        runs: durations.length,
        medianMillis: median(durations),
        minMillis: durations[0]!,
        maxMillis: durations[durations.length - 1]!,
        medianCpuMillis: median(cpuDurations),
        minCpuMillis: cpuDurations[0]!,
      };
      if (measureOptions.baseline !== undefined) {
        const base = find(measureOptions.baseline);
        result = { ...result, baseline: base.name, ratioToBaseline: basisOf(result, measureOptions.basis) / basisOf(base, measureOptions.basis) };
      }
      cases.push(result);
      options.log(
        `  ${name}: median ${result.medianMillis.toPrecision(4)} ms wall, ${result.medianCpuMillis.toPrecision(4)} ms cpu over ${result.runs} runs`,
      );
      return result;
    },
    targetMaxMillis(caseName, maxMillis, description, basis = timeBasis) {
      const measured = basisOf(find(caseName), basis);
      const target: BenchTargetResult = { description, kind: 'max-millis', case: caseName, limit: maxMillis, measured, timeBasis: basis, pass: measured <= maxMillis };
      targets.push(target);
      return target;
    },
    targetMinSpeedup(fastCase, slowCase, minSpeedup, description, basis = timeBasis) {
      const measured = basisOf(find(slowCase), basis) / basisOf(find(fastCase), basis);
      const target: BenchTargetResult = {
        description,
        kind: 'min-speedup',
        case: fastCase,
        versus: slowCase,
        limit: minSpeedup,
        measured,
        timeBasis: basis,
        pass: measured >= minSpeedup,
      };
      targets.push(target);
      return target;
    },
    note(text) {
      notes.push(text);
    },
    log: options.log,
  };
}
