/**
 * Backpressure of the estimator's consumer (docs/estimator.md, Fault tolerance: "Backpressure"):
 * the outputs a window close makes (InfluxDB lines, result records for Kafka) wait in bounded
 * buffers; instead of letting them fill up (and, at their bound, drop the oldest), a batch of
 * frames stops taking messages while a buffer is above its high-water mark and goes on once
 * every buffer is down to its low-water mark. Meanwhile it heartbeats, so the consumer stays in
 * its group, and the frames wait in Kafka, where they are durable, instead of in memory.
 *
 * No I/O here: the service passes the buffer levels in, the clock and the pause are
 * injectable (unit tests run on a fake clock).
 */

/** A buffer that holds the consumer back when it fills. */
export interface BackpressureSink {
  /** Its name in /healthz and the log (`influx`, `kafka-results`). */
  readonly name: string;
  /** Items it holds now (queued and in flight). */
  level(): number;
  /** Consumption pauses while `level()` is above this (items, ≥ 1). */
  readonly highWater: number;
  /** …and goes on once `level()` is at or below this (items, 0 ≤ lowWater ≤ highWater). */
  readonly lowWater: number;
}

/** Settings and clocks of {@link createBackpressure}. */
export interface BackpressureOptions {
  readonly sinks: readonly BackpressureSink[];
  /** How often a paused batch looks at the levels again (ms; default 20). */
  readonly pollMillis?: number;
  /** A paused batch logs once after this long (ms; default 10,000), and once more when it goes on. */
  readonly logAfterMillis?: number;
  /** The log (one line each, without prefix). */
  readonly log?: (line: string) => void;
  /** Milliseconds of a monotonic clock (default performance.now). */
  readonly now?: () => number;
  /** Waits `millis` (default a timer). */
  readonly sleep?: (millis: number) => Promise<void>;
}

/** What a paused batch needs from its consumer. */
export interface BackpressureBatch {
  /** Keeps the consumer's group membership alive (kafkajs throttles it to the heartbeat interval). */
  heartbeat(): Promise<void>;
  /** True when the batch must end anyway (revoked, stale, the service stopping): the wait ends at once. */
  interrupted(): boolean;
}

/** Counters of {@link Backpressure} since the start (/healthz `backpressure`). */
export interface BackpressureStats {
  /** The sink a batch waits for now, or undefined while consuming. */
  readonly waitingFor: string | undefined;
  /** Pauses so far. */
  readonly pauses: number;
  /** Time spent paused so far (ms), the current pause included. */
  readonly pausedMillis: number;
  /** High-water mark of each sink (items). */
  readonly highWater: Readonly<Record<string, number>>;
}

/** The consumer's backpressure; see {@link createBackpressure}. */
export interface Backpressure {
  /**
   * Notes that the engine handed outputs to a sink, so the next {@link Backpressure.mustWait}
   * looks at the levels (between outputs they only go down, except for the timers' own outputs,
   * which {@link Backpressure.check} sees).
   */
  noteOutput(): void;
  /** True when a sink is above its high-water mark; looks at the levels only after {@link Backpressure.noteOutput} (cheap per message). */
  mustWait(): boolean;
  /** Looks at the levels now (per time slice and batch): true when a sink is above its high-water mark. */
  check(): boolean;
  /**
   * Waits while a sink is above its high-water mark until every sink is at or below its
   * low-water mark, or the batch is interrupted; heartbeats every `pollMillis` meanwhile.
   * Resolves at once when no sink is above its mark.
   *
   * @returns the time waited (ms) and whether the batch may go on (`room`) or must end (`interrupted`).
   * @throws what `batch.heartbeat()` throws (kafkajs: a rebalance in progress; the batch then ends as it would without backpressure).
   */
  waitForRoom(batch: BackpressureBatch): Promise<{ readonly outcome: 'room' | 'interrupted'; readonly waitedMillis: number }>;
  stats(): BackpressureStats;
}

/**
 * Creates the backpressure over `sinks`.
 *
 * @throws RangeError when a sink's marks are not integers with 0 ≤ lowWater ≤ highWater and highWater ≥ 1.
 * @example
 * const backpressure = createBackpressure({ sinks: [{ name: 'influx', level: () => influx.stats().buffered, highWater: 20_000, lowWater: 10_000 }] });
 * if (backpressure.mustWait()) await backpressure.waitForRoom({ heartbeat, interrupted });
 */
export function createBackpressure(options: BackpressureOptions): Backpressure {
  for (const sink of options.sinks) {
    if (!Number.isInteger(sink.highWater) || !Number.isInteger(sink.lowWater) || sink.highWater < 1 || sink.lowWater < 0 || sink.lowWater > sink.highWater) {
      throw new RangeError(`backpressure marks of ${sink.name}: need integers 0 <= lowWater <= highWater, highWater >= 1; got ${sink.lowWater}, ${sink.highWater}`);
    }
  }
  const pollMillis = options.pollMillis ?? 20;
  const logAfterMillis = options.logAfterMillis ?? 10_000;
  const now = options.now ?? (() => performance.now());
  const sleep = options.sleep ?? ((millis: number) => new Promise<void>((resolve) => setTimeout(resolve, millis)));
  const highWater = Object.fromEntries(options.sinks.map((sink) => [sink.name, sink.highWater]));
  let outputSinceCheck = false;
  let pauses = 0;
  let pausedMillis = 0;
  let waitingFor: BackpressureSink | undefined;
  let pausedSince = 0;

  const above = (): BackpressureSink | undefined => options.sinks.find((sink) => sink.level() > sink.highWater);
  const drained = (): boolean => options.sinks.every((sink) => sink.level() <= sink.lowWater);
  const check = (): boolean => {
    outputSinceCheck = false;
    return above() !== undefined;
  };

  return {
    noteOutput() {
      outputSinceCheck = true;
    },
    mustWait() {
      return outputSinceCheck && check();
    },
    check,
    async waitForRoom(batch) {
      const sink = above();
      outputSinceCheck = false;
      if (sink === undefined) return { outcome: batch.interrupted() ? 'interrupted' : 'room', waitedMillis: 0 };
      const start = now();
      pauses += 1;
      waitingFor = sink;
      pausedSince = start;
      let logged = false;
      try {
        for (;;) {
          if (batch.interrupted()) return { outcome: 'interrupted', waitedMillis: now() - start };
          if (drained()) return { outcome: 'room', waitedMillis: now() - start };
          if (!logged && now() - start >= logAfterMillis) {
            logged = true;
            options.log?.(
              `consumption paused for ${((now() - start) / 1000).toFixed(0)} s: ${sink.level()} ${sink.name} items buffered, above the high-water mark ${sink.highWater}; frames wait in Kafka until it is down to ${sink.lowWater} (docs/estimator.md, Backpressure)`,
            );
          }
          await sleep(pollMillis);
          await batch.heartbeat();
        }
      } finally {
        const waited = now() - start;
        pausedMillis += waited;
        waitingFor = undefined;
        if (logged) options.log?.(`consumption goes on after a pause of ${(waited / 1000).toFixed(1)} s for ${sink.name}`);
      }
    },
    stats() {
      return {
        waitingFor: waitingFor?.name,
        pauses,
        pausedMillis: pausedMillis + (waitingFor === undefined ? 0 : now() - pausedSince),
        highWater,
      };
    },
  };
}
