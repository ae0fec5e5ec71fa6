// The estimator's drift and rising-imbalance rules on real frames: escape
// (neighbouring pixels alike: the independent-lanes model overstates its loss about 2.5×) and
// matpow (independent lanes), recorded by the CPU lockstep backend, run through the estimator
// engine with the production defaults (`warpwatch estimate` with no settings) plus the estimator's
// own drift threshold at the Grafana rule's value (WARPWATCH_ALERT_DRIFT_THRESHOLD = 0.25). Steady
// streams must stay quiet — no drift alert (neither the CUSUM change detector nor the threshold),
// and the Grafana drift rule's input (eta_drift, mean over the range > 0.25) stays below its
// threshold — and a real change must fire: the measurement of the escape stream leaves the
// locality-aware prediction by half.
//
// Frames are re-timed one launch per 10 s window (the default window) so that each launch is its
// own window; their counts and clocks are the backend's.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRIFT_RELATIVE_ERROR_THRESHOLD } from '../../dashboards/index.ts';
import { createEstimatorEngine, loadEstimatorConfig, modelFitter } from '../../estimator/index.ts';
import type { AlertEvent, WindowResult } from '../../estimator/index.ts';
import { ensureKernelsBuilt, runWorkload, workloadBinaryName } from '../../kernels/index.ts';
import { decodeFrames, encodeFrame, type Frame } from '../../protocol/index.ts';

const LAUNCHES = 24;
const CHANGE_AT = 16; // escape launches from here on: the measurement rises by half, the counts do not
const T0_NANOS = 1_700_000_000_000_000_000n;
const WINDOW_NANOS = 10_000_000_000n;

let scratch = '';
let binDir = '';

beforeAll(async () => {
  ({ binDir } = await ensureKernelsBuilt({ targets: [workloadBinaryName('escape', 'cpu'), workloadBinaryName('matpow', 'cpu')] }));
  scratch = mkdtempSync(join(tmpdir(), 'ww-alerts-'));
}, 900_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

async function record(workload: 'escape' | 'matpow', args: readonly string[]): Promise<Frame[]> {
  const out = join(scratch, `${workload}.wwf`);
  await runWorkload({ binDir, workload, backend: 'cpu', args: [...args, '--launches', String(LAUNCHES), '--job', 'alerts', '--out', out] });
  return decodeFrames(new Uint8Array(readFileSync(out)));
}

/** Launch i (its summary and samples) moved into window i; `scale` multiplies the summary's measured clocks and loss. */
function retimed(frame: Frame, launchIndex: number, scale: number): Frame {
  const start = T0_NANOS + BigInt(launchIndex) * WINDOW_NANOS + 1_000_000_000n;
  const times = { startUnixNanos: start, endUnixNanos: start + 1_000_000n };
  if (frame.type !== 'launch-summary' || scale === 1) return { ...frame, ...times };
  return { ...frame, ...times, sumMeasuredLoss: frame.sumMeasuredLoss * scale, sumSimtClocks: BigInt(Math.round(Number(frame.sumSimtClocks) * scale)) };
}

function runEngine(streams: readonly { frames: readonly Frame[]; scaleFrom?: number }[]): { windows: WindowResult[]; alerts: AlertEvent[] } {
  const config = loadEstimatorConfig({ env: { WARPWATCH_ALERT_DRIFT_THRESHOLD: String(DRIFT_RELATIVE_ERROR_THRESHOLD) }, flags: { brokers: '127.0.0.1:1', groupId: 'alerts-test', influxUrl: 'off', metricsPort: 'off' } });
  const windows: WindowResult[] = [];
  const alerts: AlertEvent[] = [];
  const engine = createEstimatorEngine(
    { ...config, fitter: modelFitter, monotonicMillis: () => 0 },
    { writePoints: () => {}, publishDistribution: () => {}, publishAlert: () => {}, recordWindow: (w) => windows.push(w), recordAlert: (a) => alerts.push(a) },
    { frame: () => {}, windowClosed: () => {}, modelError: (error) => { throw error; }, alertRaised: () => {} },
  );
  const messages: { time: bigint; bytes: Uint8Array }[] = [];
  for (const stream of streams) {
    const launchIds = [...new Set(stream.frames.map((f) => f.launchId))].sort((a, b) => (a < b ? -1 : 1));
    for (const frame of stream.frames) {
      const index = launchIds.indexOf(frame.launchId);
      const moved = retimed(frame, index, stream.scaleFrom !== undefined && index >= stream.scaleFrom ? 1.5 : 1);
      messages.push({ time: moved.endUnixNanos, bytes: encodeFrame(moved) });
    }
  }
  messages.sort((a, b) => (a.time < b.time ? -1 : a.time > b.time ? 1 : 0));
  messages.forEach((m, offset) => expect(engine.handleMessage(0, String(offset), m.bytes, Number(m.time / 1_000_000n))).toBe('recorded'));
  engine.closeAll();
  return { windows, alerts };
}

describe('alert rules on real CPU-backend streams (production defaults, drift threshold 0.25)', () => {
  let escape: Frame[] = [];
  let matpow: Frame[] = [];
  beforeAll(async () => {
    escape = await record('escape', ['--width', '256', '--height', '256', '--n', '32', '--sample-rate', '0.125']);
    matpow = await record('matpow', ['--dist', 'pois(30)', '--n', '32', '--groups', '512', '--sample-rate', '0.125']);
  }, 600_000);

  it('stay quiet on steady escape and matpow streams although the independent-lanes model overstates escape', () => {
    const { windows, alerts } = runEngine([{ frames: escape }, { frames: matpow }]);
    expect(alerts.filter((a) => a.kind === 'drift')).toEqual([]);
    const escapeWindows = windows.filter((w) => w.identity.kernel === 'escape');
    const matpowWindows = windows.filter((w) => w.identity.kernel === 'matpow');
    expect(escapeWindows).toHaveLength(LAUNCHES);
    expect(matpowWindows).toHaveLength(LAUNCHES);
    for (const w of escapeWindows) {
      // The case the rules must survive: the independent-lanes prediction is far above the measurement.
      expect((w.lossPredicted ?? 0) / (w.lossMeasured ?? 1)).toBeGreaterThan(1.5);
      expect(w.lossLocality).toBeDefined();
    }
    // The Grafana drift rule: mean eta_drift over the range above 0.25 fires.
    const meanEta = (list: readonly WindowResult[]): number => list.reduce((s, w) => s + (w.etaDrift ?? Number.NaN), 0) / list.length;
    expect(meanEta(escapeWindows)).toBeLessThan(DRIFT_RELATIVE_ERROR_THRESHOLD);
    expect(meanEta(matpowWindows)).toBeLessThan(DRIFT_RELATIVE_ERROR_THRESHOLD);
  });

  it('fire when the escape measurement leaves the locality-aware prediction (× 1.5 from launch 16): a drift alert for escape only, and eta_drift above the Grafana threshold', () => {
    const { windows, alerts } = runEngine([{ frames: escape, scaleFrom: CHANGE_AT }, { frames: matpow }]);
    const drift = alerts.filter((a) => a.kind === 'drift');
    expect(drift.length).toBeGreaterThan(0);
    expect(new Set(drift.map((a) => a.identity.kernel))).toEqual(new Set(['escape']));
    expect(drift.every((a) => a.message.includes('loss_locality'))).toBe(true);
    const changed = windows.filter((w) => w.identity.kernel === 'escape' && w.endMillis > Number((T0_NANOS + BigInt(CHANGE_AT) * WINDOW_NANOS) / 1_000_000n));
    expect(changed).toHaveLength(LAUNCHES - CHANGE_AT);
    for (const w of changed) expect(w.etaDrift ?? 0).toBeGreaterThan(DRIFT_RELATIVE_ERROR_THRESHOLD);
  });
});
