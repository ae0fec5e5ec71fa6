/**
 * The estimator bench's synthetic frames, shared by bench/estimator.bench.ts, the in-process
 * driver (bench/estimator-engine-driver.ts) and the golden-output test
 * (bench/engine-golden.test.ts): launch summaries of 64 groups × n=32 per stream from a
 * seeded generator, and GroupSamples frames whose clocks follow the divergence-cost model.
 */
import { CategoricalDistribution, createSeededRandom, sampleFamily, type RandomSource } from '../model/index.ts';
import { crc32c, encodeFrame, FRAME_HEADER_BYTES, type GroupSamplesFrame, type LaunchSummaryFrame } from '../protocol/index.ts';
import { syntheticLaunchSummary } from '../estimator/index.ts';
import { splitmix64 } from '../kernels/sampling-statistics.ts';

export const GROUP_SIZE = 32;
export const GROUPS_PER_LAUNCH = 64;
/** Sampled groups per GroupSamples frame (here every group of the 64-group launch: sampling stride 1). */
export const SAMPLED_GROUPS_PER_FRAME = 64;
/** Mixed backlog: one GroupSamples frame per this many launch summaries. */
export const SUMMARIES_PER_SAMPLES_FRAME = 4;
/** Clock model of the synthetic sampled groups, in ticks (ns, CPU backend): T per iteration, δ per diverging exit, per-group overhead, lane noise 0..3. */
export const ITERATION_TICKS = 40;
export const DIVERGING_EXIT_TICKS = 12;
export const GROUP_OVERHEAD_TICKS = 30;
/** GroupSamples frames get frameSequence = this + launch (a launch's summary has frameSequence = launch), so dedupe keeps both. */
export const SAMPLES_SEQUENCE_OFFSET = 2 ** 31;

export function templates(streams: number, seed: number): LaunchSummaryFrame[] {
  const random = createSeededRandom(seed);
  return Array.from({ length: streams }, (_, s) =>
    syntheticLaunchSummary({
      job: `bench${s}`,
      kernel: 'k',
      deviceName: 'synthetic',
      groupSize: GROUP_SIZE,
      source: 'cpu',
      launchId: 0n,
      frameSequence: 0,
      endMillis: 0,
      groups: GROUPS_PER_LAUNCH,
      distribution: CategoricalDistribution.fromPmf(new Map([[1 + (s % 7), 3], [10 + (s % 13), 2], [30, 1]])),
      random,
      measuredOverhead: 0.02,
      measuredNoise: 0.01,
    }),
  );
}

/**
 * The LaunchSummary frame of launch `launch` of a template: frameSequence `launch`, launchId
 * `launchId` (default: the launch number; the C++ recorder's are 64-bit hashes, see
 * {@link recorderLaunchId}), ending at `endMillis`.
 */
export function frameAt(template: LaunchSummaryFrame, launch: number, endMillis: number, launchId: bigint = BigInt(launch)): Buffer {
  const startUnixNanos = BigInt(endMillis - 1) * 1_000_000n;
  const endUnixNanos = BigInt(endMillis) * 1_000_000n;
  const patchable = Number.isInteger(launch) && launch >= 0 && launch <= 0xffff_ffff && launchId >= 0n && launchId < 2n ** 64n && startUnixNanos >= 0n && endUnixNanos < 2n ** 64n;
  if (!patchable) return Buffer.from(encodeFrame({ ...template, launchId, frameSequence: launch, startUnixNanos, endUnixNanos }));
  // The template encoded once, then a copy with the four fields that change written over it and
  // the checksum computed again: the latency case produces 20,000 frames/s on the machine it
  // measures, and encoding a whole frame takes ~2.8 µs against ~1 µs for the copy (5.6 % against
  // ~2 % of a core for the load generator; docs/estimator.md, Checkpoints in slices). Offsets:
  // protocol/SPEC.md, identity block.
  let encoded = encodedTemplates.get(template);
  if (encoded === undefined) {
    encoded = encodeFrame({ ...template, launchId: 0n, frameSequence: 0, startUnixNanos: 0n, endUnixNanos: 0n });
    encodedTemplates.set(template, encoded);
  }
  const out = Buffer.from(encoded);
  const h = FRAME_HEADER_BYTES;
  out.writeBigUInt64LE(launchId, h);
  out.writeUInt32LE(launch, h + 8);
  out.writeBigUInt64LE(startUnixNanos, h + 16);
  out.writeBigUInt64LE(endUnixNanos, h + 24);
  out.writeUInt32LE(crc32c(out.subarray(h)), 12);
  return out;
}

/** Templates already encoded by {@link frameAt} (held while the template is). */
const encodedTemplates = new WeakMap<LaunchSummaryFrame, Uint8Array>();

/**
 * A GroupSamples frame for a launch of `template`'s stream, every one of its groups sampled:
 * lane counts 1 + Poisson(λ_g) with λ_g = λ_s·(0.5 + U) per group (λ_s = 4..12 by stream; the
 * per-group factor makes counts correlated within a group), clocks consistent with the
 * divergence-cost model: lane finish = c0 + T·w + noise, end = c0 + T·max + δ·(distinct − 1) + overhead + noise.
 */
export function sampledGroupsFrame(template: LaunchSummaryFrame, stream: number, random: RandomSource): GroupSamplesFrame {
  const meanCount = 4 + (stream % 9);
  const noise = (): bigint => BigInt(random.nextInt(4));
  const groups = Array.from({ length: SAMPLED_GROUPS_PER_FRAME }, (_, g) => {
    const lambda = meanCount * (0.5 + random.nextFloat());
    const laneCounts = Array.from({ length: template.groupSize }, () => 1 + sampleFamily({ family: 'pois', lambda }, random));
    const max = Math.max(...laneCounts);
    const distinct = new Set(laneCounts).size;
    const startClock = 1_000_000n * BigInt(g + 1);
    return {
      groupIndex: g,
      startClock,
      endClock: startClock + BigInt(ITERATION_TICKS * max + DIVERGING_EXIT_TICKS * (distinct - 1) + GROUP_OVERHEAD_TICKS) + noise(),
      laneCounts,
      laneFinishClocks: laneCounts.map((w) => startClock + BigInt(ITERATION_TICKS * w) + noise()),
    };
  });
  const { job, kernel, launchId, frameSequence, source, groupSize, sync, device, startUnixNanos, endUnixNanos } = template;
  return {
    type: 'group-samples',
    job,
    kernel,
    launchId,
    frameSequence,
    source,
    groupSize,
    sync,
    device,
    startUnixNanos,
    endUnixNanos,
    groupCount: SAMPLED_GROUPS_PER_FRAME,
    selection: 'stride',
    samplingStride: 1,
    groups,
  };
}

/** `variants` GroupSamples frames per stream (of `templates(streams, …)`), from one seeded generator. */
export function samplesTemplates(summaryTemplates: readonly LaunchSummaryFrame[], variants: number, seed: number): GroupSamplesFrame[][] {
  const random = createSeededRandom(seed);
  return summaryTemplates.map((template, s) => Array.from({ length: variants }, () => sampledGroupsFrame(template, s, random)));
}

/**
 * A launchId as the C++ recorder makes them (splitmix64 of a clock and a counter: any u64), here
 * splitmix64 of (stream, launch), so runs repeat.
 */
export function recorderLaunchId(stream: number, launch: number): bigint {
  let z = (BigInt(stream) * 0x100000000n + BigInt(launch) + 0x9e3779b97f4a7c15n) & 0xffffffffffffffffn;
  z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & 0xffffffffffffffffn;
  z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & 0xffffffffffffffffn;
  return z ^ (z >> 31n);
}

/** The GroupSamples frame of launch `launch` (same launchId and event time as its summary from frameAt). */
export function samplesFrameAt(template: GroupSamplesFrame, launch: number, endMillis: number, launchId: bigint = BigInt(launch)): Buffer {
  return Buffer.from(
    encodeFrame({
      ...template,
      launchId,
      frameSequence: SAMPLES_SEQUENCE_OFFSET + launch,
      startUnixNanos: BigInt(endMillis - 1) * 1_000_000n,
      endUnixNanos: BigInt(endMillis) * 1_000_000n,
    }),
  );
}

/** The recorder's default group sampling: hash selection of 1 group in 64 (docs/kernels.md, "Group sampling"). */
export const DEFAULT_SAMPLING_STRIDE = 64;

/**
 * The GroupSamples frame a recorder at its default sampling writes for launch `launch` of
 * `template`'s stream: of the launch's groups (the template's 64), those with
 * splitmix64(launchId ^ g) mod 64 = 0 (SPEC.md, selection `hash`), about one per launch, with how
 * many it holds; undefined when the hash picks none (the recorder then writes no GroupSamples frame).
 */
export function defaultRateSamplesFrameAt(template: GroupSamplesFrame, launch: number, endMillis: number, launchId: bigint = BigInt(launch)): { bytes: Buffer; groups: number } | undefined {
  const stride = BigInt(DEFAULT_SAMPLING_STRIDE);
  const groups = template.groups.filter((group) => splitmix64(launchId ^ BigInt(group.groupIndex)) % stride === 0n);
  if (groups.length === 0) return undefined;
  const bytes = Buffer.from(
    encodeFrame({
      ...template,
      selection: 'hash',
      samplingStride: DEFAULT_SAMPLING_STRIDE,
      groups,
      launchId,
      frameSequence: SAMPLES_SEQUENCE_OFFSET + launch,
      startUnixNanos: BigInt(endMillis - 1) * 1_000_000n,
      endUnixNanos: BigInt(endMillis) * 1_000_000n,
    }),
  );
  return { bytes, groups: groups.length };
}
