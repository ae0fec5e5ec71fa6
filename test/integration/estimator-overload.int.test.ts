// Overload is never data loss (docs/estimator.md, Late data: lateness is event time): a real
// `warpwatch estimate` on the shared Kafka and InfluxDB is offered about three times what it can
// close — 20 streams × 10 launches/s, 1 s windows, every close made slow on purpose (Monte Carlo
// quantiles of 400,000 groups, no exact method, every window a sweep window) — for
// WARPWATCH_IT_OVERLOAD_SECONDS (default 30), then nothing. It falls behind (its lag grows, the
// backlog outlives the load) and catches up, and then every window in InfluxDB is exact
// (launches and groups as sent) and no frame was counted late: the frames of each stream came in
// order, so none may be.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Producer } from 'kafkajs';
import { createSeededRandom } from '../../model/index.ts';
import { encodeFrame } from '../../protocol/index.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import {
  addToTable,
  connectedProducer,
  createDatabase,
  createFramesTopic,
  estimatorEnv,
  frameOutcomes,
  healthOf,
  launchesOf,
  launchFrame,
  spawnEstimator,
  uniqueId,
  waitUntil,
  windowsOf,
  writtenWindows,
  cleanedUpAfterAll,
  type WindowTable,
} from './estimator-support.ts';

const SECONDS = Math.max(10, Number(process.env['WARPWATCH_IT_OVERLOAD_SECONDS'] ?? '30') || 30);
const STREAMS = 20;
const EVERY_MILLIS = 100;
const WINDOW_MILLIS = 1_000;

const sleep = (millis: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, millis));

describe('estimator offered three times its capacity (shared Kafka and InfluxDB, real estimator)', () => {
  const { children, databases } = cleanedUpAfterAll();
  let producer: Producer;
  beforeAll(async () => {
    producer = await connectedProducer();
  }, 60_000);
  afterAll(async () => {
    await producer.disconnect();
  });

  it(`falls behind and catches up with every window exact and no frame late (${STREAMS} streams × ${1_000 / EVERY_MILLIS} launches/s for ${SECONDS} s)`, async () => {
    const id = uniqueId('wwoverload');
    databases.push(id);
    await createDatabase(id);
    const topic = `${id}.frames`;
    await createFramesTopic(topic, 6);
    const estimator = spawnEstimator(
      estimatorEnv(id, id, `${id}-group`, {
        WARPWATCH_WINDOW_MILLIS: String(WINDOW_MILLIS),
        // Idle close as by default (the window length): the setting under which a stale "caught up" closed windows early.
        WARPWATCH_IDLE_CLOSE_MILLIS: String(WINDOW_MILLIS),
        WARPWATCH_QUANTILE_SAMPLES: '400000',
        WARPWATCH_QUANTILE_EXACT_WORK_LIMIT: '0',
        WARPWATCH_SWEEP_INTERVAL_MILLIS: '0',
        WARPWATCH_HISTOGRAM_POINTS: 'false',
      }),
      `${id}-0`,
    );
    children.push(estimator);
    await estimator.waitForLog(/assigned partitions \[\d/, 90_000);

    const random = createSeededRandom(3);
    const sent: WindowTable = new Map();
    const jobs = Array.from({ length: STREAMS }, (_, s) => `${id}s${s}`);
    let sequence = 0;
    let largestLag = 0;
    const started = Date.now();
    // The load: one launch of every stream each EVERY_MILLIS, event time = when it is produced.
    while (Date.now() - started < SECONDS * 1_000) {
      const tick = Date.now();
      const messages = jobs.map((job) => {
        const frame = launchFrame(job, sequence, tick, random);
        addToTable(sent, job, tick, frame.groupsCounted, WINDOW_MILLIS);
        return { key: `${job}/k`, value: Buffer.from(encodeFrame(frame)) };
      });
      sequence += 1;
      await producer.send({ topic, acks: -1, messages });
      if (sequence % 10 === 0) largestLag = Math.max(largestLag, (await healthOf(estimator)).consumerLag ?? 0);
      await sleep(Math.max(0, EVERY_MILLIS - (Date.now() - tick)));
    }
    const loadEnded = Date.now();
    const total = sequence * STREAMS;

    // Catching up: every launch in InfluxDB (the last windows close by idleness once caught up).
    let written: WindowTable = new Map();
    await waitUntil(
      async () => {
        written = await writtenWindows(id, id, MEASUREMENTS.window);
        largestLag = Math.max(largestLag, (await healthOf(estimator)).consumerLag ?? 0);
        return jobs.every((job) => launchesOf(written, job) === launchesOf(sent, job));
      },
      SECONDS * 6_000,
      'every launch in InfluxDB',
    ).catch(() => undefined);
    const caughtUpAfter = Date.now() - loadEnded;
    await sleep(2_000);
    written = await writtenWindows(id, id, MEASUREMENTS.window);
    const outcomes = await frameOutcomes(estimator);
    process.stderr.write(
      `[estimator overload] ${total} launches in ${SECONDS} s; largest lag ${largestLag} frames; caught up ${caughtUpAfter} ms after the load ` +
        `(offered ≈ ${((SECONDS * 1_000 + caughtUpAfter) / (SECONDS * 1_000)).toFixed(1)}× its capacity); outcomes ${JSON.stringify(outcomes)}\n`,
    );
    // It was overloaded (how much depends on the machine: 1.8–2.6× at 280,000 groups on the
    // development machine, alone and under CI): the backlog outlived the load by at least half its
    // length (offered ≥ 1.5× what it closes), and the lag reached 5 s of load.
    expect(caughtUpAfter).toBeGreaterThanOrEqual((SECONDS * 1_000) / 2);
    expect(largestLag).toBeGreaterThanOrEqual(STREAMS * (1_000 / EVERY_MILLIS) * 5);
    expect(outcomes['late'] ?? 0).toBe(0);
    expect(outcomes['recorded']).toBe(total);
    for (const job of jobs) expect(windowsOf(written, job), `windows of ${job}`).toEqual(windowsOf(sent, job));
  }, 600_000);
});
