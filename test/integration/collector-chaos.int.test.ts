// Chaos suite of the collector, against a real Kafka node private to this file
// (loopback only, bounded in time): the agent is the real CLI process, SIGKILLed while the
// broker is dead and while it is frozen; its spool disk fills up (a small tmpfs this test
// mounts; CI runs as root); a 1.67 MB frame arrives among normal ones; garbage floods on
// the socket and on stdin. Every case asserts exact accounting: what the agent read =
// what went out + what was counted as dropped (with a reason) + what is still held, and
// that every frame read is in Kafka (duplicates allowed after a crash: at least once).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { FAST_ENV, distinctFrames, frames, sleep, startAgent, until, writeAll } from './collector-agent-helpers.ts';
import { consumeTopic, createPrivateKafka, type PrivateKafka } from './collector-kafka-helpers.ts';

async function createTopic(brokers: string, topic: string, configEntries: { name: string; value: string }[] = []): Promise<void> {
  const admin = new Kafka({ clientId: 'chaos-it', brokers: [brokers], logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 2, configEntries }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
}

describe('collector chaos (real broker, real agent process)', () => {
  let kafka: PrivateKafka;
  let directory: string;

  beforeAll(async () => {
    kafka = createPrivateKafka(29192);
    await kafka.start();
    directory = mkdtempSync(join(tmpdir(), 'ww-chaos-it-'));
  }, 180_000);
  afterAll(async () => {
    await kafka.destroy();
    rmSync(directory, { recursive: true, force: true });
  }, 60_000);

  /**
   * One crash case: frames flow, the broker fails (`fault`), the agent keeps reading, health
   * says degraded within 5 s, the agent is SIGKILLed `killAfterMillis` after the fault, the
   * broker recovers, a new agent on the same spool delivers everything the first one read.
   */
  async function crashDuringFault(name: string, fault: () => Promise<void>, recover: () => Promise<void>, killAfterMillis: number): Promise<void> {
    const topic = `chaos-${name}`;
    const socket = join(directory, `${name}-run`, 'collector.sock');
    const spoolDir = join(directory, `${name}-spool`);
    const env = { ...FAST_ENV, WARPWATCH_FRAMES_TOPIC: topic, WARPWATCH_DLQ_TOPIC: `${topic}-dlq` };
    const args = ['--socket', socket, '--brokers', kafka.brokers, '--spool-dir', spoolDir, '--partitions', '2'];
    const first = await startAgent(args, env);
    await writeAll(socket, frames(name, 0, 1500));
    await until('the first frames delivered', async () => ((await first.health()).framesOut >= 1500 ? true : undefined), 60_000);

    await fault();
    const faultAt = Date.now();
    // Frames keep coming during the fault; the agent reads them all.
    await writeAll(socket, frames(name, 1500, 4500));
    await until('degraded health', async () => ((await first.health()).status === 'degraded' ? true : undefined), 10_000);
    const detectedMillis = Date.now() - faultAt;
    const beforeKill = await until('all 6000 frames read', async () => {
      const h = await first.health();
      return h.framesIn === 6000 ? h : undefined;
    }, 60_000);
    expect(beforeKill.reasons.some((r) => r.startsWith('broker'))).toBe(true);
    expect(beforeKill.framesDropped).toBe(0);
    await sleep(Math.max(0, killAfterMillis - (Date.now() - faultAt)));
    first.child.kill('SIGKILL');
    await first.exited;

    await recover();
    const second = await startAgent(args, env);
    const settled = await until('the spool delivered', async () => {
      const h = await second.health();
      return h.spoolRecords === 0 && h.status === 'ok' ? h : undefined;
    }, 90_000);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);

    // The second run's own books: what it found in the spool went out; nothing dropped.
    expect(settled.recordsRecovered).toBeGreaterThan(0);
    expect(settled.accounting).toMatchObject({ dropped: 0, held: 0, balanced: true });
    const got = await consumeTopic(kafka.brokers, topic, 6000, 60_000);
    const seen = distinctFrames(got);
    const missing = Array.from({ length: 6000 }, (_, s) => `${name}#${s}`).filter((k) => !seen.has(k));
    expect(missing).toEqual([]);
    process.stderr.write(
      `[chaos ${name}] degraded after ${detectedMillis} ms; before the kill: read ${beforeKill.framesIn}, delivered ${beforeKill.framesOut}; ` +
        `second run recovered ${settled.recordsRecovered} record(s); Kafka holds ${got.length} (${got.length - 6000} duplicate(s)), 0 missing\n`,
    );
    expect(detectedMillis).toBeLessThan(5_000);
  }

  it('loses nothing when the agent is SIGKILLed 2 s after the broker died', async () => {
    await crashDuringFault('dead', () => kafka.signal('SIGKILL'), () => kafka.start(), 2_000);
  }, 240_000);

  it('loses nothing when the agent is SIGKILLed 8 s into a broker freeze (SIGSTOP)', async () => {
    await crashDuringFault('frozen', () => kafka.signal('SIGSTOP'), () => kafka.signal('SIGCONT'), 8_000);
  }, 240_000);

  it('keeps serving through a full spool disk (ENOSPC on a small tmpfs), counts every drop, resumes when space returns', async () => {
    const mountPoint = join(directory, 'tmpfs');
    mkdirSync(mountPoint);
    const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint], { encoding: 'utf8' });
    expect(mount.status, `mount tmpfs (the suite runs as root): ${mount.stderr}`).toBe(0);
    try {
      // Ballast leaves about 1 MiB of the 4 MiB free.
      writeFileSync(join(mountPoint, 'ballast'), Buffer.alloc(3 * 1024 * 1024));
      const topic = 'chaos-enospc';
      const socket = join(directory, 'enospc-run', 'collector.sock');
      const agent = await startAgent(['--socket', socket, '--brokers', kafka.brokers, '--spool-dir', join(mountPoint, 'spool'), '--spool-max-bytes', '64MiB'], {
        ...FAST_ENV,
        WARPWATCH_FRAMES_TOPIC: topic,
        WARPWATCH_DLQ_TOPIC: `${topic}-dlq`,
        WARPWATCH_SPOOL_SEGMENT_BYTES: '256KiB',
        WARPWATCH_QUEUE_MAX_BYTES: '1MiB',
        WARPWATCH_BATCH_MAX_BYTES: '256KiB',
      });
      await kafka.stop(); // everything must wait in the spool
      await writeAll(socket, frames('enospc', 0, 3000)); // ~5 MB: more than disk + memory hold
      const full = await until('all frames read', async () => {
        const h = await agent.health();
        return h.framesIn === 3000 ? h : undefined;
      }, 60_000);
      expect(full.reasons).toContain('disk:ENOSPC');
      expect(full.droppedByReason['disk-full']).toBeGreaterThan(0);
      expect(full.accounting.balanced).toBe(true);

      rmSync(join(mountPoint, 'ballast')); // space returns: the agent notices within its retry interval
      await until('the disk to take writes again', async () => ((await agent.health()).reasons.some((r) => r.startsWith('disk:')) ? undefined : true), 10_000);
      await writeAll(socket, frames('enospc', 3000, 200));
      const resumed = await until('spooling to resume', async () => {
        const h = await agent.health();
        return h.framesIn === 3200 && !h.reasons.some((r) => r.startsWith('disk:')) ? h : undefined;
      }, 30_000);
      expect(resumed.accounting.balanced).toBe(true);

      await kafka.start();
      const settled = await until('everything held delivered', async () => {
        const h = await agent.health();
        return h.spoolRecords === 0 && h.status === 'ok' ? h : undefined;
      }, 90_000);
      agent.child.kill('SIGTERM');
      expect(await agent.exited).toBe(0);
      const dropped = settled.droppedByReason['disk-full'] ?? 0;
      expect(settled.accounting).toMatchObject({ read: 3200, delivered: 3200 - dropped, dropped, held: 0, balanced: true });
      expect(settled.framesDropped).toBe(dropped); // the only reason
      // Kafka holds exactly what the agent says it delivered, each once (no crash here).
      const got = await consumeTopic(kafka.brokers, topic, 3200 - dropped, 60_000);
      expect(got).toHaveLength(3200 - dropped);
      const seen = distinctFrames(got);
      expect(seen.size).toBe(3200 - dropped);
      // After space returned, every new frame was kept.
      for (let s = 3000; s < 3200; s++) expect(seen.has(`enospc#${s}`)).toBe(true);
      expect(agent.stderr()).toMatch(/dropped \d+ \(disk-full \d+\) \+ held 0; \d+ record\(s\) dropped/);
      process.stderr.write(`[chaos enospc] read 3200, delivered ${3200 - dropped}, dropped ${dropped} (disk-full), held 0\n`);
    } finally {
      spawnSync('umount', ['-l', mountPoint]);
    }
  }, 240_000);

  it('delivers a 1.67 MB GroupSamples frame and the frames behind it; a topic with a 1 MB limit gets it in the DLQ, capped', async () => {
    const big = fixtureFrameBytes({ job: 'big', kernel: 'k', sequence: 0, groups: 4096, groupSize: 32 });
    expect(big.length).toBeGreaterThan(1_600_000);
    const input = [big, ...frames('big', 1, 20)];

    // Topics the agent creates take every frame the spec allows.
    const socketA = join(directory, 'big-a', 'collector.sock');
    const a = await startAgent(['--socket', socketA, '--brokers', kafka.brokers, '--spool-dir', join(directory, 'big-a-spool')], {
      ...FAST_ENV,
      WARPWATCH_FRAMES_TOPIC: 'chaos-big',
      WARPWATCH_DLQ_TOPIC: 'chaos-big-dlq',
    });
    await writeAll(socketA, input);
    await until('21 frames delivered', async () => ((await a.health()).framesOut === 21 ? true : undefined), 60_000);
    a.child.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    const got = await consumeTopic(kafka.brokers, 'chaos-big', 21, 60_000);
    expect(got).toHaveLength(21);
    expect(got.some((m) => m.value.equals(Buffer.from(big)))).toBe(true);

    // A topic that already exists with the broker's default 1 MB limit (someone else's cluster).
    await createTopic(kafka.brokers, 'chaos-small', [{ name: 'max.message.bytes', value: '1048588' }]);
    await createTopic(kafka.brokers, 'chaos-small-dlq');
    const socketB = join(directory, 'big-b', 'collector.sock');
    const b = await startAgent(['--socket', socketB, '--brokers', kafka.brokers, '--spool-dir', join(directory, 'big-b-spool')], {
      ...FAST_ENV,
      WARPWATCH_FRAMES_TOPIC: 'chaos-small',
      WARPWATCH_DLQ_TOPIC: 'chaos-small-dlq',
    });
    await writeAll(socketB, input);
    const done = await until('20 frames and 1 DLQ record delivered', async () => {
      const h = await b.health();
      return h.framesOut === 20 && h.dlqOut === 1 ? h : undefined;
    }, 60_000);
    b.child.kill('SIGTERM');
    expect(await b.exited).toBe(0);
    expect(done.accounting).toMatchObject({ read: 21, delivered: 21, dropped: 0, held: 0, balanced: true });
    const dlq = await consumeTopic(kafka.brokers, 'chaos-small-dlq', 1, 60_000);
    expect(dlq).toHaveLength(1);
    expect(dlq[0]?.headers['ww-error-code']).toBe('WW_ERR_KAFKA_RECORD_REJECTED');
    expect(dlq[0]?.headers['ww-original-bytes']).toBe(String(big.length));
    expect(dlq[0]?.value.equals(Buffer.from(big.subarray(0, 65_536)))).toBe(true);
    const small = await consumeTopic(kafka.brokers, 'chaos-small', 20, 60_000);
    expect([...distinctFrames(small)].sort()).toEqual(Array.from({ length: 20 }, (_, i) => `big#${i + 1}`).sort());
  }, 240_000);

  it('pays little for garbage floods: 100 MB on the socket and on stdin cost one DLQ record per stretch, frames behind are delivered, RSS stays under 300 MB', async () => {
    const chunk = 64 * 1024;
    const flood = function* (fill: Buffer, totalBytes: number): Generator<Uint8Array> {
      for (let sent = 0; sent < totalBytes; sent += chunk) yield fill;
    };
    const zeros = Buffer.alloc(chunk);
    const magics = Buffer.alloc(chunk, 'WWFR');
    const hundredMb = 100 * 1024 * 1024;

    const socket = join(directory, 'flood', 'collector.sock');
    const agent = await startAgent(['--socket', socket, '--brokers', kafka.brokers, '--spool-dir', join(directory, 'flood-spool')], {
      ...FAST_ENV,
      WARPWATCH_FRAMES_TOPIC: 'chaos-flood',
      WARPWATCH_DLQ_TOPIC: 'chaos-flood-dlq',
    });
    await writeAll(socket, (function* () {
      yield* frames('flood', 0, 5);
      yield* flood(zeros, hundredMb);
      yield* frames('flood', 5, 5);
      yield* flood(magics, hundredMb);
      yield* frames('flood', 10, 5);
    })());
    const settled = await until('15 frames and 2 DLQ records', async () => {
      const h = await agent.health();
      return h.framesOut === 15 && h.dlqOut === 2 ? h : undefined;
    }, 120_000);
    agent.child.kill('SIGTERM');
    expect(await agent.exited).toBe(0);
    expect(settled).toMatchObject({ framesRejected: 2, framesDropped: 0 });
    expect(settled.accounting).toMatchObject({ read: 17, delivered: 17, held: 0, balanced: true });
    const socketPeak = agent.peakRssBytes();
    expect(socketPeak).toBeLessThan(300 * 1024 * 1024);
    const dlq = await consumeTopic(kafka.brokers, 'chaos-flood-dlq', 2, 60_000);
    expect(dlq.map((m) => m.headers['ww-discarded-bytes']).sort()).toEqual([String(hundredMb), String(hundredMb)]);
    expect(dlq.every((m) => m.value.length <= 65_536)).toBe(true);

    // stdin: the same flood through a pipe; the run ends when stdin does.
    const piped = await startAgent(['--stdin', '--brokers', kafka.brokers, '--spool-dir', join(directory, 'flood-stdin-spool')], {
      ...FAST_ENV,
      WARPWATCH_FRAMES_TOPIC: 'chaos-flood-stdin',
      WARPWATCH_DLQ_TOPIC: 'chaos-flood-stdin-dlq',
    }, { stdin: 'pipe' });
    const stdin = piped.child.stdin as NonNullable<ChildProcess['stdin']>;
    for (const part of (function* () {
      yield* frames('stdin', 0, 5);
      yield* flood(magics, hundredMb);
      yield* frames('stdin', 5, 5);
    })()) {
      if (!stdin.write(part)) await new Promise<void>((resolve) => stdin.once('drain', () => resolve()));
    }
    stdin.end();
    expect(await piped.exited).toBe(0);
    expect(piped.stderr()).toMatch(/read 11 \(frames 10, rejected 1\) = delivered 11 \(frames 10, DLQ 1\) \+ dropped 0 \+ held 0; everything delivered/);
    const stdinPeak = piped.peakRssBytes();
    expect(stdinPeak).toBeLessThan(300 * 1024 * 1024);
    const got = await consumeTopic(kafka.brokers, 'chaos-flood-stdin', 10, 60_000);
    expect(distinctFrames(got).size).toBe(10);
    process.stderr.write(`[chaos flood] peak RSS socket ${(socketPeak / 2 ** 20).toFixed(0)} MiB, stdin ${(stdinPeak / 2 ** 20).toFixed(0)} MiB\n`);
  }, 300_000);

  it('refuses a socket directory another user prepared (mode 0777), before serving anything', async () => {
    const hostile = join(directory, 'hostile');
    mkdirSync(hostile);
    spawnSync('chmod', ['0777', hostile]);
    const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'collect', '--socket', join(hostile, 'collector.sock'), '--brokers', kafka.brokers, '--spool-dir', join(directory, 'hostile-spool'), '--metrics-port', '0'], {
      env: { ...process.env, WARPWATCH_INFLUX_URL: 'off' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).not.toBe(0);
    expect(stderr).toMatch(/WW_ERR_COLLECTOR_SOCKET_DIR_UNSAFE: socket directory .*hostile has mode 0777/);
    expect(() => readFileSync(join(hostile, 'collector.sock'))).toThrow();
  }, 60_000);
});
