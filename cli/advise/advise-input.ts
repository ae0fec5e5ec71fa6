import { runsByLaunchOf } from '../../analysis/index.ts';
import { matchesStreamFilter, NIL_UUID, streamKeyOf, type StreamIdentity } from '../../contracts/index.ts';
import type { EstimatorKafkaSecurity } from '../../estimator/index.ts';
import { anyTcpReachable, kafkaTlsFailure, unreachableServerHint } from '../../service/index.ts';
import type { DistributionRecord } from '../../contracts/index.ts';
import { CPU_WORKLOAD_TARGETS, ensureKernelsBuilt, streamWorkloadFrames, WorkloadError } from '../../kernels/index.ts';
import { CategoricalDistribution, createSampledGroups, ModelError, parseDistributionSpec, recordSampledGroup, summarizeSampledGroups } from '../../model/index.ts';
import { decodeFrame, histogramToCounts, streamIdOf, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { samplesObservationFromFrame } from '../../estimator/index.ts';
import { readTraceFile, readWeightsFile, type WeightKind } from '../counts-file.ts';
import { readFrameFile, type FrameFileRead } from '../frame-file.ts';
import { scanDistributions } from '../distributions-reader.ts';
import { UsageError } from '../usage-error.ts';
import { AdviseError } from './errors.ts';

/** A distribution to advise on, with what its source says about the kernel. */
export interface AdviseInput {
  readonly distribution: CategoricalDistribution;
  /** Human-readable origin ('counts:FILE', 'frames:FILE job/kernel', 'stream job/kernel', ...). */
  readonly source: string;
  /** Group size the data was recorded with, when the source says. */
  readonly groupSize: number | undefined;
  /** Units per launch, when the source says. */
  readonly unitsPerLaunch: number | undefined;
  /** Mean H of the observed groups from their counts (loss_counts), when the source measured groups at `groupSize`. */
  readonly observedLossCounts: number | undefined;
  /** Intra-group correlation of iteration counts over sampled groups (GroupSamples), when the source has samples. */
  readonly observedCountIcc?: number | undefined;
  /** The sampled groups' lane counts in lane order: contiguous runs for the locality-aware loss (docs/model.md §11). */
  readonly runs?: readonly (readonly number[])[] | undefined;
  /** The same runs grouped by launch (in launch order), for the what-ifs on the runs' units that sort within a launch. */
  readonly runsByLaunch?: readonly (readonly (readonly number[])[])[] | undefined;
  /** A per-unit counts trace in unit order (`--trace FILE`). */
  readonly trace?: readonly number[] | undefined;
  /** Block runs (GroupSamples with selection `block`): complete sampled blocks' unit counts in unit order (docs/model.md §11a). */
  readonly blocks?: readonly (readonly number[])[] | undefined;
  /** With `--frames`: what was read of the file, damaged stretches skipped included (cli/frame-file.ts). */
  readonly frameFile?: FrameFileRead | undefined;
}

/** Adds LaunchSummary histograms into one count map (bins beyond 1023 at their representative). */
function countsOfSummaries(summaries: readonly LaunchSummaryFrame[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const frame of summaries) for (const [value, count] of histogramToCounts(frame.histogram)) counts.set(value, (counts.get(value) ?? 0) + count);
  return counts;
}

function commonGroupSize(summaries: readonly LaunchSummaryFrame[]): number | undefined {
  const sizes = new Set(summaries.map((f) => f.groupSize));
  return sizes.size === 1 ? [...sizes][0] : undefined;
}

function observedLossCountsOf(summaries: readonly LaunchSummaryFrame[]): number | undefined {
  const groups = summaries.reduce((sum, f) => sum + f.groupsCounted, 0);
  return commonGroupSize(summaries) === undefined || groups === 0 ? undefined : summaries.reduce((sum, f) => sum + f.sumCountsLoss, 0) / groups;
}

/** ICC of iteration counts over the GroupSamples of one group size (model/related/sampled-groups.ts); undefined without samples. */
function countIccOf(samples: readonly GroupSamplesFrame[], groupSize: number | undefined): number | undefined {
  if (groupSize === undefined) return undefined;
  const accumulation = createSampledGroups();
  for (const frame of samples) {
    if (frame.groupSize !== groupSize) continue;
    for (const group of samplesObservationFromFrame(frame).groups) recordSampledGroup(accumulation, group);
  }
  return summarizeSampledGroups(accumulation, groupSize)?.countIcc;
}

function unitsPerLaunchOf(summaries: readonly LaunchSummaryFrame[]): number | undefined {
  if (summaries.length === 0) return undefined;
  // groupsCounted: the groups the summary measured. groupCount also counts the groups of
  // launches a sampling recorder left out (docs/kernels.md), K times one launch under 1 in K.
  const units = summaries.reduce((sum, f) => sum + f.groupsCounted * f.groupSize, 0);
  return Math.max(1, Math.round(units / summaries.length));
}

/**
 * Reads a counts file (`--counts`: JSON `{"value": count}`, a JSON array of per-unit counts or
 * CSV `value,count`) or a pmf file (`--pmf`, probabilities or weights), the parser of
 * `warpwatch model` (cli/counts-file.ts).
 *
 * @throws UsageError when the file is missing or malformed.
 * @example adviseInputFromCounts('counts.json').distribution.mean()
 */
export function adviseInputFromCounts(file: string, kind: WeightKind = 'counts'): AdviseInput {
  return { distribution: readWeightsFile(file, kind), source: `${kind}:${file}`, groupSize: undefined, unitsPerLaunch: undefined, observedLossCounts: undefined };
}

/**
 * A family spec as input (what-if for a hypothesised distribution).
 *
 * @throws UsageError when the spec does not parse.
 * @example adviseInputFromSpec('nbinom(5,0.3)')
 */
export function adviseInputFromSpec(text: string): AdviseInput {
  try {
    const spec = parseDistributionSpec(text);
    return { distribution: CategoricalDistribution.fromFamily(spec), source: `dist:${text}`, groupSize: undefined, unitsPerLaunch: undefined, observedLossCounts: undefined };
  } catch (error) {
    if (error instanceof ModelError) throw new UsageError(`--dist: ${error.message}`, { cause: error });
    throw error;
  }
}

/**
 * Reads a recorded frame file (what `--out FILE` of a workload or the recorder writes) and
 * merges the histograms of its LaunchSummary frames. With several streams in the file,
 * `streamId` must pick one. Damaged stretches are skipped up to the next valid frame and said
 * on stderr (cli/frame-file.ts); `frameFile` of the result counts them.
 *
 * @throws UsageError when the file cannot be read, holds no valid frame, no LaunchSummary,
 *   or several streams and no (or an unknown) `streamId`.
 * @example adviseInputFromFrames('frames.bin', 'local/matpow')
 */
export function adviseInputFromFrames(file: string, streamId: string | undefined): AdviseInput {
  // Damaged stretches are skipped and said on stderr (the caller decides the exit code).
  const frameFile = readFrameFile(file, `--frames file '${file}'`);
  const frames = frameFile.frames;
  const summaries = frames.filter((f): f is LaunchSummaryFrame => f.type === 'launch-summary');
  const streams = [...new Set(summaries.map(streamIdOf))].sort();
  if (streams.length === 0) throw new UsageError(`--frames file '${file}' holds no LaunchSummary frame (${frames.length} frames in all)`);
  let chosen = streams[0] ?? '';
  if (streamId !== undefined) {
    if (!streams.includes(streamId)) throw new UsageError(`--stream '${streamId}' is not in '${file}'; it holds ${streams.join(', ')}`);
    chosen = streamId;
  } else if (streams.length > 1) {
    throw new UsageError(`--frames file '${file}' holds ${streams.length} streams (${streams.join(', ')}); pick one with --stream`);
  }
  const selected = summaries.filter((f) => streamIdOf(f) === chosen);
  const samples = frames.filter((f): f is GroupSamplesFrame => f.type === 'group-samples' && streamIdOf(f) === chosen);
  const counts = countsOfSummaries(selected);
  if (counts.size === 0) throw new UsageError(`--frames file '${file}': stream ${chosen} counted no groups`);
  return {
    distribution: CategoricalDistribution.fromCounts(counts),
    source: `frames:${file} ${chosen} (${selected.length} launches)`,
    groupSize: commonGroupSize(selected),
    unitsPerLaunch: unitsPerLaunchOf(selected),
    observedLossCounts: observedLossCountsOf(selected),
    observedCountIcc: countIccOf(samples, commonGroupSize(selected)),
    runs: samples.flatMap((frame) => frame.groups.map((group) => group.laneCounts)),
    runsByLaunch: runsByLaunchOf(samples),
    blocks: samples.filter((frame) => frame.groupSize === commonGroupSize(selected)).flatMap((frame) => samplesObservationFromFrame(frame).blocks ?? []),
    frameFile,
  };
}

/**
 * A per-unit counts trace in unit order (`advise --trace FILE`, cli/counts-file.ts
 * {@link readTraceFile}): its distribution, and the trace itself for the layout loss of every
 * n′ that divides its length and the what-ifs on its units (docs/model.md §11c).
 *
 * @throws UsageError when the file is missing or malformed (WW_ERR_USAGE).
 * @example adviseInputFromTrace('trace.csv').trace?.length
 */
export function adviseInputFromTrace(file: string): AdviseInput {
  const trace = readTraceFile(file);
  const counts = new Map<number, number>();
  for (const w of trace) counts.set(w, (counts.get(w) ?? 0) + 1);
  return {
    distribution: CategoricalDistribution.fromCounts(counts),
    source: `trace:${file} (${trace.length} units)`,
    groupSize: undefined,
    unitsPerLaunch: trace.length,
    observedLossCounts: undefined,
    trace,
  };
}

/** Which histogram of a warpwatch.distributions record to use. */
export type DistributionBasis = 'window' | 'current' | 'cumulative';

/**
 * The distribution of one stream from its estimator record: [low, high, weight] entries,
 * exact values as they are and bins at their middle value.
 *
 * @throws AdviseError WW_ERR_ADVISE_INPUT when the chosen histogram is empty.
 * @example adviseInputFromRecord(record, 'cumulative')
 */
export function adviseInputFromRecord(record: DistributionRecord, basis: DistributionBasis): AdviseInput {
  const entries = basis === 'window' ? record.window.entries : basis === 'current' ? record.current.entries : record.cumulative.entries;
  const counts = new Map<number, number>();
  for (const [low, high, weight] of entries) {
    const value = low === high ? low : Math.round((low + high) / 2);
    if (weight > 0) counts.set(value, (counts.get(value) ?? 0) + weight);
  }
  if (counts.size === 0) throw new AdviseError('WW_ERR_ADVISE_INPUT', `the ${basis} distribution of ${record.stream} (n=${record.groupSize}) is empty`);
  return {
    distribution: CategoricalDistribution.fromCounts(counts),
    source: `stream ${record.stream} (${record.device}, n=${record.groupSize}, ${basis} distribution, updated ${new Date(record.updatedAtMillis).toISOString()})`,
    groupSize: record.groupSize,
    unitsPerLaunch: record.window.launches > 0 ? Math.max(1, Math.round(record.window.units / record.window.launches)) : undefined,
    observedLossCounts: record.predictions.lossCounts ?? undefined,
    observedCountIcc: record.sampled?.countIcc ?? undefined,
  };
}

/** What `advise --stream` selects with: the stream id and, optionally, its n, device and host. */
export interface StreamSelection {
  /** `<job>/<kernel>`. */
  readonly stream: string;
  readonly groupSize?: number | undefined;
  /** Device UUID or model name. */
  readonly device?: string | undefined;
  readonly host?: string | undefined;
}

/** The identity of a distributions record (older records lack UUID, host and labels). */
function identityOfRecord(record: DistributionRecord): StreamIdentity {
  return {
    stream: record.stream,
    job: record.job,
    kernel: record.kernel,
    groupSize: record.groupSize,
    source: record.source,
    device: record.device,
    deviceUuid: record.deviceUuid ?? NIL_UUID,
    host: record.host ?? '',
    labels: record.labels ?? {},
  };
}

/**
 * Picks the latest record of the one stream a selection names, among warpwatch.distributions
 * records (one per full stream key: job/kernel, n, source, device UUID, host).
 *
 * @throws AdviseError WW_ERR_ADVISE_STREAM_NOT_FOUND when no record matches,
 *   WW_ERR_ADVISE_STREAM_AMBIGUOUS when records of several streams match (the message lists
 *   them and the flags that tell them apart: --n, --device, --host)
 * @example selectStreamRecord(records, { stream: 'train/matpow', groupSize: 32 })
 */
export function selectStreamRecord(records: readonly DistributionRecord[], selection: StreamSelection, where: string): DistributionRecord {
  const latestByKey = new Map<string, DistributionRecord>();
  for (const record of records) {
    const identity = identityOfRecord(record);
    if (!matchesStreamFilter(identity, selection)) continue;
    const key = record.key ?? streamKeyOf(identity);
    const seen = latestByKey.get(key);
    if (seen === undefined || record.updatedAtMillis > seen.updatedAtMillis) latestByKey.set(key, record);
  }
  const candidates = [...latestByKey.values()].sort((a, b) => b.updatedAtMillis - a.updatedAtMillis);
  const filters = [selection.groupSize === undefined ? '' : ` --n ${selection.groupSize}`, selection.device === undefined ? '' : ` --device ${selection.device}`, selection.host === undefined ? '' : ` --host ${selection.host}`].join('');
  if (candidates.length === 0) {
    throw new AdviseError('WW_ERR_ADVISE_STREAM_NOT_FOUND', `no record of stream '${selection.stream}'${filters} on ${where}; is the estimator running and has it closed a window?`);
  }
  if (candidates.length > 1) {
    const lines = candidates.map((r) => {
      const id = identityOfRecord(r);
      return `  --n ${id.groupSize} --device ${id.deviceUuid} (${id.device}) --host ${id.host === '' ? "''" : id.host}  updated ${new Date(r.updatedAtMillis).toISOString()}`;
    });
    throw new AdviseError(
      'WW_ERR_ADVISE_STREAM_AMBIGUOUS',
      `stream '${selection.stream}'${filters} names ${candidates.length} streams on ${where}; add flags to pick one:\n${lines.join('\n')}`,
    );
  }
  return candidates[0] as DistributionRecord;
}

/**
 * Reads the latest warpwatch.distributions record of the one stream a selection names.
 *
 * @throws AdviseError WW_ERR_ADVISE_STREAM_NOT_FOUND, WW_ERR_ADVISE_STREAM_AMBIGUOUS (see
 *   {@link selectStreamRecord}), WW_ERR_ADVISE_KAFKA when Kafka cannot be read.
 * @example await adviseInputFromStream({ brokers: ['127.0.0.1:19092'], topic: 'warpwatch.distributions' }, { stream: 'job/kernel', groupSize: 32 }, 'cumulative')
 */
export async function adviseInputFromStream(
  kafka: { readonly brokers: readonly string[]; readonly topic: string; readonly security?: EstimatorKafkaSecurity | undefined },
  selection: StreamSelection,
  basis: DistributionBasis,
  timeoutMillis = 20_000,
): Promise<AdviseInput> {
  let records: DistributionRecord[];
  // No broker accepting a connection is known in at most 2 s per broker; the Kafka client
  // would retry for most of a minute before saying so.
  if (!(await anyTcpReachable(kafka.brokers))) {
    throw new AdviseError('WW_ERR_ADVISE_KAFKA', `cannot read ${kafka.topic} on ${kafka.brokers.join(',')}: no broker accepts a connection; ${unreachableServerHint('kafka', kafka.brokers.join(','))}`, { retriable: true });
  }
  try {
    records = await scanDistributions({ brokers: kafka.brokers, topic: kafka.topic, clientId: 'warpwatch-advise', security: kafka.security }, (r) => r.stream === selection.stream, timeoutMillis);
  } catch (error) {
    // Said once (the adapter's message may already name the topic and brokers), with what to try.
    const where = `${kafka.topic} on ${kafka.brokers.join(',')}`;
    const reason = (error as Error).message.replace(`cannot read ${where}: `, '');
    // A failed TLS handshake reached the broker: say what to change about the certificates (docs/security.md).
    const tls = kafkaTlsFailure(error);
    if (tls !== undefined) throw new AdviseError('WW_ERR_ADVISE_KAFKA', `cannot read ${where}: TLS handshake failed: ${tls}`, { cause: error, retriable: false });
    const hint = unreachableServerHint('kafka', kafka.brokers.join(','));
    throw new AdviseError('WW_ERR_ADVISE_KAFKA', `cannot read ${where}: ${reason}; ${hint}`, { cause: error, retriable: true });
  }
  return adviseInputFromRecord(selectStreamRecord(records, selection, `${kafka.topic} (${kafka.brokers.join(',')})`), basis);
}

/**
 * Runs a CPU workload (kernels/, built if needed) and takes the distribution of its
 * LaunchSummary frames.
 *
 * @throws UsageError when the workload rejects its flags (exit 2); WorkloadError (kernels/,
 *   WW_ERR_KERNELS_WORKLOAD_FAILED) when it is missing, fails or prints no report.
 * @example await adviseInputFromWorkload({ workload: 'matpow', args: ['--dist', 'pois(30)', '--n', '32'] })
 */
export async function adviseInputFromWorkload(options: { readonly workload: 'matpow' | 'escape'; readonly args: readonly string[]; readonly onBuildLine?: (line: string) => void }): Promise<AdviseInput> {
  const { binDir } = await ensureKernelsBuilt({ targets: CPU_WORKLOAD_TARGETS, tests: false, ...(options.onBuildLine === undefined ? {} : { onProgress: options.onBuildLine }) });
  const summaries: LaunchSummaryFrame[] = [];
  const samples: GroupSamplesFrame[] = [];
  let run;
  try {
    run = await streamWorkloadFrames({
      binDir,
      workload: options.workload,
      args: options.args,
      onFrame: (raw) => {
        const frame = decodeFrame(raw);
        if (frame.type === 'launch-summary') summaries.push(frame);
        else samples.push(frame);
      },
    });
  } catch (error) {
    // The program exits 2 on bad flags (failure `usage`); its message names them.
    if (error instanceof WorkloadError && error.failure === 'usage') throw new UsageError(error.message, { cause: error });
    throw error;
  }
  const counts = countsOfSummaries(summaries);
  if (counts.size === 0) throw new AdviseError('WW_ERR_ADVISE_INPUT', `the ${options.workload} run wrote no LaunchSummary frame`);
  return {
    distribution: CategoricalDistribution.fromCounts(counts),
    source: `workload ${options.workload} ${options.args.join(' ')} (CPU, ${run.report.groups} groups)`,
    groupSize: commonGroupSize(summaries),
    unitsPerLaunch: unitsPerLaunchOf(summaries),
    observedLossCounts: observedLossCountsOf(summaries),
    observedCountIcc: countIccOf(samples, commonGroupSize(summaries)),
    runs: samples.flatMap((frame) => frame.groups.map((group) => group.laneCounts)),
    runsByLaunch: runsByLaunchOf(samples),
  };
}
