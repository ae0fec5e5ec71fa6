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
