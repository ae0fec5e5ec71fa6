/**
 * What the checkpoint topic costs an estimator instance with full dedupe memories
 * (docs/estimator.md, The dedupe memory at steady state, The checkpoint layout): `--streams`
 * streams of frames partition 0 run 1,100 launches each with recorder-like launchIds (every
 * dedupe memory full from launch 1,024 on), checkpointed every 20 launches (the service's 2 s at
 * 10 launches/s); the records of the last `--rounds` rounds, as the engine made them, are written
 * in order through the estimator's Kafka adapter (`writeCheckpoint`), then read back by the
 * adapter's checkpoint reader as a restore of the partition reads them: from the checkpoint
 * partition's first record (none compacted yet: the worst case a restore meets). CPU of this
 * process (threads included) per stream and round written and per record read, and the
 * restore's wall time. `--baseline <tree>` makes the records with that tree's engine (the Kafka
 * adapter stays this tree's). Needs the local Kafka (`npm run stack -- up`; brokers from
 * WARPWATCH_KAFKA_BROKERS, default 127.0.0.1:19092).
 *
 *     npx tsx bench/checkpoint-restore-driver.ts [--streams 1000] [--rounds 13] [--compression none|gzip] [--baseline <tree>] [--write]
 *       (--write: bench/results/checkpoint-restore.json, one result per compression and engine tree)
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { createEstimatorKafka, loadEstimatorConfig } from '../estimator/index.ts';
import type { OutgoingRecord } from '../estimator/adapters/kafka.ts';
import { Kafka, logLevel } from 'kafkajs';
import { argument, importFromTree } from './driver-support.ts';
import { frameAt, recorderLaunchId, templates } from './estimator-frames.ts';

type Estimator = typeof import('../estimator/index.ts');

const START_MILLIS = 1_700_000_000_000;
const LAUNCHES = 1_100;

const CHECKPOINT_EVERY = 20;

/**
 * The checkpoint records of the last `rounds` rounds of `streams` streams (frames partition 0),
 * keyed as the service keys them under `prefix` (stream `<prefix>0|<stream>`, dedupe base record
 * `<prefix>0#d|<stream>`, marker `<prefix>0`), made by `estimator`'s engine.
 */
function checkpointRounds(estimator: Estimator, streams: number, rounds: number, prefix: string): OutgoingRecord[][] {
  const config = estimator.loadEstimatorConfig({ env: { WARPWATCH_WINDOW_MILLIS: '600000', WARPWATCH_IDLE_CLOSE_MILLIS: '600000' } });
  const engine = estimator.createEstimatorEngine(
    { ...config, fitter: estimator.modelFitter, monotonicMillis: () => performance.now() },
    { writePoints: () => {}, publishDistribution: () => {}, publishAlert: () => {} },
    { frame: () => {}, windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} },
  );
  const shapes = templates(50, 4);
  const kept: OutgoingRecord[][] = [];
  let offset = 0;
  for (let launch = 0; launch < LAUNCHES; launch += 1) {
    for (let s = 0; s < streams; s += 1) {
      const frame = frameAt({ ...shapes[s % 50]!, job: `restore${s}` }, launch, START_MILLIS + launch * 1000, recorderLaunchId(s, launch));
      engine.handleMessage(0, String(offset), frame, Date.now() + 86_400_000);
      offset += 1;
    }
    if ((launch + 1) % CHECKPOINT_EVERY !== 0) continue;
    const records = (engine.checkpoint(0)?.records ?? []) as readonly { streamKey: string | undefined; dedupeBase?: boolean; value: string | null }[];
    kept.push(records.map((record) => ({ key: record.streamKey === undefined ? `${prefix}0` : `${prefix}0${record.dedupeBase === true ? '#d|' : '|'}${record.streamKey}`, value: record.value })));
    if (kept.length > rounds) kept.shift();
  }
  return kept;
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
  const rounds = Number(argument('--rounds', '13'));
  const baselineRoot = process.argv.includes('--baseline') ? argument('--baseline', '') : undefined;
  const tree = baselineRoot ?? fileURLToPath(new URL('..', import.meta.url));
  const estimator = await importFromTree<Estimator>(tree, 'estimator/index.ts');
  const compression = argument('--compression', 'none');
  const id = `wwrestore${randomBytes(3).toString('hex')}`;
  const config = loadEstimatorConfig({
    env: { ...process.env, WARPWATCH_CHECKPOINT_COMPRESSION: compression, WARPWATCH_FRAMES_TOPIC: `${id}.frames`, WARPWATCH_CHECKPOINT_TOPIC: `${id}.checkpoints`, WARPWATCH_DLQ_TOPIC: `${id}.dlq` },
    flags: { groupId: `${id}-g` },
  });
  const prefix = `${config.kafka.groupId}|${config.kafka.framesTopic}|`;
  process.stderr.write(`building the checkpoint records of ${streams} streams × ${LAUNCHES} launches…\n`);
  const roundRecords = checkpointRounds(estimator, streams, rounds, prefix);
  const written = roundRecords.reduce((sum, round) => sum + round.length, 0);
  const bytes = roundRecords.flat().reduce((sum, r) => sum + (typeof r.value === 'string' ? r.value.length : 0), 0);
  const keys = new Set(roundRecords.flat().map((r) => r.key));
  const kafka = createEstimatorKafka({ ...config.kafka, instanceId: 'bench' });
  try {
    await kafka.ensureTopics();
    let produceCpu = 0;
    for (const records of roundRecords) {
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
    if (restored.size !== keys.size) throw new Error(`the restore read ${restored.size} keys, ${keys.size} were written`);
    const read = written;
    const result = {
      tree: baselineRoot === undefined ? 'current' : `baseline ${baselineRoot}`,
      compression,
      streams,
      rounds: roundRecords.length,
      recordsWritten: written,
      meanRecordBytes: Math.round(bytes / written),
      bytesPerStreamRound: Math.round(bytes / (streams * roundRecords.length)),
      produceCpuMicrosPerRecord: +(produceCpu / written).toFixed(1),
      produceCpuMicrosPerStreamRound: +(produceCpu / (streams * roundRecords.length)).toFixed(1),
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
      const previous = existsSync(file) ? ((JSON.parse(readFileSync(file, 'utf8')) as { results?: { compression?: string; tree?: string }[] }).results ?? []) : [];
      const note =
        'bench/checkpoint-restore-driver.ts: the last rounds of checkpoint records of streams with full dedupe memories (checkpointed every 20 launches), written in order through the estimator adapter and read back by its checkpoint reader as a partition restore (from the first record, none compacted); CPU (this process, threads included) per record and per stream-round, the restore wall time; real local Kafka';
      const kept = previous.filter((r) => r.compression !== compression || (r.tree ?? 'current') !== result.tree);
      writeFileSync(file, `${JSON.stringify({ note, results: [...kept, result] }, null, 2)}\n`);
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
