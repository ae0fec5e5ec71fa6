// End to end for the Python producer (docs/python.md): the Numba (CUDA simulator) and Triton
// (interpreter) escape-time examples write their frames to the real collector's unix socket →
// Kafka → `warpwatch estimate` → InfluxDB. Checked: the collector delivers every frame, and the
// window rows hold every group with loss_counts equal to the value computed here from the
// per-element counts, and no loss_measured or measured workload loss (the frames are counts only,
// protocol/SPEC.md "Counts-only frames (no clock)").
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MEASUREMENTS } from '../../contracts/index.ts';
import { escapeCounts, expectedFromCounts } from '../../python/testing/escape-reference.ts';
import { ensurePythonInstalled, runPython } from '../../python/index.ts';
import { brokers, createDatabase, dropDatabase, estimatorEnv, influxQuery, spawnEstimator, stopChild, uniqueId, waitUntil, type EstimatorChild } from './estimator-support.ts';

const [WIDTH, HEIGHT, MAX_ITER, LAUNCHES] = [32, 16, Number(process.env.WW_PY_E2E_MAX_ITER ?? 40), 2];
// Both launches of an example fall in one 10-minute window (or two, when a window boundary falls
// between them: checked below), which closes by idleness only. The
// idle-close time must exceed the longest gap between an example's two launches: a window closed
// before the second launch arrives makes that launch's frames late (docs/estimator.md, "Late data:
// when a window closes"), and the stream's groups never add up. Triton's interpreter takes ~1 s
// per launch here unloaded and several seconds on a loaded machine (a 1.5 s idle close failed
// one run in four); WW_PY_E2E_MAX_ITER=160 (~5 s per launch) shows the margin.
const IDLE_CLOSE_MILLIS = 15_000;
const EXAMPLES = [
  { example: 'numba_escape', job: 'numba-escape', env: { NUMBA_ENABLE_CUDASIM: '1' }, nFlag: '--n', n: 8 },
  { example: 'triton_escape', job: 'triton-escape', env: { TRITON_INTERPRET: '1' }, nFlag: '--block', n: 16 },
] as const;

const directory = mkdtempSync(join(tmpdir(), 'ww-python-e2e-'));
const children: EstimatorChild[] = [];
let database: string | undefined;
let python = '';

beforeAll(async () => {
  python = await ensurePythonInstalled();
}, 1_500_000);

afterAll(async () => {
  await Promise.all(children.map((child) => stopChild(child, 'SIGKILL')));
  if (database !== undefined) await dropDatabase(database).catch(() => undefined);
  rmSync(directory, { recursive: true, force: true });
});

describe('Python producer end to end', () => {
  it('Numba and Triton examples → collector socket → Kafka → estimator → InfluxDB: every group, loss_counts from the per-element counts, no measured workload loss', async () => {
    const id = uniqueId('wwpy');
    database = id;
    await createDatabase(id);
    const estimator = spawnEstimator(estimatorEnv(id, id, `${id}-group`, { WARPWATCH_WINDOW_MILLIS: '600000', WARPWATCH_IDLE_CLOSE_MILLIS: String(IDLE_CLOSE_MILLIS), WARPWATCH_BOOTSTRAP_REPLICATES: '8' }), 'py');
    children.push(estimator);
    await estimator.waitForLog(/group .* on /, 60_000);

    const socketPath = join(directory, 'collector.sock');
    const collector = spawn(
      process.execPath,
      ['bin/warpwatch.mjs', 'collect', '--socket', socketPath, '--brokers', brokers(), '--spool-dir', join(directory, 'spool'), '--metrics-port', '0', '--host', 'py-host'],
      { env: { ...process.env, WARPWATCH_FRAMES_TOPIC: `${id}.frames`, WARPWATCH_DLQ_TOPIC: `${id}.dlq`, WARPWATCH_BATCH_LINGER_MILLIS: '100', WARPWATCH_INFLUX_URL: 'off' }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    collector.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => collector.once('exit', (code) => resolve(code)));
    const deadline = Date.now() + 60_000;
    while (!/started: /.test(stderr)) {
      if (Date.now() > deadline || collector.exitCode !== null) throw new Error(`collector did not start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }

    for (const { example, env, nFlag, n } of EXAMPLES) {
      const result = await runPython(python, ['-m', `warpwatch.examples.${example}`, '--out', `unix:${socketPath}`, '--width', String(WIDTH), '--height', String(HEIGHT),
        '--max-iter', String(MAX_ITER), nFlag, String(n), '--launches', String(LAUNCHES)], env);
      expect(result.status, result.stdout + result.stderr).toBe(0);
      // Per launch a summary and one samples frame: 2 launches → 4 frames written, none dropped.
      expect(JSON.parse(result.stdout)).toMatchObject({ written: 2 * LAUNCHES, dropped: 0, complete: true });
    }
    collector.kill('SIGTERM');
    expect(await exited).toBe(0);
    const frames = 2 * 2 * LAUNCHES;
    expect(stderr).toMatch(new RegExp(`read ${frames} \\(frames ${frames}, rejected 0\\) = delivered ${frames} \\(frames ${frames}, DLQ 0\\) \\+ dropped 0 \\+ held 0; everything delivered`));

    const counts = escapeCounts(WIDTH, HEIGHT, MAX_ITER);
    let groups = new Map<string, number>();
    const inInflux = waitUntil(
      async () => {
        const series = await influxQuery(id, `SELECT sum("groups") FROM "${MEASUREMENTS.window}" GROUP BY stream`);
        groups = new Map(series.map((s) => [s.tags?.stream ?? '', Number(s.values[0]?.[1] ?? 0)]));
        return EXAMPLES.every(({ job, n }) => groups.get(`${job}/escape`) === (LAUNCHES * counts.length) / n);
      },
      IDLE_CLOSE_MILLIS + 120_000,
      'both Python streams in InfluxDB with every group',
    );
    await inInflux.catch((error: unknown) => {
      // Fewer groups than sent with every frame delivered: a window closed before the stream's last launch (its frames late).
      const found = EXAMPLES.map(({ job, n }) => `${job}/escape ${groups.get(`${job}/escape`) ?? 0} of ${(LAUNCHES * counts.length) / n} groups`).join(', ');
      throw new Error(`${String(error)} (${found}); estimator log:\n${estimator.log.slice(-20).join('\n')}`);
    });
    for (const { job, n } of EXAMPLES) {
      const rows = await influxQuery(id, `SELECT "loss_counts", "loss_measured", "workload_loss_measured", "groups" FROM "${MEASUREMENTS.window}" WHERE stream = '${job}/escape'`);
      const series = rows[0];
      // One window holds both launches unless a 10-minute window boundary falls between them
      // (windows are aligned to the epoch): then each launch is its own window. Every launch of an
      // example has the same counts, so each window's loss_counts is the same value either way.
      const values = series?.values ?? [];
      expect(values.length).toBeGreaterThanOrEqual(1);
      expect(values.length).toBeLessThanOrEqual(LAUNCHES);
      const expected = expectedFromCounts(counts, n);
      let groupsInWindows = 0;
      for (const value of values) {
        const row = Object.fromEntries((series?.columns ?? []).map((column, i) => [column, value[i]])) as Record<string, number | null>;
        groupsInWindows += Number(row.groups);
        expect(row.loss_counts).toBeCloseTo(expected.lossCounts, 9);
        expect(row.workload_loss_measured ?? null).toBeNull(); // counts only: nothing measured, nothing written
        expect(row.loss_measured ?? null).toBeNull();
      }
      expect(groupsInWindows).toBe(LAUNCHES * expected.groups);
    }
  }, 600_000);
});
