// The broker-outage and outlier cases of the estimator (docs/estimator.md, "Late data" and
// "Fault tolerance"), shared by estimator-outage.int.test.ts (one load shape: part of the Kafka
// 3.9 compatibility subset, docs/stack.md) and estimator-outage-wide.int.test.ts (the operator's
// shape and the outlier frame), each on a Kafka node private to its file (it is SIGKILLed; the
// shared stack's broker is left alone) with the shared InfluxDB: the real `warpwatch collect`
// process reads frames from a unix socket, two (or one) real `warpwatch estimate` processes write
// windows to InfluxDB. Every window must be exact: its launches and groups equal what was sent in
// it, counted here from the frames the writers built.
// WARPWATCH_IT_OUTAGE_RUNS (default 1) repeats each broker-SIGKILL case that many times.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeededRandom } from '../../model/index.ts';
import { encodeFrame } from '../../protocol/index.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { createPrivateKafka, type PrivateKafka } from './collector-kafka-helpers.ts';
import { connect, delivered, finishLoad, killPipelines, startLoad, startPipeline, timedStop, windowCount, type Agent } from './estimator-pipeline.ts';
import {
  addToTable as addToWindowTable,
  frameOutcomes,
  launchesOf,
  launchFrame,
  waitUntil,
  windowsOf,
  writtenWindows as writtenWindowsOf,
  type EstimatorChild,
  type WindowTable,
} from './estimator-support.ts';

const WINDOW_MILLIS = 2_000;
const IDLE_CLOSE_MILLIS = 5_000;
const RUNS = Math.max(1, Number(process.env['WARPWATCH_IT_OUTAGE_RUNS'] ?? '1') || 1);

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));
const addToTable = (table: WindowTable, job: string, endMillis: number, groups: number): void => addToWindowTable(table, job, endMillis, groups, WINDOW_MILLIS);
const writtenWindows = (database: string, prefix: string): Promise<WindowTable> => writtenWindowsOf(database, prefix, MEASUREMENTS.window);

/** The broker-SIGKILL load shapes: `narrow`, and `wide`, the operator's run of docs/estimator.md § Fencing. */
export const OUTAGE_SHAPES = {
  narrow: { streams: 10, everyMillis: 50, idleCloseMillis: IDLE_CLOSE_MILLIS, label: '10 streams × 20 launches/s' },
  wide: { streams: 100, everyMillis: 500, idleCloseMillis: WINDOW_MILLIS, label: '100 streams × 2 launches/s, idle close = the window' },
} as const;

/**
 * Declares the suite: the broker-SIGKILL case for each of `shapes`, and the outlier-frame case
 * when `outlier`, on a private Kafka node at `port` (and port + 1).
 */
export function describeEstimatorOutage(port: number, shapes: readonly (keyof typeof OUTAGE_SHAPES)[], outlier: boolean): void {
  describe('estimator through a broker outage and an outlier frame (private Kafka node, real collector and estimators)', () => {
    let kafka: PrivateKafka;
    let directory: string;
    const cleanup = { databases: [] as string[], estimators: [] as EstimatorChild[], agents: [] as Agent[] };

    beforeAll(async () => {
      kafka = createPrivateKafka(port);
      await kafka.start();
      directory = mkdtempSync(join(tmpdir(), 'ww-estimator-outage-it-'));
    }, 180_000);
    afterAll(async () => {
      await killPipelines(cleanup);
      await kafka.destroy();
      rmSync(directory, { recursive: true, force: true });
    }, 60_000);

    /** A database, a frames topic, `count` estimators (one group) and a collector, all on the private node. */
    const pipeline = (name: string, count: number, idleCloseMillis = IDLE_CLOSE_MILLIS) =>
      startPipeline({
        name,
        brokers: kafka.brokers,
        directory,
        estimators: count,
        cleanup,
        env: {
          WARPWATCH_WINDOW_MILLIS: String(WINDOW_MILLIS),
          WARPWATCH_IDLE_CLOSE_MILLIS: String(idleCloseMillis),
          WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS: '1000',
          WARPWATCH_HISTOGRAM_POINTS: 'false',
          WARPWATCH_FIT: 'false',
          WARPWATCH_QUANTILES: 'false',
          WARPWATCH_SWEEP_GROUP_SIZES: 'off',
        },
      });

    for (const shape of shapes.map((name) => OUTAGE_SHAPES[name])) {
      for (let run = 1; run <= RUNS; run += 1) {
        it(`writes every window exactly (launches and groups as sent) when the broker is SIGKILLed for 20 s: ${shape.label}, collector + two estimators; both exit on SIGTERM within 10 s after (run ${run} of ${RUNS})`, async () => {
          const started = await pipeline('wwoutage', 2, shape.idleCloseMillis);
          const { id, group, agent, socket } = started;
          const jobs = Array.from({ length: shape.streams }, (_, s) => `${id}s${s}`);
          const load = await startLoad(socket, jobs, { everyMillis: shape.everyMillis, windowMillis: WINDOW_MILLIS, seed: 24 + run });

          await sleep(6_000);
          await kafka.signal('SIGKILL');
          const killedAt = Date.now();
          await sleep(20_000);
          const outageMillis = Date.now() - killedAt;
          await kafka.start();
          const restartedAfter = Date.now() - killedAt;
          await sleep(6_000);
          // The last windows close by idleness; wait until InfluxDB holds every launch (or time runs out, then compare anyway).
          const { total, delivered: deliveredCount, written, late } = await finishLoad(started, load, jobs);
          process.stderr.write(
            `[estimator outage] ${shape.label}, run ${run}: broker down ${outageMillis} ms (up again ${restartedAfter} ms after the kill); collector read ${total} = delivered ${deliveredCount}; ` +
              `${windowCount(load.sent, jobs)} windows sent, ${windowCount(written, jobs)} written; late ${late}\n`,
          );
          expect(outageMillis).toBeGreaterThanOrEqual(15_000);
          expect(restartedAfter).toBeLessThanOrEqual(45_000);
          for (const job of jobs) expect(windowsOf(written, job), `windows of ${job}`).toEqual(windowsOf(load.sent, job));
          expect(late).toBe(0);
          // kafkajs' answers it retried by itself after the restart are not logged as failures (service/kafka-client.ts isRetriedKafkaAnswer).
          expect(agent.stderr()).not.toMatch(/kafkajs Connection: Response/);
          // SIGTERM after a broker restart ends the process within the documented bound (WARPWATCH_SHUTDOWN_TIMEOUT_MILLIS, 10 s).
          const stops = await Promise.all(group.map((child) => timedStop(child)));
          process.stderr.write(`[estimator outage] SIGTERM after the restart: ${stops.map((s) => `exit ${s.exit} in ${s.millis} ms`).join(', ')}\n`);
          for (const stop of stops) {
            expect(stop.millis).toBeLessThanOrEqual(10_500);
            expect(stop.exit).toBe('0');
          }
        }, 400_000);
      }
    }

    if (outlier) it('records every frame of a steady stream when one of its frames is dated 240 s ahead; the outlier waits in its own window', async () => {
      const { id, database, group, agent, socket } = await pipeline('wwahead', 1);
      const job = `${id}steady`;
      const connection = await connect(socket);
      const random = createSeededRandom(240);
      const sent: WindowTable = new Map();
      const OUTLIER = 100;
      for (let sequence = 0; sequence < 200; sequence += 1) {
        const now = Date.now();
        // Frame 100 is dated 240 s ahead: inside WARPWATCH_MAX_FUTURE_SKEW_MILLIS (5 min), so not rejected.
        const endMillis = sequence === OUTLIER ? now + 240_000 : now;
        const frame = launchFrame(job, sequence, endMillis, random);
        if (sequence !== OUTLIER) addToTable(sent, job, endMillis, frame.groupsCounted);
        connection.write(encodeFrame(frame));
        await sleep(50);
      }
      await new Promise<void>((resolve) => connection.end(() => resolve()));
      await delivered(agent, 200);

      let written: WindowTable = new Map();
      await waitUntil(
        async () => {
          written = await writtenWindows(database, id);
          return launchesOf(written, job) >= 199;
        },
        60_000,
        'the steady windows in InfluxDB',
      ).catch(() => undefined);
      await sleep(1_000);
      written = await writtenWindows(database, id);
      const [estimator] = group;
      const outcomes = await frameOutcomes(estimator as EstimatorChild);
      process.stderr.write(`[estimator ahead] outcomes ${JSON.stringify(outcomes)}; ${written.get(job)?.size ?? 0} windows written of ${sent.get(job)?.size ?? 0} steady\n`);
      // Every steady window exact, and nothing else written: the outlier's window (240 s ahead of
      // the clock) is held open until the stream or the clock gets there.
      expect(windowsOf(written, job)).toEqual(windowsOf(sent, job));
      expect(outcomes['recorded']).toBe(200);
      expect(outcomes['late'] ?? 0).toBe(0);
    }, 300_000);
  });
}
