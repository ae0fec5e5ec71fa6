import { groupSizeProblem, jobProblem } from '../../contracts/index.ts';
import { parseDistributionSpec } from '../../model/index.ts';

/**
 * What `warpwatch demo` runs: the five reference families of docs/model.md §2d on the matpow
 * workload, and the data-driven escape workload plain and sorted, each at several group
 * sizes. Sizes are chosen so the default run (including a fresh kernels build) stays under
 * two minutes on a 2-core machine and `--quick` near 15 s.
 */

/** The matpow distributions: one per reference family, means 20..30 so runs cost alike. */
export const DEMO_FAMILY_SPECS = Object.freeze(['binom(60,0.5)', 'geo(0.05)', 'pois(30)', 'unif(10,50)', 'nbinom(5,0.15)'] as const);

/** One workload run of the demo: one process, one stream. */
export interface DemoRunPlan {
  readonly workload: 'matpow' | 'escape';
  /** The distribution spec for matpow, 'plain' or 'sorted' for escape. */
  readonly variant: string;
  /** Group size n (lanes in lockstep). */
  readonly n: number;
  /** Groups per launch. */
  readonly groupsPerLaunch: number;
  readonly launches: number;
  /** The kernel name in the stream id `<job>/<kernel>`. */
  readonly kernel: string;
  /** Seed passed to the workload (matpow draws its counts from it). */
  readonly seed: number;
  /** Command-line flags of the workload program, without the frame sink. */
  readonly args: readonly string[];
}

/** Settings of a demo, resolved from flags once. */
export interface DemoSettings {
  readonly quick: boolean;
  /** Group sizes of every workload. */
  readonly groupSizes: readonly number[];
  /** Units (lanes' work items) per launch of matpow; groups = units / n. */
  readonly matpowUnitsPerLaunch: number;
  /** Pixels per launch of escape (a square-ish image); groups = pixels / n. */
  readonly escapeUnitsPerLaunch: number;
  readonly launches: number;
  /** matpow distributions (family specs). */
  readonly families: readonly string[];
  /** Escape iteration cap. */
  readonly escapeMaxIterations: number;
  readonly seed: number;
  /** Job name of every stream; unique per demo so Kafka/Influx data of runs never mix. */
  readonly job: string;
}

/** Share of groups each demo run records as GroupSamples (contiguous runs of n units). */
export const DEMO_SAMPLE_RATE = 0.25;

/** Defaults of the full demo and of `--quick`. */
export const DEMO_DEFAULTS = Object.freeze({
  full: Object.freeze({ groupSizes: [4, 8, 16, 32], matpowUnitsPerLaunch: 4096, escapeUnitsPerLaunch: 65_536, launches: 2 }),
  quick: Object.freeze({ groupSizes: [8, 32], matpowUnitsPerLaunch: 4096, escapeUnitsPerLaunch: 65_536, launches: 1 }),
  escapeMaxIterations: 256,
  seed: 1,
});

/**
 * Resolves demo settings: quick or full defaults, overridden by explicit values.
 *
 * @throws RangeError when a group size is outside 1..32, a unit count is below the largest
 *   group size, or a family spec does not parse.
 * @example
 * resolveDemoSettings({ quick: true, job: 'demo-20250101T120000' }).groupSizes; // [8, 32]
 */
export function resolveDemoSettings(input: {
  readonly quick: boolean;
  readonly job: string;
  readonly groupSizes?: readonly number[];
  readonly matpowUnitsPerLaunch?: number;
  readonly escapeUnitsPerLaunch?: number;
  readonly launches?: number;
  readonly families?: readonly string[];
  readonly seed?: number;
}): DemoSettings {
  const base = input.quick ? DEMO_DEFAULTS.quick : DEMO_DEFAULTS.full;
  const groupSizes = [...new Set(input.groupSizes ?? base.groupSizes)].sort((a, b) => a - b);
  const problems: string[] = [];
  if (groupSizes.length === 0) problems.push('at least one group size is needed');
  for (const n of groupSizes) {
    const problem = groupSizeProblem(n);
    if (problem !== undefined) problems.push(`group size ${problem}, got ${n}`);
  }
  const largest = Math.max(...groupSizes, 1);
  const matpowUnitsPerLaunch = input.matpowUnitsPerLaunch ?? base.matpowUnitsPerLaunch;
  const escapeUnitsPerLaunch = input.escapeUnitsPerLaunch ?? base.escapeUnitsPerLaunch;
  for (const [name, value] of [
    ['matpow units per launch', matpowUnitsPerLaunch],
    ['escape units per launch', escapeUnitsPerLaunch],
  ] as const) {
    if (!Number.isSafeInteger(value) || value < largest || value > 1 << 24) problems.push(`${name} must be an integer ${largest}..${1 << 24}, got ${value}`);
  }
  const launches = input.launches ?? base.launches;
  if (!Number.isInteger(launches) || launches < 1 || launches > 1000) problems.push(`launches must be an integer 1..1000, got ${launches}`);
  const families = input.families ?? DEMO_FAMILY_SPECS;
  for (const spec of families) {
    try {
      parseDistributionSpec(spec);
    } catch (error) {
      problems.push(`family '${spec}': ${(error as Error).message}`);
    }
  }
  const seed = input.seed ?? DEMO_DEFAULTS.seed;
  if (!Number.isSafeInteger(seed) || seed < 0) problems.push(`seed must be a non-negative integer, got ${seed}`);
  const jobRule = jobProblem(input.job);
  if (jobRule !== undefined) problems.push(`job ${jobRule}, got '${input.job}'`);
  if (problems.length > 0) throw new RangeError(problems.join('; '));
  return Object.freeze({
    quick: input.quick,
    groupSizes: Object.freeze(groupSizes),
    matpowUnitsPerLaunch,
    escapeUnitsPerLaunch,
    launches,
    families: Object.freeze([...families]),
    escapeMaxIterations: DEMO_DEFAULTS.escapeMaxIterations,
    seed,
    job: input.job,
  });
}

/** Kernel name of a matpow family stream: 'matpow-pois(30)' → 'matpow-pois-30'. */
function matpowKernelName(spec: string): string {
  return `matpow-${spec.replace(/[(),:\s]+/g, '-').replace(/-+$/, '')}`;
}

/**
 * The runs of a demo, in execution order: every matpow family at every group size, then
 * escape plain and sorted at every group size. Every run of a demo uses the same seed, so
 * a family's counts at different n come from the same random stream.
 *
 * @example
 * planDemoRuns(settings).length; // (families + 2) × group sizes
 */
export function planDemoRuns(settings: DemoSettings): DemoRunPlan[] {
  const runs: DemoRunPlan[] = [];
  const common = (n: number, groupsPerLaunch: number): string[] => [
    '--n',
    String(n),
    '--groups',
    String(groupsPerLaunch),
    '--launches',
    String(settings.launches),
    '--seed',
    String(settings.seed),
    '--job',
    settings.job,
    // Unbiased sampling (the programs' default, said explicitly): stride aliases with escape's rows.
    '--selection',
    'hash',
    // Every sampled group is a contiguous run of n units, what the locality-aware prediction
    // (docs/model.md §11) is computed from; 1 in 4 groups (the default is 1 in 64) gives at
    // least 256 runs per launch at n = 32, enough for escape's varied warps (docs/demo.md).
    '--sample-rate',
    String(DEMO_SAMPLE_RATE),
    '--quiet',
  ];
  for (const spec of settings.families) {
    for (const n of settings.groupSizes) {
      const groupsPerLaunch = Math.floor(settings.matpowUnitsPerLaunch / n);
      const kernel = matpowKernelName(spec);
      runs.push({
        workload: 'matpow',
        variant: spec,
        n,
        groupsPerLaunch,
        launches: settings.launches,
        kernel,
        seed: settings.seed,
        args: ['--dist', spec, ...common(n, groupsPerLaunch), '--kernel', kernel],
      });
    }
  }
  for (const sorted of [false, true]) {
    for (const n of settings.groupSizes) {
      const groupsPerLaunch = Math.floor(settings.escapeUnitsPerLaunch / n);
      const kernel = sorted ? 'escape-sorted' : 'escape';
      runs.push({
        workload: 'escape',
        variant: sorted ? 'sorted' : 'plain',
        n,
        groupsPerLaunch,
        launches: settings.launches,
        kernel,
        seed: settings.seed,
        args: [
          ...common(n, groupsPerLaunch),
          '--kernel',
          kernel,
          '--max-iter',
          String(settings.escapeMaxIterations),
          ...(sorted ? ['--sorted'] : []),
        ],
      });
    }
  }
  return runs;
}
