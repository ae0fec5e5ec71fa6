// End to end: CPU-backend matpow with two distributions → `warpwatch collect
// --replay` → Kafka → `warpwatch estimate` → InfluxDB, checked with InfluxQL: loss_predicted
// agrees with loss_counts within sampling error (matpow draws every unit's exponent
// independently, so the model's i.i.d. assumption holds), and loss_measured is present and
// plausible. Also reads the stream's record back from warpwatch.distributions.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CategoricalDistribution, createCategoricalSampler, createSeededRandom, groupLoss, parseDistributionSpec } from '../../model/index.ts';
import { MEASUREMENTS, type DistributionRecord } from '../../contracts/index.ts';
import {
  brokers,
  createDatabase,
  dropDatabase,
  estimatorEnv,
  influxQuery,
  kafkaClient,
  spawnEstimator,
  stopChild,
  uniqueId,
  waitUntil,
  type EstimatorChild,
} from './estimator-support.ts';

const GROUPS = 512;
const LAUNCHES = 2;
const N = 32;
const RUNS = [
  { job: 'e2epois', dist: 'pois(30)', seed: '1' },
  { job: 'e2ecat', dist: 'cat(2:3,40:1)', seed: '2' },
] as const;

const directory = mkdtempSync(join(tmpdir(), 'ww-estimator-e2e-'));
const children: EstimatorChild[] = [];
let database: string | undefined;

afterAll(async () => {
  await Promise.all(children.map((child) => stopChild(child, 'SIGKILL')));
  if (database !== undefined) await dropDatabase(database).catch(() => undefined);
  rmSync(directory, { recursive: true, force: true });
});

/** Standard deviation of the per-group loss X for a distribution, by seeded Monte Carlo (independent of the estimator). */
function lossStandardDeviation(spec: string): number {
  const sample = createCategoricalSampler(CategoricalDistribution.fromFamily(parseDistributionSpec(spec)));
  const random = createSeededRandom(99);
  const lanes = new Array<number>(N).fill(0);
  let sum = 0;
  let squares = 0;
  const groups = 20_000;
  for (let g = 0; g < groups; g += 1) {
    for (let i = 0; i < N; i += 1) lanes[i] = sample(random);
    const h = groupLoss(lanes);
    sum += h;
    squares += h * h;
  }
  const mean = sum / groups;
  return Math.sqrt(squares / groups - mean * mean);
}

function cli(args: string[], env: Record<string, string> = {}): string {
  const result = spawnSync(process.execPath, ['bin/warpwatch.mjs', ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 240_000 });
  if (result.status !== 0) throw new Error(`warpwatch ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

describe('warpwatch estimate (end to end)', () => {
  it('matpow on the CPU backend → collector → Kafka → estimator → InfluxDB gives loss_predicted ≈ loss_counts and a plausible loss_measured', async () => {
    const id = uniqueId('wwe2e');
    database = id;
    await createDatabase(id);
    const files = RUNS.map((run) => {
      const file = join(directory, `${run.job}.wwf`);
      cli(['run', 'matpow', '--backend', 'cpu', '--dist', run.dist, '--n', String(N), '--groups', String(GROUPS), '--launches', String(LAUNCHES), '--seed', run.seed, '--job', run.job, '--selection', 'stride', '--out', file]);
      return file;
    });

    // One window per stream: windows of 10 minutes (the runs take seconds).
    const env = estimatorEnv(id, id, `${id}-group`, { WARPWATCH_WINDOW_MILLIS: '600000', WARPWATCH_IDLE_CLOSE_MILLIS: '1500', WARPWATCH_BOOTSTRAP_REPLICATES: '32' });
    const estimator = spawnEstimator(env, 'e2e');
    children.push(estimator);
    await estimator.waitForLog(/group .* on /, 60_000);

    cli(['collect', '--replay', ...files, '--brokers', brokers(), '--metrics-port', 'off', '--spool-dir', join(directory, 'spool')], {
      WARPWATCH_FRAMES_TOPIC: `${id}.frames`,
      WARPWATCH_DLQ_TOPIC: `${id}.dlq`,
    });

    const groupsOf = async (): Promise<Map<string, number>> => {
      const series = await influxQuery(id, `SELECT sum("groups") FROM "${MEASUREMENTS.window}" GROUP BY stream`);
      return new Map(series.map((s) => [s.tags?.stream ?? '', Number(s.values[0]?.[1] ?? 0)]));
    };
    await waitUntil(
      async () => {
        const groups = await groupsOf();
        return RUNS.every((run) => groups.get(`${run.job}/matpow`) === GROUPS * LAUNCHES);
      },
      120_000,
      'both streams in InfluxDB with every group',
    );

    for (const run of RUNS) {
      const stream = `${run.job}/matpow`;
      const rows = await influxQuery(
        id,
        `SELECT "loss_predicted", "loss_predicted_low", "loss_predicted_high", "loss_counts", "loss_measured", "workload_loss_measured", "groups", "units", "launches", "eta_predicted_counts" FROM "${MEASUREMENTS.window}" WHERE stream = '${stream}'`,
      );
      const series = rows[0];
      expect(series).toBeDefined();
      const sd = lossStandardDeviation(run.dist);
      for (const values of series?.values ?? []) {
        const row = Object.fromEntries((series?.columns ?? []).map((column, i) => [column, values[i]])) as Record<string, number>;
        const groups = row.groups ?? 0;
        // μ_S is a mean over `groups` groups of X: its sampling error is sd(X)/√groups (4σ tolerance);
        // μ_A from ~groups·32 lanes has a smaller error of its own, covered by the same allowance.
        const tolerance = (4 * sd) / Math.sqrt(groups) + 0.005;
        expect(Math.abs((row.loss_predicted ?? 0) - (row.loss_counts ?? 0))).toBeLessThan(tolerance);
        expect(row.loss_predicted_low).toBeLessThanOrEqual(row.loss_predicted ?? 0);
        expect(row.loss_predicted_high).toBeGreaterThanOrEqual(row.loss_predicted ?? 0);
        expect(row.units).toBe(groups * N);
        // Measured on CPU SIMD lanes: present, a valid loss, and close to the count-based loss
        // (the CPU backend adds little beyond lockstep; 25 % leaves room for noisy neighbours).
        expect(row.loss_measured).toBeGreaterThanOrEqual(1);
        expect(row.loss_measured).toBeLessThanOrEqual(N);
        expect(Math.abs((row.loss_measured ?? 0) - (row.loss_counts ?? 0)) / (row.loss_counts ?? 1)).toBeLessThan(0.25);
        expect(row.workload_loss_measured).toBeGreaterThanOrEqual(1);
      }
      // GroupSamples: stride (asked for above, so the count is exact; matpow's i.i.d. lanes cannot
      // alias) samples every 64th group (512 groups → 8 per launch).
      const sampled = await influxQuery(id, `SELECT "groups", "loss_measured", "lane_idle_fraction", "count_icc" FROM "${MEASUREMENTS.samples}" WHERE stream = '${stream}'`);
      const samplesRow = Object.fromEntries((sampled[0]?.columns ?? []).map((column, i) => [column, sampled[0]?.values[0]?.[i]])) as Record<string, number>;
      expect(samplesRow.groups).toBe((GROUPS / 64) * LAUNCHES);
      expect(samplesRow.loss_measured).toBeGreaterThanOrEqual(1);
      expect(samplesRow.loss_measured).toBeLessThanOrEqual(N);
      // Idle share = 1 − 1/workload loss of the sampled groups: strictly between 0 and 1 here.
      expect(samplesRow.lane_idle_fraction).toBeGreaterThan(0);
      expect(samplesRow.lane_idle_fraction).toBeLessThan(1);
      // matpow draws lanes independently: ICC ≈ 0 (SE ≈ √(2/(16·32·31)) ≈ 0.011 at 16 groups).
      expect(Math.abs(samplesRow.count_icc ?? 1)).toBeLessThan(0.08);
      const sweep = await influxQuery(id, `SELECT loss_predicted FROM "${MEASUREMENTS.sweep}" WHERE stream = '${stream}' GROUP BY group_size`);
      expect(sweep.map((s) => s.tags?.group_size).sort((a, b) => Number(a) - Number(b))).toEqual(['1', '2', '4', '8', '16', '32']);
    }

    // The bimodal distribution loses far more than the Poisson one (sanity of the two runs).
    const means = await influxQuery(id, `SELECT mean(loss_predicted) FROM "${MEASUREMENTS.window}" GROUP BY stream`);
    const byStream = new Map(means.map((s) => [s.tags?.stream, Number(s.values[0]?.[1])]));
    expect(byStream.get('e2ecat/matpow') ?? 0).toBeGreaterThan((byStream.get('e2epois/matpow') ?? 0) + 1);

    // warpwatch.distributions holds the stream's latest distribution as documented JSON.
    const consumer = kafkaClient().consumer({ groupId: `${id}-reader` });
    const records = new Map<string, DistributionRecord>();
    await consumer.connect();
    await consumer.subscribe({ topic: `${id}.distributions`, fromBeginning: true });
    await consumer.run({
      eachMessage: async ({ message }) => {
        if (message.key !== null && message.value !== null) records.set(message.key.toString(), JSON.parse(message.value.toString()) as DistributionRecord);
        await Promise.resolve();
      },
    });
    await waitUntil(async () => records.size >= RUNS.length, 30_000, 'distribution records');
    await consumer.disconnect();
    // Keyed by the full stream key (job/kernel, n, source, device UUID, host).
    const poisKeys = [...records.keys()].filter((key) => key.startsWith('e2epois/matpow|'));
    expect(poisKeys).toHaveLength(1);
    const record = records.get(poisKeys[0]!);
    expect(poisKeys[0]).toBe(`e2epois/matpow|n=${record?.groupSize}|${record?.source}|${record?.deviceUuid}|${record?.host}`);
    expect(record?.schema).toBe('warpwatch.distribution/v1');
    expect(record?.cumulative.launches).toBe(LAUNCHES);
    expect(record?.cumulative.entries.reduce((sum, [, , weight]) => sum + weight, 0)).toBe(GROUPS * LAUNCHES * N);
    expect(record?.predictions.sweep.length).toBe(6);
  });
});
