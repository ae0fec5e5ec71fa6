/**
 * Golden outputs of the estimator engine (docs/estimator.md, Performance): fixed, seeded frames
 * run through `createEstimatorEngine` under three option sets, and everything the engine hands
 * out — points, distribution records, alerts, quarantine records and each message's outcome —
 * written as JSON lines. bench/engine-golden.test.ts checks that the engine reproduces the
 * committed file bench/golden/engine-outputs.jsonl byte for byte, so an optimisation of the hot
 * path cannot change a number (JSON.stringify writes the shortest text that reads back to the
 * same double: equal text is equal bits).
 *
 *     npx tsx bench/engine-golden.ts --write   # re-capture (only when a change of output is intended)
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CategoricalDistribution, createSeededRandom } from '../model/index.ts';
import type { LaunchSummaryFrame } from '../protocol/index.ts';
import { encodeWireRecord } from '../contracts/index.ts';
import { createEstimatorEngine, modelFitter, syntheticLaunchSummary, type EngineOptions } from '../estimator/index.ts';
import { testEngineOptions } from '../estimator/testing/test-support.ts';
import { frameAt, samplesFrameAt, samplesTemplates, templates } from './estimator-frames.ts';

/** Where the committed golden outputs live. */
export const GOLDEN_PATH = fileURLToPath(new URL('./golden/engine-outputs.jsonl', import.meta.url));

const STREAMS = 8;
const LAUNCHES = 40;
const LAUNCH_SPACING_MILLIS = 100;
const START_MILLIS = 1_700_000_000_000;
/** Fixed wall clock: after every frame's event time (so none is `future`). */
const WALL_MILLIS = START_MILLIS + 3_600_000;
/** The wall clock advances this much per message (idle close in the evicting scenario). */
const WALL_STEP_MILLIS = 10;

/** Launch summaries of stream `s`, three variants (different draws) plus a heavy-tailed one for the shift. */
function streamTemplates(): { variants: LaunchSummaryFrame[][]; shifted: LaunchSummaryFrame[] } {
  const sets = [templates(STREAMS, 101), templates(STREAMS, 202), templates(STREAMS, 303)];
  const variants = Array.from({ length: STREAMS }, (_, s) => sets.map((set) => set[s]!));
  const random = createSeededRandom(404);
  const shifted = variants.map((own) =>
    syntheticLaunchSummary({
      job: own[0]!.job,
      kernel: 'k',
      deviceName: 'synthetic',
      groupSize: 32,
      source: 'cpu',
      launchId: 0n,
      frameSequence: 0,
      endMillis: 0,
      groups: 64,
      distribution: CategoricalDistribution.fromPmf(new Map([[1, 6], [80, 1]])),
      random,
      measuredOverhead: 0.3,
      measuredNoise: 0.05,
    }),
  );
  return { variants, shifted };
}

interface Message {
  /** Stream s lives in partition s mod 3. */
  readonly partition: number;
  readonly bytes: Uint8Array;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * The golden messages, in partition order: per launch every stream's summary (streams 0 mod 4
 * switch to a heavy-tailed distribution half-way, which raises alerts), a GroupSamples frame
 * for every 4th launch of the odd streams, a duplicate of every 10th frame, a late frame now
 * and then, collector headers on stream 1, the last stream idle after launch 24, and a frame
 * that does not decode.
 */
function goldenMessages(): Message[] {
  const { variants, shifted } = streamTemplates();
  const samples = samplesTemplates(variants.map((v) => v[0]!), 3, 505);
  const messages: Message[] = [];
  for (let launch = 0; launch < LAUNCHES; launch += 1) {
    const endMillis = START_MILLIS + launch * LAUNCH_SPACING_MILLIS;
    for (let s = 0; s < STREAMS; s += 1) {
      if (s === STREAMS - 1 && launch >= 24) continue; // goes idle: closed by tick()
      const template = s % 4 === 0 && launch >= LAUNCHES / 2 ? shifted[s]! : variants[s]![launch % 3]!;
      const k = launch * STREAMS + s;
      const bytes = frameAt(template, k, endMillis);
      const partition = s % 3;
      messages.push(s === 1 ? { partition, bytes, headers: { 'ww-host': 'node7', 'ww-label-pod': 'trainer-0' } } : { partition, bytes });
      if (k % 10 === 3) messages.push({ partition, bytes });
      if (s % 2 === 1 && launch % 4 === 1) messages.push({ partition, bytes: samplesFrameAt(samples[s]![launch % 3]!, k, endMillis) });
      if (launch % 12 === 11 && s === 5) messages.push({ partition, bytes: frameAt(template, 900_000 + k, endMillis - 2_500) });
    }
    if (launch === 20) messages.push({ partition: 0, bytes: new Uint8Array([0x57, 0x57, 1, 2, 3]) });
  }
  return messages;
}

/** The option sets: the bench's engine case, a current/bootstrap/Monte Carlo one with eviction, a cumulative one with the fitter. */
function optionSets(): { name: string; options: EngineOptions; tickEvery?: number }[] {
  const base = testEngineOptions();
  return [
    { name: 'window-basis', options: testEngineOptions({ compute: { ...base.compute, bootstrapReplicates: 32, quantileSamples: 10_000 } }), tickEvery: 37 },
    {
      name: 'current-bootstrap-montecarlo-evicting',
      options: testEngineOptions({
        window: { ...base.window, predictionBasis: 'current' },
        maxLiveStreams: 7,
        tagLabels: ['pod'],
        compute: { ...base.compute, histogramPoints: false, standardErrorMethod: 'bootstrap', bootstrapReplicates: 16, quantileExactWorkLimit: 0, quantileSamples: 500 },
        alerts: { ...base.alerts, lossMeasuredThreshold: 6, driftThreshold: 0.25 },
      }),
      tickEvery: 37,
    },
    {
      name: 'cumulative-fitted-2s',
      options: testEngineOptions({
        window: { ...base.window, predictionBasis: 'cumulative', windowMillis: 2_000 },
        compute: { ...base.compute, bootstrapReplicates: 32, fit: true },
        fitter: modelFitter,
      }),
    },
  ];
}

/** Text of a value with bigints written as strings and byte arrays as hex. */
function stringify(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v instanceof Uint8Array ? Buffer.from(v).toString('hex') : v));
}

/**
 * Runs every golden scenario through the engine and returns the outputs as JSON lines.
 *
 * @example goldenOutputs() === readFileSync(GOLDEN_PATH, 'utf8') // true while outputs are unchanged
 */
export function goldenOutputs(): string {
  const messages = goldenMessages();
  const lines: string[] = [];
  for (const { name, options, tickEvery } of optionSets()) {
    lines.push(stringify({ scenario: name }));
    const engine = createEstimatorEngine(
      options,
      {
        writePoints: (points) => lines.push(stringify({ points })),
        // The records as the Kafka adapter encodes them (contracts/wire-records.ts).
        publishDistribution: (key, record) => lines.push(stringify({ distribution: key, value: encodeWireRecord(record) })),
        publishAlert: (key, record) => lines.push(stringify({ alert: key, value: encodeWireRecord(record) })),
        quarantine: (record) => lines.push(stringify({ quarantine: record })),
      },
      { frame: () => {}, windowClosed: () => {}, modelError: (error, key) => lines.push(stringify({ modelError: key, error: String(error) })), alertRaised: () => {} },
    );
    messages.forEach((message, i) => {
      const outcome = engine.handleMessage(message.partition, String(i), message.bytes, WALL_MILLIS + WALL_STEP_MILLIS * i, message.headers);
      lines.push(stringify({ offset: i, outcome }));
      // Idle close: streams that recorded within the last ~20 messages are not idle, the one that stopped is.
      if (tickEvery !== undefined && i % tickEvery === tickEvery - 1) lines.push(stringify({ tick: i, closed: engine.tick(WALL_MILLIS + WALL_STEP_MILLIS * i + 500, () => WALL_MILLIS + WALL_STEP_MILLIS * i + 500) }));
    });
    lines.push(stringify({ closeAll: engine.closeAll() }));
  }
  return `${lines.join('\n')}\n`;
}

if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv.includes('--write')) {
  const text = goldenOutputs();
  writeFileSync(GOLDEN_PATH, text);
  console.log(`wrote ${GOLDEN_PATH}: ${text.split('\n').length - 1} lines, ${text.length} bytes`);
}
