/**
 * Experiment (docs/estimator.md, Performance: the engine off the consumer's thread): how much
 * faster could one estimator instance consume a backlog if its engine ran in a worker thread
 * while the main thread fetched? Not the service: a kafkajs consumer (the project's Kafka client
 * factory) on a backlog in the local stack's Kafka, feeding the estimator engine with the
 * service's default settings and encoders (InfluxDB lines and distribution records are encoded,
 * then dropped), in two ways, alternating:
 *
 *   inline  — each message handed to the engine inside `eachBatch` (the service's way);
 *   worker  — each batch's values copied into one transferred ArrayBuffer and posted to a worker
 *             thread that runs the engine; `eachBatch` returns at once unless two batches are
 *             still in the worker (bounded), so kafkajs fetches while the worker computes.
 *
 * Rate = slope of frames processed between 10 % and 90 % of the backlog; CPU = this process's
 * user + system time (all threads) per frame over the same span.
 *
 *     npm run stack -- up
 *     npx tsx bench/pipeline-ceiling-driver.ts [--frames 300000] [--window-millis 10000] [--rounds 2]
 */
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { createEstimatorEngine, loadEstimatorConfig, modelFitter, toLineProtocol } from '../estimator/index.ts';
import { outgoingResultRecord } from '../estimator/adapters/kafka.ts';
import { createKafkaClient } from '../service/index.ts';
import { argument } from './driver-support.ts';
import { frameAt, templates } from './estimator-frames.ts';

/** Wall clock the engine runs at: after every generated frame. */
const WALL_MILLIS = Date.now() + 86_400_000;
const BROKERS = [process.env.WARPWATCH_KAFKA_BROKERS ?? '127.0.0.1:19092'];

interface PostedBatch {
  readonly partition: number;
  readonly firstOffset: number;
  readonly bytes: ArrayBuffer;
  readonly ends: Uint32Array;
}

/** The engine with the service's defaults and encoders; returns it and a byte count of its outputs. */
function serviceLikeEngine(windowMillis: number): { handle(partition: number, offset: string, value: Buffer): void; outputBytes(): number; closes(): number } {
  const config = loadEstimatorConfig({ env: { WARPWATCH_WINDOW_MILLIS: String(windowMillis), WARPWATCH_HISTOGRAM_POINTS: 'false' } });
  let bytes = 0;
  let closes = 0;
  const engine = createEstimatorEngine(
    { ...config, fitter: modelFitter, monotonicMillis: () => performance.now() },
    {
      writePoints: (points) => {
        for (const point of points) bytes += toLineProtocol(point).length;
      },
      publishDistribution: (key, record) => {
        bytes += String(outgoingResultRecord(key, record).value).length;
      },
      publishAlert: () => {},
    },
    { frame: () => {}, windowClosed: () => (closes += 1), modelError: () => {}, alertRaised: () => {} },
  );
  return {
    handle: (partition, offset, value) => {
      engine.handleMessage(partition, offset, value, WALL_MILLIS, {});
    },
    outputBytes: () => bytes,
    closes: () => closes,
  };
}

if (!isMainThread) {
  const engine = serviceLikeEngine((workerData as { windowMillis: number }).windowMillis);
  parentPort!.on('message', (batch: PostedBatch) => {
    let start = 0;
    for (let i = 0; i < batch.ends.length; i++) {
      const end = batch.ends[i]!;
      engine.handle(batch.partition, String(batch.firstOffset + i), Buffer.from(batch.bytes, start, end - start));
      start = end;
    }
    parentPort!.postMessage({ frames: batch.ends.length, outputBytes: engine.outputBytes(), closes: engine.closes() });
  });
} else {
  await main();
}

async function main(): Promise<void> {
  const frames = Number(argument('--frames', '300000'));
  const windowMillis = Number(argument('--window-millis', '10000'));
  const rounds = Number(argument('--rounds', '2'));
  const kafka = createKafkaClient({ clientId: 'ww-pipeline-ceiling', brokers: BROKERS });
  const topic = `ww-pipeline-ceiling-${Date.now()}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 6, configEntries: [{ name: 'max.message.bytes', value: String(8 << 20) }] }], waitForLeaders: true });
  const producer = kafka.producer();
  await producer.connect();
  const streams = 100;
  const template = templates(streams, 3);
  for (let k = 0; k < frames; k += 1000) {
    const messages = [];
    for (let j = k; j < Math.min(frames, k + 1000); j++) {
      const s = j % streams;
      messages.push({ key: `bench${s}/k`, value: frameAt(template[s]!, j, 1_700_000_000_000 + Math.floor(j / streams) * 100) });
    }
    await producer.send({ topic, acks: 1, messages });
  }
  await producer.disconnect();
  console.log(`backlog: ${frames} frames on ${topic} (6 partitions, ${streams} streams, ${windowMillis} ms windows)`);
  const results: Record<'inline' | 'worker', { rate: number; cpu: number; outputBytes: number; windowCloses: number }[]> = { inline: [], worker: [] };
  for (let round = 0; round < rounds; round++) {
    for (const mode of round % 2 === 0 ? (['inline', 'worker'] as const) : (['worker', 'inline'] as const)) {
      const result = await consume(kafka, topic, frames, windowMillis, mode);
      results[mode].push(result);
      console.log(`round ${round + 1} ${mode}: ${Math.round(result.rate)} frames/s, ${result.cpu.toFixed(2)} CPU-µs per frame, ${(result.outputBytes / 1e6).toFixed(1)} MB of lines and records, ${result.windowCloses} window closes`);
    }
  }
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
  console.log(JSON.stringify(results));
}

async function consume(kafka: ReturnType<typeof createKafkaClient>, topic: string, frames: number, windowMillis: number, mode: 'inline' | 'worker'): Promise<{ rate: number; cpu: number; outputBytes: number; windowCloses: number }> {
  const consumer = kafka.consumer({ groupId: `${topic}-${mode}-${Math.random()}`, maxBytesPerPartition: 8 << 20, maxBytes: 16 << 20, maxWaitTimeInMs: 1000 });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  const samples: [number, number, number][] = [];
  const cpuMillis = (): number => {
    const usage = process.cpuUsage();
    return (usage.user + usage.system) / 1000;
  };
  let processed = 0;
  let finish: () => void = () => {};
  const finished = new Promise<void>((resolve) => (finish = resolve));
  const note = (count: number): void => {
    processed += count;
    samples.push([performance.now(), processed, cpuMillis()]);
    if (processed >= frames) finish();
  };
  const inline = mode === 'inline' ? serviceLikeEngine(windowMillis) : undefined;
  // The worker loads this file through tsx's loader, registered in the worker itself.
  const workerSource = `import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(import.meta.url)}); })`;
  const worker = mode === 'worker' ? new Worker(workerSource, { eval: true, workerData: { windowMillis } }) : undefined;
  let outstanding = 0;
  let drained: (() => void) | undefined;
  let workerOutputBytes = 0;
  let workerCloses = 0;
  worker?.on('message', (reply: { frames: number; outputBytes: number; closes: number }) => {
    outstanding -= 1;
    workerOutputBytes = reply.outputBytes;
    workerCloses = reply.closes;
    note(reply.frames);
    drained?.();
  });
  await consumer.run({
    autoCommit: false,
    partitionsConsumedConcurrently: 1,
    eachBatch: async ({ batch }) => {
      if (inline !== undefined) {
        for (const message of batch.messages) inline.handle(batch.partition, message.offset, message.value!);
        note(batch.messages.length);
        return;
      }
      const ends = new Uint32Array(batch.messages.length);
      let total = 0;
      batch.messages.forEach((message, i) => {
        total += message.value!.length;
        ends[i] = total;
      });
      const bytes = new ArrayBuffer(total);
      const view = new Uint8Array(bytes);
      let at = 0;
      for (const message of batch.messages) {
        view.set(message.value!, at);
        at += message.value!.length;
      }
      outstanding += 1;
      worker!.postMessage({ partition: batch.partition, firstOffset: Number(batch.messages[0]!.offset), bytes, ends } satisfies PostedBatch, [bytes]);
      while (outstanding > 2) await new Promise<void>((resolve) => (drained = resolve));
    },
  });
  await finished;
  await consumer.disconnect();
  await worker?.terminate();
  const at = (share: number): [number, number, number] => samples.find(([, count]) => count >= share * frames) ?? samples[samples.length - 1]!;
  const [t0, n0, c0] = at(0.1);
  const [t1, n1, c1] = at(0.9);
  return { rate: ((n1 - n0) / (t1 - t0)) * 1000, cpu: ((c1 - c0) * 1000) / (n1 - n0), outputBytes: inline?.outputBytes() ?? workerOutputBytes, windowCloses: inline?.closes() ?? workerCloses };
}
