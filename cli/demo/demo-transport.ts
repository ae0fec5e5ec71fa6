import type { DistributionRecord } from '../../contracts/index.ts';

/** Which run a set of window results belongs to. */
export interface DemoStreamRef {
  /** Stream id `<job>/<kernel>`. */
  readonly stream: string;
  /** Group size n (part of the estimator's stream key). */
  readonly groupSize: number;
  /** Groups the run measured in all its launches (complete when the records add up to it). */
  readonly groups: number;
}

/**
 * How the demo's frames reach the estimator and how its window results come back. The
 * in-process transport calls the estimator engine directly; the Kafka transport produces
 * to warpwatch.frames, lets the real estimator service consume them, and reads its
 * warpwatch.distributions records back.
 */
export interface DemoTransport {
  /** 'in-process' or 'kafka' (printed and recorded in the results). */
  readonly kind: 'in-process' | 'kafka';
  /** Sends one frame (exact bytes). May apply back-pressure by returning a promise. */
  deliver(raw: Uint8Array, streamId: string): void | Promise<void>;
  /** The run of `stream` has written its last frame (the in-process transport closes its window now). */
  endRun(stream: DemoStreamRef): void;
  /**
   * Waits until every listed run's window results arrived (their groups add up) and returns
   * them per run, in the order given.
   *
   * @throws DemoError WW_ERR_DEMO_NO_RESULT when some did not arrive within `timeoutMillis`.
   */
  collect(streams: readonly DemoStreamRef[], timeoutMillis: number): Promise<DistributionRecord[][]>;
  /** Problems met on the way (model errors, sink errors), for the report's notes. */
  problems(): readonly string[];
  close(): Promise<void>;
}

/** Key of a run's records: stream id and n. */
export function streamRefKey(stream: string, groupSize: number): string {
  return `${stream}|${groupSize}`;
}
