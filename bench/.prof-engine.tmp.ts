import { CategoricalDistribution, createSeededRandom } from '../model/index.ts';
import { encodeFrame, type LaunchSummaryFrame } from '../protocol/index.ts';
import { createEstimatorEngine, loadEstimatorConfig, syntheticLaunchSummary } from '../estimator/index.ts';
import { engineOptionsFromConfig } from '../estimator/estimator-service.ts';
const random = createSeededRandom(1);
const templates: LaunchSummaryFrame[] = Array.from({ length: 100 }, (_, s) => syntheticLaunchSummary({ job: `bench${s}`, kernel: 'k', deviceName: 'synthetic', groupSize: 32, source: 'cpu', launchId: 0n, frameSequence: 0, endMillis: 0, groups: 64,
  distribution: CategoricalDistribution.fromPmf(new Map([[1 + (s % 7), 3], [10 + (s % 13), 2], [30, 1]])), random, measuredOverhead: 0.02, measuredNoise: 0.01 }));
const frames = Array.from({ length: 20000 }, (_, i) => { const t = templates[i % 100]!; const end = 1_700_000_000_000 + Math.floor(i / 100) * 100;
  return Buffer.from(encodeFrame({ ...t, launchId: BigInt(i), frameSequence: i, startUnixNanos: BigInt(end - 1) * 1_000_000n, endUnixNanos: BigInt(end) * 1_000_000n })); });
const config = loadEstimatorConfig({ env: { WARPWATCH_WINDOW_MILLIS: '1000', ...Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('WARPWATCH_'))) } as Record<string,string> });
const opts = engineOptionsFromConfig(config);
let closes = 0; let lines = 0;
const engine = createEstimatorEngine(opts, { writePoints: (p) => { lines += p.length; }, publishDistribution: () => {}, publishAlert: () => {} }, { frame: () => {}, windowClosed: () => { closes++; }, modelError: (e) => { throw e; }, alertRaised: () => {} });
const t0 = performance.now();
frames.forEach((b, i) => engine.handleMessage(0, String(i), b, 0));
const t1 = performance.now();
for (let i = 0; i < 10; i++) engine.checkpoint(0);
console.log(`frames ${frames.length} closes ${closes} lines ${lines} ${(t1 - t0).toFixed(0)} ms => ${((t1 - t0) / closes).toFixed(3)} ms/close`);
