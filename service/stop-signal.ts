/** The signals that stop a service run from the command line. */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

/** A wait for SIGTERM or SIGINT; see {@link waitForStopSignal}. */
export interface StopSignal {
  /** Resolves with the name of the first stop signal received. */
  readonly received: Promise<string>;
  /** Stops listening (the listeners are removed; `received` then never resolves). */
  dispose(): void;
}

/**
 * Listens once for SIGTERM and SIGINT, for a service's entry point (`warpwatch collect`,
 * `warpwatch estimate`): the first one resolves `received` with its name.
 *
 * @example
 * const signal = waitForStopSignal();
 * const name = await signal.received; // 'SIGTERM'
 * signal.dispose();
 */
export function waitForStopSignal(target: Pick<NodeJS.Process, 'once' | 'removeListener'> = process): StopSignal {
  let onSignal: (name: string) => void = () => {};
  const received = new Promise<string>((resolve) => {
    onSignal = resolve;
  });
  const handler = (name: string): void => onSignal(name);
  for (const name of STOP_SIGNALS) target.once(name, handler);
  return {
    received,
    dispose() {
      for (const name of STOP_SIGNALS) target.removeListener(name, handler);
    },
  };
}

/** What {@link stopWithinBound} needs besides the stop itself (the process's exit, for tests). */
export interface StopBoundOptions {
  /** The longest the stop may take from the signal (ms): the service's documented bound. */
  readonly boundMillis: number;
  /** Where the one line goes when the bound is reached. */
  readonly log: (line: string) => void;
  /** The line's code (e.g. `WW_ERR_ESTIMATOR_SHUTDOWN`). */
  readonly code: string;
  /** Ends the process (default process.exit). */
  readonly exit?: (code: number) => void;
  /** How long a finished stop waits for the event loop to empty by itself before the process is ended with its exit code (ms; default 1,000). */
  readonly drainMillis?: number;
}

/**
 * Runs a service's stop with its documented bound, so that a SIGTERM always ends the process:
 * a stop still running `boundMillis` after it began ends the process with exit 1 and one line
 * (nothing is lost by it: the services commit nothing before it is durable, docs/errors.md); a
 * stop that finished but left a handle behind (a kafkajs reconnect timer or socket after a
 * broker restart) ends the process `drainMillis` later with the exit code set so far
 * (`process.exitCode`, else 0). Both timers are unref'd: a process whose event loop empties
 * exits by itself, as before.
 *
 * @throws whatever `stop` throws (the caller's error handling decides the exit code; the timers stay armed)
 * @example
 * await stopWithinBound(() => service.stop('SIGTERM'), { boundMillis: 10_000, log, code: 'WW_ERR_COLLECTOR_SHUTDOWN' });
 */
export async function stopWithinBound(stop: () => Promise<void>, options: StopBoundOptions): Promise<void> {
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const startedAt = Date.now();
  const bound = setTimeout(() => {
    options.log(
      `${options.code}: the stop did not finish within ${options.boundMillis} ms (WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS); exiting now with 1 (nothing unwritten was committed: the next start or owner reads it again)`,
    );
    exit(1);
  }, options.boundMillis);
  bound.unref();
  try {
    await stop();
  } finally {
    clearTimeout(bound);
    const left = Math.max(0, startedAt + options.boundMillis - Date.now());
    const drain = setTimeout(() => exit(typeof process.exitCode === 'number' ? process.exitCode : 0), Math.min(options.drainMillis ?? 1_000, left));
    drain.unref();
  }
}
