/**
 * Benchmark of the frame codec (protocol/): µs per frame to encode and decode a LaunchSummary
 * and GroupSamples frames (4 groups × 32 lanes = the collector's 1.7 KB frame, 32 × 32, and the
 * 4096-group maximum), and splitter throughput in MB/s on a stream of frames and on garbage
 * ('WWFR' repeated: one rejected stretch, whatever its length).
 *
 * Baselines, all measured in the same run:
 * - the previous implementation: protocol/ as of commit PREVIOUS_COMMIT (before the
 *   performance work), extracted from git into .cache/ and loaded beside the current one.
 *   Skipped, with a note, when git or that commit is not available.
 * - JSON.stringify / JSON.parse of the same frame object (bigints as decimal strings; the
 *   parse does not turn them back into bigints, so it does less than a decode): what a generic
 *   text serialisation of the same data costs.
 * - plain byte copy (Uint8Array.prototype.slice of every chunk) for the splitter: its floor.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  createFrameSplitter,
  decodeFrame,
  encodeFrame,
  histogramOfCounts,
  type Frame,
  type GroupSamplesFrame,
  type LaunchSummaryFrame,
} from '../protocol/index.ts';
import { mulberry32 } from '../model/index.ts';
import type { BenchContext, BenchResult } from './bench-context.ts';

/** protocol/ as the "protocol" helper delivered it, before this performance work. */
const PREVIOUS_COMMIT = '6b7b98f';
const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The codec functions a bench case calls (the current module, or the previous one). */
interface Codec {
  encodeFrame(frame: Frame): Uint8Array;
  decodeFrame(bytes: Uint8Array, options?: { crcVerified?: boolean }): Frame;
  createFrameSplitter(): { push(chunk: Uint8Array): unknown[]; end(): unknown[] };
}

/** Iteration counts with a geometric-like spread (1..~2000), as a divergent loop gives. */
function laneCountsOf(random: () => number, count: number): number[] {
  return Array.from({ length: count }, () => Math.floor(-Math.log(1 - random()) * 60) + 1);
}

const identity = {
  job: 'bench-job',
  kernel: 'mandelbrot<32>',
  launchId: 0x0123456789abcdefn,
  frameSequence: 7,
  source: 'cuda',
  groupSize: 32,
  sync: false,
  device: { name: 'NVIDIA H100 80GB HBM3', uuid: '5a8c2f3e-0b1d-4e6f-8a9b-c0d1e2f3a4b5', computeCapability: { major: 9, minor: 0 }, clockHz: 1_980_000_000 },
  startUnixNanos: 1_718_000_000_000_000_000n,
  endUnixNanos: 1_718_000_000_250_000_000n,
} as const;

function launchSummary(groups: number): LaunchSummaryFrame {
  const counts = laneCountsOf(mulberry32(1), groups * 32);
  let sumMax = 0;
  let sum = 0;
  for (let g = 0; g < groups; g++) {
    const lanes = counts.slice(g * 32, g * 32 + 32);
    sumMax += Math.max(...lanes);
    sum += lanes.reduce((a, b) => a + b, 0);
  }
  return {
    type: 'launch-summary',
    ...identity,
    groupCount: groups,
    groupsCounted: groups,
    sumSimtClocks: 123_456_789n,
    sumMimdClocks: 98_765_432n,
    sumMeasuredLoss: 1.7 * groups,
    sumCountsLoss: 1.6 * groups,
    sumMaxCounts: sumMax,
    sumCounts: sum,
    droppedSamples: 0,
    histogram: histogramOfCounts(counts),
  };
}

function groupSamples(groups: number): GroupSamplesFrame {
  const random = mulberry32(groups);
  return {
    type: 'group-samples',
    ...identity,
    groupCount: groups * 64,
    selection: 'hash',
    samplingStride: 64,
    groups: Array.from({ length: groups }, (_, g) => {
      const laneCounts = laneCountsOf(random, 32);
      const startClock = 1_000_000n * BigInt(g + 1);
      return {
        groupIndex: g * 64,
        startClock,
        endClock: startClock + BigInt(Math.max(...laneCounts) * 40),
        laneCounts,
        laneFinishClocks: laneCounts.map((count) => startClock + BigInt(count * 40)),
      };
    }),
  };
}

/**
 * Loads protocol/ of PREVIOUS_COMMIT from git into .cache/ (ignored by git and ESLint) and
 * imports it; undefined (with the reason) when that is not possible.
 */
async function loadPreviousCodec(): Promise<{ codec?: Codec; reason?: string }> {
  try {
    const git = (args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 });
    const commit = git(['rev-parse', '--verify', `${PREVIOUS_COMMIT}^{commit}`]).trim();
    const directory = join(root, '.cache', 'bench-protocol-previous', commit);
    const files = git(['ls-tree', '--name-only', `${commit}`, 'protocol/'])
      .split('\n')
      .filter((path) => path.endsWith('.ts') && !path.endsWith('.test.ts'));
    mkdirSync(join(directory, 'protocol'), { recursive: true });
    for (const path of files) writeFileSync(join(directory, path), git(['show', `${commit}:${path}`]));
    const codec = (await import(pathToFileURL(join(directory, 'protocol', 'index.ts')).href)) as Codec;
    return { codec };
  } catch (error) {
    return { reason: error instanceof Error ? error.message.split('\n')[0] : String(error) };
  }
}

/** Bigints as decimal strings, so JSON can carry a frame. */
const bigintAsString = (_key: string, value: unknown): unknown => (typeof value === 'bigint' ? value.toString() : value);

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const current: Codec = { encodeFrame, decodeFrame, createFrameSplitter };
  const previous = await loadPreviousCodec();
  if (previous.codec === undefined) ctx.note(`previous implementation (${PREVIOUS_COMMIT}) not measured: ${previous.reason}`);
  else ctx.note(`baseline "previous": protocol/ at commit ${PREVIOUS_COMMIT} (before the performance work), loaded from git into .cache/bench-protocol-previous/ and run in the same process`);
  ctx.note('baseline "JSON": JSON.stringify of the same frame object (bigints as strings) and JSON.parse of that text (no bigint revival, so it does less work than a decode)');
  ctx.note('times are per run of `frames per run` frames; µs per frame = median / frames per run (metrics)');

  const metrics: Record<string, number> = {};
  const shapes: { label: string; frame: Frame; perRun: number }[] = [
    { label: 'LaunchSummary (1024 groups counted)', frame: launchSummary(1024), perRun: ctx.quick ? 200 : 1000 },
    { label: 'GroupSamples 4x32', frame: groupSamples(4), perRun: ctx.quick ? 200 : 1000 },
    { label: 'GroupSamples 32x32', frame: groupSamples(32), perRun: ctx.quick ? 40 : 200 },
    { label: 'GroupSamples 4096x32 (max)', frame: groupSamples(4096), perRun: ctx.quick ? 1 : 3 },
  ];
  const budget = { maxTotalMillis: ctx.quick ? 1000 : 2500, runs: 15 };
  let sink = 0;

  for (const { label, frame, perRun } of shapes) {
    const bytes = encodeFrame(frame);
    const parameters = { frameBytes: bytes.length, framesPerRun: perRun };
    const text = JSON.stringify(frame, bigintAsString);
    const micros = (caseName: string): number => ((ctx.cases.find((c) => c.name === caseName)!.medianCpuMillis * 1000) / perRun);
    const names = {
      encodePrevious: `encode ${label}: previous`,
      encode: `encode ${label}`,
      decodePrevious: `decode ${label}: previous`,
      decode: `decode ${label}`,
      decodeVerified: `decode ${label} (crcVerified)`,
      jsonStringify: `JSON.stringify ${label}`,
      jsonParse: `JSON.parse ${label}`,
    };

    const repeat = (fn: () => number) => (): void => {
      for (let i = 0; i < perRun; i++) sink += fn();
    };
    if (previous.codec !== undefined) {
      const old = previous.codec;
      await ctx.measure(names.encodePrevious, repeat(() => old.encodeFrame(frame).length), { ...budget, parameters });
    }
    await ctx.measure(names.encode, repeat(() => encodeFrame(frame).length), {
      ...budget,
      parameters,
      ...(previous.codec === undefined ? {} : { baseline: names.encodePrevious }),
    });
    if (previous.codec !== undefined) {
      const old = previous.codec;
      await ctx.measure(names.decodePrevious, repeat(() => old.decodeFrame(bytes).frameSequence), { ...budget, parameters });
    }
    const withPrevious = previous.codec === undefined ? {} : { baseline: names.decodePrevious };
    await ctx.measure(names.decode, repeat(() => decodeFrame(bytes).frameSequence), { ...budget, parameters, ...withPrevious });
    await ctx.measure(names.decodeVerified, repeat(() => decodeFrame(bytes, { crcVerified: true }).frameSequence), { ...budget, parameters, ...withPrevious });
    await ctx.measure(names.jsonStringify, repeat(() => JSON.stringify(frame, bigintAsString).length), { ...budget, parameters: { ...parameters, jsonBytes: text.length } });
    await ctx.measure(names.jsonParse, repeat(() => (JSON.parse(text) as { frameSequence: number }).frameSequence), { ...budget, parameters: { ...parameters, jsonBytes: text.length } });

    const key = label.split(' (')[0]!.replace(/\s+/g, '');
    metrics[`${key}.frameBytes`] = bytes.length;
    metrics[`${key}.encodeMicros`] = micros(names.encode);
    metrics[`${key}.decodeMicros`] = micros(names.decode);
    metrics[`${key}.decodeCrcVerifiedMicros`] = micros(names.decodeVerified);
    metrics[`${key}.jsonStringifyMicros`] = micros(names.jsonStringify);
    metrics[`${key}.jsonParseMicros`] = micros(names.jsonParse);
    if (previous.codec !== undefined) {
      metrics[`${key}.previousEncodeMicros`] = micros(names.encodePrevious);
      metrics[`${key}.previousDecodeMicros`] = micros(names.decodePrevious);
    }
  }

  // Splitter: the collector's input, GroupSamples 4x32 and LaunchSummary frames alternating,
  // delivered in 64 KiB chunks (a socket read).
  const streamFrames = Array.from({ length: ctx.quick ? 500 : 2000 }, (_, i) => encodeFrame(i % 2 === 0 ? groupSamples(4) : launchSummary(4)));
  const streamBytes = streamFrames.reduce((n, f) => n + f.length, 0);
  const stream = new Uint8Array(streamBytes);
  streamFrames.reduce((offset, f) => (stream.set(f, offset), offset + f.length), 0);
  const chunks: Uint8Array[] = [];
  for (let i = 0; i < stream.length; i += 65536) chunks.push(stream.subarray(i, i + 65536));
  const splitAll = (codec: Codec) => (): void => {
    const splitter = codec.createFrameSplitter();
    for (const chunk of chunks) sink += splitter.push(chunk).length;
    sink += splitter.end().length;
  };
  const splitParameters = { streamBytes, frames: streamFrames.length, chunkBytes: 65536 };
  await ctx.measure('copy stream (slice every chunk)', () => {
    for (const chunk of chunks) sink += chunk.slice().length;
  }, { ...budget, parameters: splitParameters });
  if (previous.codec !== undefined) await ctx.measure('split stream: previous', splitAll(previous.codec), { ...budget, parameters: splitParameters });
  await ctx.measure('split stream', splitAll(current), {
    ...budget,
    parameters: splitParameters,
    ...(previous.codec === undefined ? {} : { baseline: 'split stream: previous' }),
  });
  const splitThenDecode = (codec: Codec, crcVerified: boolean) => (): void => {
    const splitter = codec.createFrameSplitter();
    for (const chunk of chunks) {
      for (const item of splitter.push(chunk) as { raw?: Uint8Array }[]) {
        if (item.raw !== undefined) sink += codec.decodeFrame(item.raw, { crcVerified }).frameSequence;
      }
    }
  };
  if (previous.codec !== undefined) {
    await ctx.measure('split + decode stream: previous', splitThenDecode(previous.codec, false), { ...budget, parameters: splitParameters });
  }
  await ctx.measure('split + decode stream (crcVerified)', splitThenDecode(current, true), {
    ...budget,
    parameters: splitParameters,
    ...(previous.codec === undefined ? {} : { baseline: 'split + decode stream: previous' }),
  });
  const megabytesPerSecond = (caseName: string): number => streamBytes / 1e6 / (ctx.cases.find((c) => c.name === caseName)!.medianCpuMillis / 1000);
  metrics['stream.bytes'] = streamBytes;
  metrics['stream.copyMegabytesPerSecond'] = megabytesPerSecond('copy stream (slice every chunk)');
  metrics['stream.splitMegabytesPerSecond'] = megabytesPerSecond('split stream');
  metrics['stream.splitDecodeMegabytesPerSecond'] = megabytesPerSecond('split + decode stream (crcVerified)');
  metrics['stream.splitDecodeMicrosPerFrame'] = (ctx.cases.find((c) => c.name === 'split + decode stream (crcVerified)')!.medianCpuMillis * 1000) / streamFrames.length;
  // Garbage: 'WWFR' repeated (a magic with a bad header every 4 bytes) in 64 KiB chunks, then
  // one frame. The splitter resynchronises on the next valid frame, so the whole stretch is one
  // rejection (discardedLength = the stretch, discarded = a 64 KiB sample). Not run on the
  // previous implementation: it yields one rejection per 4 bytes (2M items for 8 MiB).
  const garbageBytes = ctx.quick ? 1 << 20 : 8 << 20;
  const garbageStream = new Uint8Array(garbageBytes + streamFrames[0]!.length);
  for (let i = 0; i < garbageBytes; i++) garbageStream[i] = [0x57, 0x57, 0x46, 0x52][i % 4]!;
  garbageStream.set(streamFrames[0]!, garbageBytes);
  const garbageChunks: Uint8Array[] = [];
  for (let i = 0; i < garbageStream.length; i += 65536) garbageChunks.push(garbageStream.subarray(i, i + 65536));
  let garbageItems = 0;
  await ctx.measure('split garbage (WWFR repeated)', () => {
    const splitter = createFrameSplitter();
    garbageItems = 0;
    for (const chunk of garbageChunks) garbageItems += splitter.push(chunk).length;
    garbageItems += splitter.end().length;
    sink += garbageItems;
  }, { ...budget, parameters: { garbageBytes, chunkBytes: 65536 } });
  if (garbageItems !== 2) throw new Error(`split garbage: expected 1 rejection and 1 frame, got ${garbageItems} items`);
  metrics['garbage.bytes'] = garbageBytes;
  metrics['garbage.splitMegabytesPerSecond'] = garbageStream.length / 1e6 / (ctx.cases.find((c) => c.name === 'split garbage (WWFR repeated)')!.medianCpuMillis / 1000);
  if (previous.codec !== undefined) {
    metrics['stream.previousSplitMegabytesPerSecond'] = megabytesPerSecond('split stream: previous');
    metrics['stream.previousSplitDecodeMegabytesPerSecond'] = megabytesPerSecond('split + decode stream: previous');
    // Margins well below the measured speedups (CPU time on a shared 2-core machine varies ~20%).
    ctx.targetMinSpeedup('decode GroupSamples 4x32 (crcVerified)', 'decode GroupSamples 4x32: previous', 2.5, "collector's frame: decode at least 2.5x faster than before");
    ctx.targetMinSpeedup('encode GroupSamples 4x32', 'encode GroupSamples 4x32: previous', 1.5, 'encode GroupSamples 4x32 at least 1.5x faster than before');
    ctx.targetMinSpeedup('split + decode stream (crcVerified)', 'split + decode stream: previous', 2, 'split + decode at least 2x faster than before');
  }
  metrics.sink = sink % 1000;
  return { metrics };
}
