import { cpus, platform, release } from 'node:os';
import { runsByLaunchOf } from '../../analysis/index.ts';
import { streamWorkloadFrames, WorkloadError, type WorkloadReport } from '../../kernels/index.ts';
import { decodeFrame, decodeFrameHeader, type GroupSamplesFrame } from '../../protocol/index.ts';
import { sampledRunsKey, type DemoResults, type DemoRun } from '../report/demo-results.ts';
import { planDemoRuns, type DemoRunPlan, type DemoSettings } from './demo-plan.ts';
import { demoRunOf } from './demo-run-result.ts';
import type { DemoStreamRef, DemoTransport } from './demo-transport.ts';
import { DemoError } from './errors.ts';

/** What the demo reports while it runs (the CLI draws progress bars from it; tests ignore it). */
export interface DemoProgress {
  /** Runs are about to start; `totalLaunches` LaunchSummary frames will arrive in all. */
  start(totalLaunches: number, runs: number): void;
  runStarted(plan: DemoRunPlan, index: number): void;
  /** One LaunchSummary frame went to the transport. */
  launchDone(): void;
  /** The estimator results are being collected (Kafka: the service's windows close). */
  collecting(): void;
  stop(): void;
}

/** A progress sink that ignores everything. */
export const SILENT_DEMO_PROGRESS: DemoProgress = {
  start: () => undefined,
  runStarted: () => undefined,
  launchDone: () => undefined,
  collecting: () => undefined,
  stop: () => undefined,
};

/** Inputs of {@link runDemo}. */
export interface DemoInputs {
  readonly settings: DemoSettings;
  /** Directory with warpwatch-matpow-cpu and warpwatch-escape-cpu (ensureKernelsBuilt's binDir). */
  readonly binDir: string;
  readonly transport: DemoTransport;
  readonly progress?: DemoProgress;
  /** Whether the estimator also writes to InfluxDB (recorded in the results). */
  readonly influx: boolean;
  /** Time spent building kernels before, ms (recorded). */
  readonly buildMillis: number;
  /** Wall clock (ms since epoch) at the start of the demo, for the duration. */
  readonly startedAtMillis: number;
  /** Longest wait for the estimator's results after the last run, ms. */
  readonly collectTimeoutMillis?: number;
  /**
   * Filled, when given, with each run's sampled groups' lane counts by launch (the runs of
   * `advise --frames`, docs/model.md §11), keyed by sampledRunsKey (cli/report/demo-results.ts): what the demo's advice
   * is computed from. Kept out of results.json (tens of thousands of counts per run).
   */
  readonly sampledRuns?: Map<string, number[][][]>;
}


const CPU_NOTE =
  'All measurements come from the CPU lockstep backend: n CPU SIMD lanes in lockstep, timed with a steady clock (ns). They show the lockstep loss on this CPU, not GPU numbers.';

function machineInfo(): DemoResults['machine'] {
  const list = cpus();
  return { cpu: list[0]?.model.trim() ?? 'unknown', cores: list.length, os: `${platform()} ${release()}`, node: process.versions.node };
}

/**
 * Runs the demo: each planned workload run as a CPU program whose frames stream through the
 * transport into the estimator, then collects the estimator's window results and turns
 * them into DemoResults (docs/model.md §2c quantities per workload and n).
 *
 * @throws DemoError WW_ERR_DEMO_WORKLOAD (a program failed), WW_ERR_DEMO_NO_RESULT (the
 *   estimator produced no complete window for a run), WW_ERR_DEMO_TRANSPORT.
 * @example
 * const results = await runDemo({ settings, binDir, transport, influx: false, buildMillis: 0, startedAtMillis: Date.now() });
 */
export async function runDemo(inputs: DemoInputs): Promise<DemoResults> {
  const progress = inputs.progress ?? SILENT_DEMO_PROGRESS;
  const plans = planDemoRuns(inputs.settings);
  const executed: { plan: DemoRunPlan; report: WorkloadReport; ref: DemoStreamRef }[] = [];
  const notes: string[] = [CPU_NOTE];
  progress.start(plans.reduce((sum, plan) => sum + plan.launches, 0), plans.length);
  try {
    for (const [index, plan] of plans.entries()) {
      progress.runStarted(plan, index);
      const streamId = `${inputs.settings.job}/${plan.kernel}`;
      const samples: GroupSamplesFrame[] = [];
      const { report, frameErrors, rejectedBytes } = await streamWorkloadFrames({
        binDir: inputs.binDir,
        workload: plan.workload,
        args: plan.args,
        onFrame: (raw) => {
          const kind = decodeFrameHeader(raw).kind;
          if (kind === 'launch-summary') progress.launchDone();
          else if (inputs.sampledRuns !== undefined) {
            const frame = decodeFrame(raw);
            if (frame.type === 'group-samples') samples.push(frame);
          }
          return inputs.transport.deliver(raw, streamId);
        },
      });
      inputs.sampledRuns?.set(sampledRunsKey(streamId, plan.n), runsByLaunchOf(samples));
      if (frameErrors.length > 0) {
        notes.push(`${streamId} n=${plan.n}: ${rejectedBytes} malformed bytes skipped in ${frameErrors.length} stretch(es) (first: ${frameErrors[0]?.message ?? ''})`);
      }
      if (report.framesDropped > 0) notes.push(`${streamId} n=${plan.n}: the program dropped ${report.framesDropped} frames`);
      const ref: DemoStreamRef = { stream: streamId, groupSize: plan.n, groups: report.groups };
      inputs.transport.endRun(ref);
      executed.push({ plan, report, ref });
    }
    progress.collecting();
    const records = await inputs.transport.collect(
      executed.map((e) => e.ref),
      inputs.collectTimeoutMillis ?? 60_000,
    );
    const runs: DemoRun[] = executed.map((e, i) => demoRunOf(e.plan, records[i] ?? [], e.report));
    const disturbed = runs.reduce((sum, run) => sum + run.groupsDisturbed, 0);
    if (disturbed > 0) {
      notes.push(`${disturbed} CPU groups stayed disturbed by preemption after all re-measurements; their measured loss includes that noise.`);
    }
    notes.push(...inputs.transport.problems());
    return {
      version: 1,
      createdAt: new Date(inputs.startedAtMillis).toISOString(),
      durationMillis: Date.now() - inputs.startedAtMillis,
      transport: inputs.transport.kind,
      influx: inputs.influx,
      machine: machineInfo(),
      settings: {
        quick: inputs.settings.quick,
        job: inputs.settings.job,
        groupSizes: inputs.settings.groupSizes,
        launches: inputs.settings.launches,
        matpowUnitsPerLaunch: inputs.settings.matpowUnitsPerLaunch,
        escapeUnitsPerLaunch: inputs.settings.escapeUnitsPerLaunch,
        seed: inputs.settings.seed,
      },
      buildMillis: inputs.buildMillis,
      runs,
      notes,
    };
  } catch (error) {
    if (error instanceof DemoError) throw error;
    // A program that failed (missing, exit non-zero, no report) is the demo's workload error, whatever the kernels' kind.
    if (error instanceof WorkloadError) throw new DemoError('WW_ERR_DEMO_WORKLOAD', error.message, { cause: error });
    throw new DemoError('WW_ERR_DEMO_TRANSPORT', `demo failed: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  } finally {
    progress.stop();
  }
}
