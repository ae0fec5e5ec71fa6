// Broker outage under load: a private Kafka node is stopped for 30 s while socket
// writers keep sending; the collector spools to disk and replays when the node is back.
// Zero frames may be lost (duplicates are allowed: delivery is at-least-once).
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { metrics } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafkaProducer, loadCollectorConfig, startCollector } from '../../collector/index.ts';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { decodeFrame } from '../../protocol/index.ts';
import { consumeTopic, createPrivateKafka, type PrivateKafka } from './collector-kafka-helpers.ts';

const OUTAGE_MILLIS = 30_000;
const WRITERS = 8;
const FRAMES_PER_TICK = 3; // per writer every 10 ms: 300 frames/s per writer, 2400 frames/s in all

describe('collector through a broker outage', () => {
  let kafka: PrivateKafka;
  let directory: string;

  beforeAll(async () => {
    kafka = createPrivateKafka(29092);
    await kafka.start();
    directory = mkdtempSync(join(tmpdir(), 'ww-outage-it-'));
  }, 180_000);
  afterAll(async () => {
    await kafka.destroy();
    rmSync(directory, { recursive: true, force: true });
  }, 60_000);

  it('spools while the broker is down for 30 s under load and loses no frame after it returns', async () => {
    const socketPath = join(directory, 'collector.sock');
    const config = loadCollectorConfig({
      env: {
        WARPWATCH_RETRY_BACKOFF_MILLIS: '500',
        WARPWATCH_KAFKA_RETRIES: '2',
        WARPWATCH_KAFKA_CONNECTION_TIMEOUT_MILLIS: '1000',
        WARPWATCH_KAFKA_REQUEST_TIMEOUT_MILLIS: '5000',
        WARPWATCH_PRODUCE_TIMEOUT_MILLIS: '15000',
      },
      flags: { socket: socketPath, brokers: kafka.brokers, partitions: '4', spoolDir: join(directory, 'spool'), host: 'outage-host' },
    });
    const producer = createKafkaProducer(config.kafka);
    const collector = await startCollector({ config, produce: producer.send, meter: metrics.getMeter('it'), log: () => {} });

    // Writers: each its own connection and stream, writing continuously.
    const sockets: Socket[] = [];
    const sentCount = new Array<number>(WRITERS).fill(0);
    for (let w = 0; w < WRITERS; w++) {
      const socket = createConnection(socketPath);
      await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
      sockets.push(socket);
    }
    const timer = setInterval(() => {
      sockets.forEach((socket, w) => {
        for (let k = 0; k < FRAMES_PER_TICK; k++) {
          const sequence = sentCount[w] ?? 0;
          sentCount[w] = sequence + 1;
          socket.write(fixtureFrameBytes({ job: `outage-${w}`, kernel: 'k', sequence }));
        }
      });
    }, 10);

    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const outInBeforeOutage = collector.metrics.totals().framesOut;
    await kafka.stop();
    const stoppedAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MILLIS - (Date.now() - stoppedAt)));
    const spooledDuringOutage = collector.metrics.totals().framesSpooled;
    const healthDuringOutage = collector.health();
    await kafka.start();
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    clearInterval(timer);
    await Promise.all(sockets.map((socket) => new Promise<void>((resolve) => socket.end(() => resolve()))));

    const total = sentCount.reduce((a, b) => a + b, 0);
    const deadline = Date.now() + 120_000;
    while (collector.metrics.totals().framesIn < total && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await collector.flush(120_000)).toBe(true);
    const totals = collector.metrics.totals();
    await collector.stop();
    await producer.close();

    expect(outInBeforeOutage).toBeGreaterThan(0);
    expect(spooledDuringOutage).toBeGreaterThan(0);
    expect(healthDuringOutage.status).toBe('degraded');
    expect(totals.framesIn).toBe(total);
    expect(totals.framesDropped).toBe(0);

    const got = await consumeTopic(kafka.brokers, config.kafka.framesTopic, total, 120_000);
    const seen = new Map<string, Set<number>>();
    for (const message of got) {
      const frame = decodeFrame(message.value);
      const key = `${frame.job}/${frame.kernel}`;
      // The full stream key: job/kernel, n, source, device UUID, the collector's host (ww-host).
      expect(message.key).toBe(`${key}|n=${frame.groupSize}|${frame.source}|${frame.device.uuid}|${message.headers['ww-host']}`);
      // Byte-identical: re-derive the frame the writer sent from its stream and sequence.
      expect(message.value.equals(Buffer.from(fixtureFrameBytes({ job: frame.job, kernel: frame.kernel, sequence: frame.frameSequence })))).toBe(true);
      let set = seen.get(key);
      if (set === undefined) seen.set(key, (set = new Set()));
      set.add(frame.frameSequence);
    }
    for (let w = 0; w < WRITERS; w++) {
      const set = seen.get(`outage-${w}/k`) ?? new Set<number>();
      const missing = Array.from({ length: sentCount[w] as number }, (_, s) => s).filter((s) => !set.has(s));
      expect(missing, `stream outage-${w}/k missing sequences`).toEqual([]);
    }
    const duplicates = got.length - total;
    process.stderr.write(`[outage] sent ${total} frames, spooled ${totals.framesSpooled}, received ${got.length} (${duplicates} duplicate(s)), dropped ${totals.framesDropped}\n`);
  }, 400_000);
});
