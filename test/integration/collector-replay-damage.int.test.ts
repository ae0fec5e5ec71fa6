// `warpwatch collect --replay` of a damaged frame file, against the real broker: the collector
// resynchronises on the next valid frame (every intact frame reaches the frames topic, each
// damaged stretch is one DLQ record with its exact length in ww-discarded-bytes), the damage is
// said on stderr before the run, and the exit code is 1 (WW_ERR_FRAME_FILE_DAMAGED) unless
// --accept-damage is given; a cut-off last frame is a warning (exit 0). The same files as the
// in-process readers' test (cli/frame-file-readers.test.ts).
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { eightFrames, withFakeHeader, withLengthCorrupted } from '../../cli/testing/damaged-frame-files.ts';
import { consumeTopic } from './collector-kafka-helpers.ts';
import { requiredEnv } from './stack-env.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-replay-damage-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

const frames = eightFrames();

/** `warpwatch collect --replay FILE [extra]` on fresh topics; resolves with its exit code, stderr and topics. */
function replay(bytes: Buffer, extra: readonly string[] = []): Promise<{ code: number | null; stderr: string; file: string; framesTopic: string; dlqTopic: string }> {
  const run = randomUUID().slice(0, 8);
  const file = join(directory, `${run}.wwf`);
  writeFileSync(file, bytes);
  const framesTopic = `warpwatch.it.replay-frames-${run}`;
  const dlqTopic = `warpwatch.it.replay-dlq-${run}`;
  const child = spawn(
    process.execPath,
    ['bin/warpwatch.mjs', 'collect', '--replay', file, '--brokers', requiredEnv('WARPWATCH_KAFKA_BROKERS'), '--partitions', '1', '--spool-dir', join(directory, `spool-${run}`), '--metrics-port', 'off', ...extra],
    { env: { ...process.env, WARPWATCH_FRAMES_TOPIC: framesTopic, WARPWATCH_DLQ_TOPIC: dlqTopic }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stderr, file, framesTopic, dlqTopic })));
}

const brokers = (): string => requiredEnv('WARPWATCH_KAFKA_BROKERS');

describe('collect --replay of a damaged frame file', () => {
  it('a length field corrupted upwards in frame 2 of 8: 7 frames delivered, the frame is 1 DLQ record of its exact length, exit 1', async () => {
    const result = await replay(withLengthCorrupted(frames, 1));
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toContain(`--replay file '${result.file}': skipped a damaged stretch of ${frames[1]!.length} byte(s) at byte offset ${frames[0]!.length}, up to the next valid frame (WW_ERR_FRAME_TRUNCATED: `);
    expect(result.stderr).toContain('read 8 (frames 7, rejected 1) = delivered 8 (frames 7, DLQ 1)');
    expect(result.stderr).toContain(`warpwatch: WW_ERR_FRAME_FILE_DAMAGED: '${result.file}': 1 damaged stretch(es), ${frames[1]!.length} byte(s) skipped;`);
    expect((await consumeTopic(brokers(), result.framesTopic, 7)).map((m) => m.value)).toEqual([frames[0]!, ...frames.slice(2)].map((f) => Buffer.from(f)));
    const [dlq] = await consumeTopic(brokers(), result.dlqTopic, 1);
    expect(dlq?.headers['ww-discarded-bytes']).toBe(String(frames[1]!.length));
  }, 60_000);

  it('a fake 16-byte header in front of an intact file: all 8 frames delivered, 16 bytes to the DLQ; --accept-damage exits 0', async () => {
    const result = await replay(withFakeHeader(frames), ['--accept-damage']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`--replay file '${result.file}': skipped a damaged stretch of 16 byte(s) at byte offset 0`);
    expect(result.stderr).toContain('read 9 (frames 8, rejected 1) = delivered 9 (frames 8, DLQ 1)');
    expect(result.stderr).not.toContain('WW_ERR_FRAME_FILE_DAMAGED:');
    expect((await consumeTopic(brokers(), result.framesTopic, 8)).map((m) => m.value)).toEqual(frames.map((f) => Buffer.from(f)));
    const [dlq] = await consumeTopic(brokers(), result.dlqTopic, 1);
    expect(dlq?.headers['ww-discarded-bytes']).toBe('16');
  }, 60_000);

  it('a cut-off last frame is a warning: exit 0', async () => {
    const result = await replay(Buffer.concat([...frames.slice(0, 7), frames[7]!.subarray(0, 50)]));
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain(`--replay file '${result.file}': the last 50 byte(s) are a frame cut off (a writer stopped mid-frame)`);
    expect(result.stderr).not.toContain('skipped a damaged stretch');
  }, 60_000);
});
