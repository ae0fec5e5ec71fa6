import { Presets, SingleBar } from 'cli-progress';
import type { DemoRunPlan } from './demo-plan.ts';
import type { DemoProgress } from './run-demo.ts';

/**
 * Progress of the demo on a terminal: a bar for the kernels build (ninja's [k/N] lines) and
 * one for the workload launches. When stderr is not a terminal (CI, pipes) it prints one
 * plain line per run instead, so logs stay readable.
 */
export interface TerminalProgress extends DemoProgress {
  /** Receives one line of the kernels build output. */
  buildLine(line: string): void;
  /** The kernels build ended. */
  buildDone(millis: number): void;
}

/**
 * Creates the terminal progress writer.
 *
 * @param stream where to draw (stderr), `enabled` false prints nothing at all.
 * @example
 * const progress = createTerminalProgress(process.stderr, true);
 */
export function createTerminalProgress(stream: NodeJS.WriteStream, enabled: boolean): TerminalProgress {
  const tty = stream.isTTY === true;
  const write = (line: string): void => {
    if (enabled) stream.write(`${line}\n`);
  };
  let buildBar: SingleBar | undefined;
  let buildAnnounced = false;
  let runBar: SingleBar | undefined;
  let runs = 0;
  let done = 0;
  let current = '';
  const newBar = (format: string): SingleBar =>
    new SingleBar({ format, stream, hideCursor: true, clearOnComplete: false, barsize: 30, fps: 8 }, Presets.shades_classic);
  return {
    buildLine(line) {
      const step = /^\[(\d+)\/(\d+)\]/.exec(line);
      if (!buildAnnounced) {
        buildAnnounced = true;
        write('warpwatch demo: building the CPU workloads (kernels/) if needed ...');
      }
      if (step === null || !enabled || !tty) return;
      const value = Number(step[1]);
      const total = Number(step[2]);
      if (buildBar === undefined) {
        buildBar = newBar('  build    {bar} {value}/{total} steps | {duration_formatted}');
        buildBar.start(total, value);
      } else {
        buildBar.setTotal(total);
        buildBar.update(value);
      }
    },
    buildDone(millis) {
      buildBar?.stop();
      buildBar = undefined;
      if (buildAnnounced) write(`warpwatch demo: kernels ready in ${(millis / 1000).toFixed(1)} s`);
    },
    start(totalLaunches, runCount) {
      runs = runCount;
      write(`warpwatch demo: ${runCount} workload runs (${totalLaunches} launches) on the CPU lockstep backend`);
      if (enabled && tty) {
        runBar = newBar('  runs     {bar} {percentage}% | {run} | {duration_formatted} elapsed, eta {eta_formatted}');
        runBar.start(totalLaunches, 0, { run: '' });
      }
    },
    runStarted(plan: DemoRunPlan, index) {
      current = `${index + 1}/${runs} ${plan.workload} ${plan.variant} n=${plan.n}`;
      done = index;
      if (runBar !== undefined) runBar.update({ run: current });
      else if (index % 4 === 0 || index === runs - 1) write(`  run ${current}`);
    },
    launchDone() {
      runBar?.increment(1, { run: current });
    },
    collecting() {
      runBar?.stop();
      runBar = undefined;
      write(`warpwatch demo: ${done + 1} runs done; collecting the estimator's window results ...`);
    },
    stop() {
      runBar?.stop();
      runBar = undefined;
      buildBar?.stop();
      buildBar = undefined;
    },
  };
}
