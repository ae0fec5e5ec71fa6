/** Receives one finished line of progress text (no trailing newline). */
export type ProgressWriter = (line: string) => void;

/** Reports the steps of bringing the stack up: which step, how long it took, and a heartbeat for long ones. */
export interface StepReporter {
  /**
   * Runs `work` as a named step: prints a start line (with `expectation`, e.g. 'first run only, ~2 min'),
   * a heartbeat every `heartbeatMillis` while it runs, and a line with the elapsed time when done or failed.
   */
  step<T>(name: string, work: () => Promise<T>, options?: { expectation?: string; heartbeatMillis?: number }): Promise<T>;
  /** Prints an informational line. */
  note(text: string): void;
}

/** Formats a duration for people: '850 ms', '7.4 s', '2 min 05 s'. @example formatDuration(125_000); // '2 min 05 s' */
export function formatDuration(millis: number): string {
  if (millis < 1_000) return `${Math.round(millis)} ms`;
  if (millis < 60_000) return `${(millis / 1_000).toFixed(1)} s`;
  const seconds = Math.round(millis / 1_000);
  return `${Math.floor(seconds / 60)} min ${String(seconds % 60).padStart(2, '0')} s`;
}

/**
 * Creates a {@link StepReporter} writing plain lines (readable in CI logs, no cursor tricks).
 *
 * @param write - where lines go, e.g. `(line) => process.stderr.write(line + '\n')`.
 * @param now - clock in milliseconds (injectable for tests).
 * @example
 * const report = createStepReporter((line) => console.error(line));
 * await report.step('kafka: download jars', () => download(), { expectation: 'first run only, ~10 s' });
 */
export function createStepReporter(write: ProgressWriter, now: () => number = Date.now): StepReporter {
  return {
    async step<T>(name: string, work: () => Promise<T>, options: { expectation?: string; heartbeatMillis?: number } = {}): Promise<T> {
      const started = now();
      write(`▸ ${name}${options.expectation ? ` (${options.expectation})` : ''} …`);
      const heartbeat = setInterval(() => write(`  … ${name}: still running after ${formatDuration(now() - started)}`), options.heartbeatMillis ?? 15_000);
      heartbeat.unref();
      try {
        const result = await work();
        write(`✓ ${name} in ${formatDuration(now() - started)}`);
        return result;
      } catch (error) {
        write(`✗ ${name} failed after ${formatDuration(now() - started)}`);
        throw error;
      } finally {
        clearInterval(heartbeat);
      }
    },
    note(text: string): void {
      write(`  ${text}`);
    },
  };
}

/** A reporter that prints nothing. @example await silentReporter.step('x', async () => 1); */
export const silentReporter: StepReporter = createStepReporter(() => undefined);
