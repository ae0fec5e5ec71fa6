/**
 * What the checkpoint topic costs an estimator instance with full dedupe memories
 * (docs/estimator.md, The dedupe memory at steady state): real checkpoint records of `--streams`
 * streams of frames partition 0 (each 1,100 launches with recorder-like launchIds, so every dedupe
 * memory is full), written `--rounds` times through the estimator's Kafka adapter
 * (`writeCheckpoint`), then read back by the adapter's checkpoint reader as a restore of that
 * partition reads them: from the checkpoint partition's first record (none compacted yet: the
 * worst case a restore meets). CPU of this process (threads included) per record written and
 * per record read, and the restore's wall time. Needs the local Kafka (`npm run stack -- up`;
 * brokers from WARPWATCH_KAFKA_BROKERS, default 127.0.0.1:19092).
 *
 *     npx tsx bench/checkpoint-restore-driver.ts [--streams 1000] [--rounds 3] [--compression none|gzip] [--write]
 *       (--write: bench/results/checkpoint-restore.json, one result per compression)
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createEstimatorEngine, createEstimatorKafka, loadEstimatorConfig, modelFitter } from '../estimator/index.ts';
import type { OutgoingRecord } from '../estimator/adapters/kafka.ts';
import { Kafka, logLevel } from 'kafkajs';
import { argument } from './driver-support.ts';
import { frameAt, recorderLaunchId, templates } from './estimator-frames.ts';

const START_MILLIS = 1_700_000_000_000;
const LAUNCHES = 1_100;

/** The checkpoint records of `streams` streams with full dedupe memories, keyed as the service keys them under `prefix`. */
function checkpointRecords(streams: number, prefix: string): OutgoingRecord[] {
  const config = loadEstimatorConfig({ env: { WARPWATCH_WINDOW_MILLIS: '600000', WARPWATCH_IDLE_CLOSE_MILLIS: '600000' } });
  const engine = createEstimatorEngine(
    { ...config, fitter: modelFitter, monotonicMillis: () => performance.now() },
    { writePoints: () => {}, publishDistribution: () => {}, publishAlert: () => {} },
    { frame: () => {}, windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} },
  );
  const shapes = templates(50, 4);
  let offset = 0;
  for (let launch = 0; launch < LAUNCHES; launch += 1) {
    for (let s = 0; s < streams; s += 1) {
      const frame = frameAt({ ...shapes[s % 50]!, job: `restore${s}` }, launch, START_MILLIS + launch * 1000, recorderLaunchId(s, launch));
      engine.handleMessage(0, String(offset), frame, Date.now() + 86_400_000);
      offset += 1;
    }
  }
  const round = engine.checkpoint(0)?.records ?? [];
  return round.map((record) => ({ key: record.streamKey === undefined ? `${prefix}0` : `${prefix}0|${record.streamKey}`, value: record.value }));
}

/** CPU of this process (threads included) over 5 s of waiting, in ms per second. */
async function idleCpuMillisPerSecond(): Promise<number> {
  const before = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const used = process.cpuUsage(before);
  return +((used.user + used.system) / 1000 / 5).toFixed(2);
}

async function main(): Promise<void> {
  const streams = Number(argument('--streams', '1000'));
  const rounds = Number(argument('--rounds', '3'));
  const compression = argument('--compression', 'none');
  const id = `wwrestore${randomBytes(3).toString('hex')}`;
  const config = loadEstimatorConfig({
    env: { ...process.env, WARPWATCH_CHECKPOINT_COMPRESSION: compression, WARPWATCH_FRAMES_TOPIC: `${id}.frames`, WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`, WARPWATCH_DLQ_TOPIC: `${id}.dlq` },
    flags: { groupId: `${id}-g` },
  });
  const prefix = `${config.kafka.groupId}|${config.kafka.framesTopic}|`;
  process.stderr.write(`building the checkpoint records of ${streams} streams × ${LAUNCHES} launches…\n`);
  const records = checkpointRecords(streams, prefix);
  const bytes = records.reduce((sum, r) => sum + (typeof r.value === 'string' ? r.value.length : 0), 0);
  const kafka = createEstimatorKafka({ ...config.kafka, instanceId: 'bench' });
  try {
    await kafka.ensureTopics();
    let produceCpu = 0;
    for (let round = 0; round < rounds; round += 1) {
      const before = process.cpuUsage();
      await kafka.writeCheckpoint(0, records);
      const used = process.cpuUsage(before);
      produceCpu += used.user + used.system;
    }
    const idleBefore = await idleCpuMillisPerSecond();
    const before = process.cpuUsage();
    const wallBefore = performance.now();
    const reader = await kafka.startCheckpointReader(prefix);
    const restored = await reader.read(0, `${prefix}0`, 300_000);
    const used = process.cpuUsage(before);
    const wall = performance.now() - wallBefore;
    // Between restores the reader holds every partition paused: what it costs then.
    const idleWithReader = await idleCpuMillisPerSecond();
    await reader.stop();
    if (restored.size !== records.length) throw new Error(`the restore read ${restored.size} keys, ${records.length} were written`);
    const read = rounds * records.length;
    const result = {
      compression,
      streams,
      rounds,
      recordsPerRound: records.length,
      meanRecordBytes: Math.round(bytes / records.length),
      produceCpuMicrosPerRecord: +(produceCpu / read).toFixed(1),
      restoreRecordsRead: read,
      restoreCpuMicrosPerRecord: +((used.user + used.system) / read).toFixed(1),
      restoreWallMillis: Math.round(wall),
      restoreRecordsPerSecond: Math.round(read / (wall / 1000)),
      restoredKeys: restored.size,
      idleCpuMillisPerSecond: { withoutReader: idleBefore, withReaderPaused: idleWithReader },
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model, loadAverage1m: loadavg()[0], node: process.version, date: new Date().toISOString(), commit: execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() },
    };
    console.log(JSON.stringify(result));
    if (process.argv.includes('--write')) {
      const file = fileURLToPath(new URL('./results/checkpoint-restore.json', import.meta.url));
      const previous = existsSync(file) ? ((JSON.parse(readFileSync(file, 'utf8')) as { results?: { compression?: string }[] }).results ?? []) : [];
      const note =
        'bench/checkpoint-restore-driver.ts: CPU (this process, threads included) per checkpoint record with full dedupe memories, written through the estimator adapter and read back by its checkpoint reader as a partition restore (from the first record, none compacted), and the restore wall time; real local Kafka';
      writeFileSync(file, `${JSON.stringify({ note, results: [...previous.filter((r) => r.compression !== compression), result] }, null, 2)}\n`);
      console.log(`wrote ${file}`);
    }
    const client = new Kafka({ brokers: [...config.kafka.brokers], logLevel: logLevel.NOTHING }).admin();
    await client.connect();
    await client.deleteTopics({ topics: [`${id}.frames`, `${id}.checkpoints`, `${id}.dlq`, config.kafka.distributionsTopic, config.kafka.alertsTopic].filter((t) => t.startsWith(id)) }).catch(() => undefined);
    await client.disconnect();
  } finally {
    await kafka.stop();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 1;
  });
}
