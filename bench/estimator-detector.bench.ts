/**
 * Operating characteristics of the estimator's change detector (alerting): CUSUM
 * with the default parameters (k = 0.5σ, h = 8σ, 16 warm-up windows, σ ≥ 1 % of the level)
 * on seeded synthetic per-window loss series at several noise levels: false alarms per 10^4
 * stationary windows, detection delay after +5 % and +20 % steps, and a slow drift.
 * Targets: ≤ 1 false alarm per 10^4 windows; a 20 % step within 3 windows.
 */
import { DEFAULT_CUSUM_OPTIONS, evaluateDetector } from '../estimator/index.ts';
import type { BenchContext, BenchResult } from './bench-context.ts';

export async function run(ctx: BenchContext): Promise<BenchResult> {
  const stationaryWindows = ctx.quick ? 100_000 : 1_000_000;
  const trials = ctx.quick ? 200 : 2_000;
  const metrics: Record<string, number> = {};
  const notes: string[] = [
    `series: level 1.5 with Gaussian relative noise (coefficient of variation cv per window); ${stationaryWindows} monitored stationary windows per cv (detector restarted after each alarm); ${trials} trials per step/drift; seed 20240601 + index`,
    'delays count windows after the change (1 = the first changed window); drift: +0.2 % of the level per window',
  ];
  const noiseLevels = [0.005, 0.01, 0.02, 0.05];
  for (const [index, noiseCv] of noiseLevels.entries()) {
    let figures: ReturnType<typeof evaluateDetector> | undefined;
    await ctx.measure(
      `evaluate cv=${noiseCv}`,
      () => {
        figures = evaluateDetector({ options: DEFAULT_CUSUM_OPTIONS, noiseCv, seed: 20240601 + index, stationaryWindows, trials });
      },
      { runs: 1, minRuns: 1, warmupRuns: 0, parameters: { noiseCv, stationaryWindows, trials } },
    );
    if (figures === undefined) continue;
    const prefix = `cv${noiseCv}`;
    metrics[`${prefix}.falseAlarmsPer10kWindows`] = figures.falseAlarmsPer10kWindows;
    metrics[`${prefix}.falseAlarms`] = figures.falseAlarms;
    for (const step of figures.steps) {
      const name = `${prefix}.step${Math.round(step.relativeStep * 100)}pct`;
      metrics[`${name}.medianDelayWindows`] = step.medianDelayWindows;
      metrics[`${name}.p95DelayWindows`] = step.p95DelayWindows;
      metrics[`${name}.detectedWithin3Windows`] = step.detectedWithin3;
    }
    metrics[`${prefix}.drift.medianDelayWindows`] = figures.drift.medianDelayWindows;
    metrics[`${prefix}.drift.p95DelayWindows`] = figures.drift.p95DelayWindows;
    metrics[`${prefix}.drift.medianRelativeChangeAtDetection`] = figures.drift.medianRelativeChangeAtDetection;
    const step20 = figures.steps.find((s) => s.relativeStep === 0.2);
    notes.push(
      `cv ${noiseCv}: ${figures.falseAlarmsPer10kWindows.toFixed(3)} false alarms / 10^4 windows (target <= 1: ${figures.falseAlarmsPer10kWindows <= 1 ? 'met' : 'NOT met'}); ` +
        `+20 % step: median ${step20?.medianDelayWindows} windows, ${((step20?.detectedWithin3 ?? 0) * 100).toFixed(1)} % within 3 (target: ${step20 !== undefined && step20.medianDelayWindows <= 3 ? 'met' : 'NOT met'})`,
    );
  }
  return { notes, metrics };
}
