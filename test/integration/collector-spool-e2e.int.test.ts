// End-to-end cases of the collector's spool (docs/collector.md, "What damage costs" and "The
// spool lock"): the real `warpwatch collect` process, a real Kafka node private to this file
// (its own ports, shared by the cases), and the data followed into the topic, counted and
// de-duplicated. Each case asserts exact accounting: read = delivered + dropped (by reason) +
// held, on /healthz and on the stop line.
//
// "Broker down" is a real outage (the private node SIGKILLed) where the case needs the broker
// to come back under a running agent; where the agent is stopped before the broker returns,
// the first run points at a port nothing listens on (connection refused: the same outage from
// the agent's side) and the next run at the private node, so the node restarts once per file.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FAST_ENV, distinctFrames, frameNames, frames, processState, sleep, startAgent, until, writeAll, type Agent, type AgentOptions, type Health } from './collector-agent-helpers.ts';
import { consumeTopic, createPrivateKafka, type PrivateKafka } from './collector-kafka-helpers.ts';

/** Ports of the private node (and +1 for its controller): distinct from the other suites' private nodes. */
const KAFKA_PORT = 29892;

/** A loopback port nothing listens on (bound and closed again), for a run that must find the broker down. */
async function deadPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The `job#sequence` names of frames `from` .. `from + count - 1`. */
const names = (job: string, from: number, count: number): string[] => Array.from({ length: count }, (_, i) => `${job}#${from + i}`);

/** How often each name occurs, for the names that occur more than once. */
function duplicatesOf(list: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const name of list) counts.set(name, (counts.get(name) ?? 0) + 1);
  return new Map([...counts].filter(([, n]) => n > 1));
}

/** The stop line of a collector stopped by SIGTERM. */
function stopLine(stderr: string): string {
  const line = stderr.split('\n').find((l) => l.includes('warpwatch collect info: stopped on SIGTERM: '));
  expect(line, stderr).toBeDefined();
  return line as string;
}

/** One record found by walking a segment file by its documented layout (`u32 length | u32 CRC-32C | payload`). */
interface SegmentRecord {
  readonly file: string;
  readonly offset: number;
  readonly bytes: number;
  /** Index of the frame at the end of the payload (the record's value), in the order the test sent them. */
  readonly frameIndex: number;
}

/**
 * Walks every segment of `spoolDir` in file order and matches each record's value (the last
 * bytes of its payload) against the frames the test sent, in order: the layout of the spool
 * as the test knows it, independent of what the collector reports.
 */
function spoolLayout(spoolDir: string, sent: readonly Uint8Array[]): SegmentRecord[] {
  const files = readdirSync(spoolDir)
    .filter((n) => /^\d{16}\.seg$/.test(n))
    .sort();
  const records: SegmentRecord[] = [];
  for (const file of files) {
    const bytes = readFileSync(join(spoolDir, file));
    for (let offset = 0; offset < bytes.length; ) {
      const size = 8 + bytes.readUInt32LE(offset);
      const expected = sent[records.length] as Uint8Array;
      expect(expected, `more records than frames sent, at byte ${offset} of ${file}`).toBeDefined();
      // The frame is the tail of the payload, byte for byte.
      expect(Buffer.compare(bytes.subarray(offset + size - expected.length, offset + size), Buffer.from(expected)), `record ${records.length} at byte ${offset} of ${file}`).toBe(0);
      records.push({ file, offset, bytes: size, frameIndex: records.length });
      offset += size;
    }
  }
  return records;
}

describe('collector spool end to end (real agent process, private Kafka node)', () => {
  let kafka: PrivateKafka;
  let directory: string;
  /** Every agent a case started, so that one a failed case left running is stopped. */
  const agents: Agent[] = [];
  const launch = async (args: string[], env: Record<string, string>, options?: AgentOptions): Promise<Agent> => {
    const agent = await startAgent(args, env, options);
    agents.push(agent);
    return agent;
  };

  beforeAll(async () => {
    kafka = createPrivateKafka(KAFKA_PORT);
    await kafka.start();
    directory = mkdtempSync(join(tmpdir(), 'ww-spool-e2e-'));
  }, 180_000);
  afterAll(async () => {
    for (const agent of agents) {
      // Only processes still running under their ChildProcess (never a pid that may be reused).
      if (agent.child.exitCode !== null || agent.child.signalCode !== null) continue;
      try {
        process.kill(agent.pid, 'SIGKILL');
        if (agent.child.pid !== agent.pid) process.kill(agent.child.pid as number, 'SIGCONT');
      } catch {
        // Already gone.
      }
    }
    await kafka.destroy();
    rmSync(directory, { recursive: true, force: true });
  }, 60_000);

  const topicEnv = (topic: string): Record<string, string> => ({ ...FAST_ENV, WARPWATCH_FRAMES_TOPIC: topic, WARPWATCH_DLQ_TOPIC: `${topic}-dlq` });

  it('refuses a second collector on a live spool (WW_ERR_SPOOL_LOCKED, one line, exit 1); the first keeps delivering', async () => {
    const topic = 'e2e-locked';
    const spoolDir = join(directory, 'locked-spool');
    const socket = join(directory, 'locked-run', 'collector.sock');
    const args = (sock: string): string[] => ['--socket', sock, '--brokers', kafka.brokers, '--spool-dir', spoolDir, '--partitions', '2'];
    const first = await launch(args(socket), topicEnv(topic));
    await writeAll(socket, frames('locked', 0, 200));
    await until('200 frames delivered', async () => ((await first.health()).framesOut === 200 ? true : undefined), 60_000);
    const lockBefore = readFileSync(join(spoolDir, 'LOCK'), 'utf8');
    expect(JSON.parse(lockBefore)).toMatchObject({ pid: first.pid });

    // Another socket on the same spool, then the very same command line again.
    for (const sock of [join(directory, 'locked-other', 'collector.sock'), socket]) {
      const second = spawn(process.execPath, ['bin/warpwatch.mjs', 'collect', '--metrics-port', '0', ...args(sock)], {
        env: { ...process.env, WARPWATCH_INFLUX_URL: 'off', ...topicEnv(topic) },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      second.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => second.once('exit', resolve));
      const lines = stderr.split('\n').filter((l) => l.trim() !== '');
      expect(lines, stderr).toHaveLength(1);
      expect(lines[0]).toMatch(new RegExp(`^warpwatch: WW_ERR_SPOOL_LOCKED: spool directory ${spoolDir} is in use by a live collector \\(LOCK names pid ${first.pid} on host \\S+\\); give each collector its own --spool-dir$`));
      expect(code).toBe(1);
    }
    // The refused ones changed nothing: the LOCK is the first's, its socket takes frames, it delivers them.
    expect(readFileSync(join(spoolDir, 'LOCK'), 'utf8')).toBe(lockBefore);
    await writeAll(socket, frames('locked', 200, 300));
    const settled = await until('500 frames delivered', async () => {
      const h = await first.health();
      return h.framesOut === 500 && h.spoolRecords === 0 ? h : undefined;
    }, 60_000);
    expect(settled.status).toBe('ok');
    expect(settled.accounting).toEqual({ read: 500, delivered: 500, dropped: 0, held: 0, balanced: true });
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(stopLine(first.stderr())).toContain('read 500 (frames 500, rejected 0) = delivered 500 (frames 500, DLQ 0) + dropped 0 + held 0; everything delivered');
    // No crash: Kafka holds each frame exactly once.
    const got = await consumeTopic(kafka.brokers, topic, 500, 60_000);
    expect(frameNames(got).sort()).toEqual(names('locked', 0, 500).sort());
  }, 180_000);

  it('SIGKILLed while the broker is dead and restarted within 100 ms while it is still a zombie: starts, and every frame reaches Kafka once the broker is back', async () => {
    const topic = 'e2e-zombie';
    const spoolDir = join(directory, 'zombie-spool');
    const socket = join(directory, 'zombie-run', 'collector.sock');
    const args = ['--socket', socket, '--brokers', kafka.brokers, '--spool-dir', spoolDir, '--partitions', '2'];
    const first = await launch(args, topicEnv(topic), { underShell: true });
    await writeAll(socket, frames('zombie', 0, 500));
    await until('500 frames delivered', async () => ((await first.health()).framesOut === 500 ? true : undefined), 60_000);

    await kafka.signal('SIGKILL');
    // The node is shared by the cases of this file: whatever fails below, it runs again afterwards.
    let brokerBack = false;
    try {
      const brokerDiedAt = Date.now();
      await writeAll(socket, frames('zombie', 500, 2000));
      const beforeKill = await until('2500 frames read, the broker seen down', async () => {
        const h = await first.health();
        return h.framesIn === 2500 && h.status === 'degraded' ? h : undefined;
      }, 60_000);
      expect(beforeKill.accounting).toEqual({ read: 2500, delivered: 500, dropped: 0, held: 2000, balanced: true });
      // The first 500 were acknowledged before the outage; the cursor is written within 500 ms of that.
      await sleep(Math.max(0, 1_000 - (Date.now() - brokerDiedAt)));

      // SIGSTOP the shell so nothing reaps the collector: after SIGKILL it is a zombie.
      process.kill(first.child.pid as number, 'SIGSTOP');
      process.kill(first.pid, 'SIGKILL');
      const killedAt = Date.now();
      const running = await launch(args, topicEnv(topic)).catch((error: unknown) => {
        process.kill(first.child.pid as number, 'SIGCONT');
        throw error;
      });
      // Still a zombie when the successor had taken the spool (its start line is out).
      const predecessorState = processState(first.pid);
      process.kill(first.child.pid as number, 'SIGCONT');
      expect(predecessorState).toBe('Z');
      expect(await first.exited).toBe(137);
      const restartMillis = running.spawnedAt - killedAt;
      expect(restartMillis).toBeLessThan(100);
      expect(running.stderr()).toContain('from a previous run');
      const recovered = await running.health();
      // The 2000 frames read after the broker died were in the spool; nothing more (the cursor was current).
      expect(recovered.recordsRecovered).toBe(2000);
      // More frames while the broker is still dead: they queue behind the recovered ones.
      await writeAll(socket, frames('zombie', 2500, 500));
      await until('500 more frames read', async () => ((await running.health()).framesIn === 500 ? true : undefined), 60_000);

      await kafka.start();
      brokerBack = true;
      const settled = await until('the spool delivered', async () => {
        const h = await running.health();
        return h.spoolRecords === 0 && h.status === 'ok' ? h : undefined;
      }, 120_000);
      expect(settled.accounting).toEqual({ read: 2500, delivered: 2500, dropped: 0, held: 0, balanced: true });
      running.child.kill('SIGTERM');
      expect(await running.exited).toBe(0);
      expect(stopLine(running.stderr())).toContain(
        'read 2500 (frames 500, rejected 0, recovered from the spool 2000) = delivered 2500 (frames 2500, DLQ 0) + dropped 0 + held 0; everything delivered',
      );

      const got = await consumeTopic(kafka.brokers, topic, 3000, 90_000);
      const seen = frameNames(got);
      expect(new Set(seen).size).toBe(3000);
      expect(names('zombie', 0, 3000).filter((n) => !seen.includes(n))).toEqual([]);
      // Duplicates: the crash re-sends only records delivered in the last 500 ms before it (none
      // here: the broker had been dead for a second); a send that timed out but reached the broker
      // is sent again by the second run (docs/collector.md, "Duplicates"): counted, and reported.
      const duplicates = duplicatesOf(seen);
      expect([...duplicates.keys()].filter((n) => Number(n.split('#')[1]) < 500)).toEqual([]);
      process.stderr.write(
        `[spool-e2e zombie] restart ${restartMillis} ms after the SIGKILL, predecessor still a zombie; recovered 2000; Kafka holds ${got.length} (${got.length - 3000} duplicate(s)), 0 missing\n`,
      );
    } finally {
      if (!brokerBack) await kafka.start();
    }
  }, 300_000);

  it('starts over a stale LOCK naming a live unrelated process (PID 1: same namespace, another namespace, a bare pid file) and delivers every spooled frame', async () => {
    const down = `127.0.0.1:${await deadPort()}`;
    // The LOCK a gone holder left, naming PID 1 (alive: another process holds that pid now):
    // written in this network namespace and boot; in another namespace (a container that is gone),
    // not renewed for a minute; and a bare pid (the PID file of collectors before the kernel-released lock).
    const lockText = (variant: string): string => {
      const netns = variant === 'same-namespace' ? readlinkSync('/proc/self/ns/net') : 'net:[4026531999]';
      const bootId = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const host = variant === 'same-namespace' ? hostname() : 'old-container';
      return variant === 'pid-file' ? '1\n' : `${JSON.stringify({ pid: 1, host, netns, bootId, token: randomUUID(), startedAt: new Date(Date.now() - 3_600_000).toISOString() })}\n`;
    };
    for (const variant of ['pid-file', 'same-namespace', 'other-namespace'] as const) {
      const topic = `e2e-pid1-${variant}`;
      const spoolDir = join(directory, `pid1-${variant}-spool`);
      const socket = join(directory, `pid1-${variant}-run`, 'collector.sock');
      const first = await launch(['--socket', socket, '--brokers', down, '--spool-dir', spoolDir, '--partitions', '2'], topicEnv(topic));
      await writeAll(socket, frames(variant, 0, 300));
      await until('300 frames spooled', async () => {
        const h = await first.health();
        return h.framesIn === 300 && h.spoolRecords === 300 ? true : undefined;
      }, 60_000);
      first.child.kill('SIGKILL');
      await first.exited;
      const lockPath = join(spoolDir, 'LOCK');
      writeFileSync(lockPath, lockText(variant));
      if (variant === 'other-namespace') utimesSync(lockPath, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
      expect(processState(1)).toBeDefined(); // PID 1 is alive

      const second = await launch(['--socket', socket, '--brokers', kafka.brokers, '--spool-dir', spoolDir, '--partitions', '2'], topicEnv(topic));
      const settled = await until('the spool delivered', async () => {
        const h = await second.health();
        return h.spoolRecords === 0 ? h : undefined;
      }, 90_000);
      expect(settled.accounting).toEqual({ read: 300, delivered: 300, dropped: 0, held: 0, balanced: true });
      expect(second.stderr()).toMatch(new RegExp(`warn: spool lock ${lockPath} \\((pid 1 on host [^)]+|"1")\\) .*taken over`));
      expect(JSON.parse(readFileSync(lockPath, 'utf8'))).toMatchObject({ pid: second.pid });
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
      expect(stopLine(second.stderr())).toContain('read 300 (frames 0, rejected 0, recovered from the spool 300) = delivered 300 (frames 300, DLQ 0) + dropped 0 + held 0; everything delivered');
      // The first run never reached a broker: each frame is in Kafka exactly once.
      const got = await consumeTopic(kafka.brokers, topic, 300, 60_000);
      expect(frameNames(got).sort()).toEqual(names(variant, 0, 300).sort());
    }
  }, 240_000);

  it('counts exactly the frames two truncated middle segments destroyed (64 KiB segments; cut inside a record and at a record boundary): Kafka holds N − lost, read = delivered + dropped(spool-corrupt)', async () => {
    const total = 2000;
    const topic = 'e2e-damage';
    const spoolDir = join(directory, 'damage-spool');
    const socket = join(directory, 'damage-run', 'collector.sock');
    const env = { ...topicEnv(topic), WARPWATCH_SPOOL_SEGMENT_BYTES: '65536' };
    const sent = frames('damage', 0, total);
    const first = await launch(['--socket', socket, '--brokers', `127.0.0.1:${await deadPort()}`, '--spool-dir', spoolDir, '--partitions', '2'], env);
    await writeAll(socket, sent);
    await until(`${total} frames spooled`, async () => ((await first.health()).framesIn === total ? true : undefined), 60_000);
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(stopLine(first.stderr())).toContain(`read ${total} (frames ${total}, rejected 0) = delivered 0 (frames 0, DLQ 0) + dropped 0 + held ${total}; ${total} record(s) left in the spool`);

    // The layout, as the test reads it: every frame once, in order, segments of at most 64 KiB.
    const layout = spoolLayout(spoolDir, sent);
    expect(layout).toHaveLength(total);
    const files = [...new Set(layout.map((r) => r.file))];
    expect(files.length).toBeGreaterThan(10);
    for (const file of files) expect(statSync(join(spoolDir, file)).size).toBeLessThanOrEqual(65_536);
    // Two middle segments cut short: one at byte 26,000 (inside a record), one exactly where its
    // 10th record starts (a record boundary: no torn bytes). Every record that does not end
    // before its cut is gone.
    const cuts = [
      { file: files[Math.floor(files.length / 4)] as string, at: 26_000 },
      { file: files[Math.floor(files.length / 2)] as string, at: (layout.filter((r) => r.file === files[Math.floor(files.length / 2)])[9] as SegmentRecord).offset },
    ];
    const lostFrames = new Set<string>();
    const expectedLines: string[] = [];
    for (const { file, at } of cuts) {
      const gone = layout.filter((r) => r.file === file && r.offset + r.bytes > at);
      expect(gone.length).toBeGreaterThan(10);
      for (const r of gone) lostFrames.add(`damage#${r.frameIndex}`);
      // Records are numbered 1, 2, 3, ... in write order (docs/collector.md, spool layout): frame i is record i + 1.
      const firstLost = (gone[0] as SegmentRecord).frameIndex + 1;
      const nextKept = (gone[gone.length - 1] as SegmentRecord).frameIndex + 2;
      const torn = at - (gone[0] as SegmentRecord).offset;
      expectedLines.push(
        `WW_ERR_SPOOL_CORRUPT: spool ${spoolDir}: ` +
          (torn > 0 ? `torn tail of ${torn} bytes at byte ${at - torn} of ${file} (CRC-32C or length check failed)` : 'no damaged bytes (a segment ends early at a record boundary, or was removed)') +
          `; ${gone.length} record(s) lost: records ${firstLost}..${nextKept - 1} are missing before record ${nextKept} at byte 0 of ${(layout[nextKept - 1] as SegmentRecord).file}`,
      );
      truncateSync(join(spoolDir, file), at);
    }
    expect(expectedLines[0]).toContain('torn tail');
    expect(expectedLines[1]).toContain('no damaged bytes');
    const lost = lostFrames.size;

    const second = await launch(['--socket', socket, '--brokers', kafka.brokers, '--spool-dir', spoolDir, '--partitions', '2'], env);
    const settled: Health = await until('the spool delivered', async () => {
      const h = await second.health();
      return h.spoolRecords === 0 ? h : undefined;
    }, 120_000);
    expect(settled.accounting).toEqual({ read: total, delivered: total - lost, dropped: lost, held: 0, balanced: true });
    expect(settled.droppedByReason).toEqual({ 'spool-corrupt': lost });
    expect(settled.recordsRecovered).toBe(total);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
    const log = second.stderr();
    expect(log.match(/ warn: WW_ERR_SPOOL_CORRUPT: /g) ?? []).toHaveLength(2);
    for (const line of expectedLines) expect(log).toContain(line);
    expect(log).toContain(`spool holds ${total - lost} record(s) from a previous run and ${lost} record(s) were lost to damage`);
    expect(stopLine(log)).toContain(
      `read ${total} (frames 0, rejected 0, recovered from the spool ${total}) = delivered ${total - lost} (frames ${total - lost}, DLQ 0) + dropped ${lost} (spool-corrupt ${lost}) + held 0; ${lost} record(s) dropped`,
    );

    // Kafka: exactly the frames that were not in the cut-off part, each once.
    const got = await consumeTopic(kafka.brokers, topic, total - lost, 90_000);
    expect(got).toHaveLength(total - lost);
    const seen = distinctFrames(got);
    expect(seen.size).toBe(total - lost);
    expect(names('damage', 0, total).filter((n) => !seen.has(n) !== lostFrames.has(n))).toEqual([]);
    process.stderr.write(
      `[spool-e2e damage] ${total} frames in ${files.length} segments; ${cuts.map((c) => `${c.file} cut at byte ${c.at}`).join(', ')}: ${lost} frames lost (from the layout); Kafka holds ${got.length}\n`,
    );
  }, 240_000);
});
