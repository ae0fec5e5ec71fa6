/**
 * Progress of `warpwatch advise` on stderr: the what-ifs of a large support can take
 * seconds. On a terminal one status line is rewritten in place and cleared at the end; otherwise
 * (a pipe, a log file) one line per step, at most a handful, plus one every 10 s within a long
 * step (updates within a step are thinned, on a terminal to 4 a second). Nothing is written for quick runs:
 * only when the support is large (≥ {@link PROGRESS_SUPPORT} values) or a step starts after
 * {@link PROGRESS_AFTER_MS} of work.
 */

/** Supports at least this large always show progress (their sorting takes seconds). */
export const PROGRESS_SUPPORT = 20_000;

/** A step that starts this long after the first one shows progress from then on (ms). */
export const PROGRESS_AFTER_MS = 1000;

/** Updates within one step (same index) are written at most this often: terminal, pipe (ms). */
export const UPDATE_INTERVAL_TTY_MS = 250;
export const UPDATE_INTERVAL_PIPE_MS = 10_000;

/** Where progress goes: process.stderr, or a double in tests. */
export interface ProgressStream {
  readonly isTTY?: boolean | undefined;
  write(text: string): unknown;
}

/** The reporter: pass `onProgress` to computeAdvice, call `done` when it returns (or throws). */
export interface AdviseProgress {
  onProgress(step: string, index: number, steps: number): void;
  done(): void;
}

/**
 * Creates the reporter for one advise run.
 *
 * @param stream stderr (a TTY gets one rewritten line; anything else one line per shown step).
 * @param supportSize values in the distribution's support (large supports report from the start).
 * @param now clock in ms (performance.now by default).
 * @example
 * const progress = createAdviseProgress(process.stderr, dist.size);
 * try { computeAdvice({ ..., onProgress: progress.onProgress }); } finally { progress.done(); }
 */
export function createAdviseProgress(stream: ProgressStream, supportSize: number, now: () => number = () => performance.now()): AdviseProgress {
  const start = now();
  let shown = false;
  let lineOpen = false;
  let lastIndex = -1;
  let lastWrite = -Infinity;
  return {
    onProgress(step, index, steps) {
      const time = now();
      const elapsed = time - start;
      if (!shown && supportSize < PROGRESS_SUPPORT && elapsed < PROGRESS_AFTER_MS) return;
      // An update within the step last shown: thinned.
      if (shown && index === lastIndex && time - lastWrite < (stream.isTTY === true ? UPDATE_INTERVAL_TTY_MS : UPDATE_INTERVAL_PIPE_MS)) return;
      shown = true;
      lastIndex = index;
      lastWrite = time;
      const text = `warpwatch advise: ${step} (step ${index} of ${steps}, ${(elapsed / 1000).toFixed(1)} s, ${supportSize} values)`;
      if (stream.isTTY === true) {
        stream.write(`\r\u001b[K${text}`);
        lineOpen = true;
      } else {
        stream.write(`${text}\n`);
      }
    },
    done() {
      if (lineOpen) stream.write('\r\u001b[K');
      lineOpen = false;
    },
  };
}
