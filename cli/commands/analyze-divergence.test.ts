import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIELDS, MEASUREMENTS } from '../../contracts/index.ts';
import { createEstimatorEngine } from '../../estimator/index.ts';
import { testEngineOptions } from '../../estimator/testing/test-support.ts';
import { createSeededRandom, groupLoss } from '../../model/index.ts';
import { encodeFrame, histogramOfCounts, type Frame, type GroupSample, type GroupSamplesFrame, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { runCli } from '../testing/run-cli.ts';
import { analyzeFrames, divergenceSettingsOf, type StreamAnalysis } from '../../analysis/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'ww-analyze-divergence-'));

/** Distinct counts below the maximum (diverging exits of one loop), counted directly. */
const exitsOf = (w: readonly number[]): number => new Set(w.filter((x) => x < Math.max(...w))).size;
/** Spills of a 16-entry stack spilling 4 at a time for 1 + D pushes (docs/related-models.md closed form). */
const spillsOf = (w: readonly number[]): number => Math.max(0, Math.ceil((1 + exitsOf(w) - 16) / 4));

interface Synthetic {
  readonly seed: number;
  readonly groups: number;
  readonly n: number;
  /** Cycles per group-iteration in c_end, per lane-iteration in the lane finish clocks. */
  readonly iterationCycles: number;
  readonly laneIterationCycles?: number;
  readonly deltaCycles: number;
  readonly spillCycles: number;
  /** c_end gets uniform integer noise in [−noise, noise]. */
  readonly noise: number;
  /** Constant ticks per group in c_end (clock reads, synchronisation); default 0. */
  readonly overheadCycles?: number;
  readonly source?: 'cpu' | 'cuda';
}

/**
 * Groups with counts base + U{0..range} (range drawn per group, so D goes from 0 to n − 1
 * independently of the maximum) and clocks c_i = c0 + T_lane·w_i,
 * c_end = c0 + T·max + δ·D + s·spills + noise.
 */
function synthesize(p: Synthetic): { frames: Frame[]; samples: GroupSample[] } {
  const random = createSeededRandom(p.seed);
  const laneT = p.laneIterationCycles ?? p.iterationCycles;
  const samples: GroupSample[] = [];
  for (let g = 0; g < p.groups; g += 1) {
    const base = 1 + random.nextInt(30);
    const range = random.nextInt(48);
    const w = Array.from({ length: p.n }, () => base + random.nextInt(range + 1));
    const start = BigInt(1_000_000 + g * 100_000 + random.nextInt(1000));
    const noise = p.noise === 0 ? 0 : random.nextInt(2 * p.noise + 1) - p.noise;
    const end = (p.overheadCycles ?? 0) + p.iterationCycles * Math.max(...w) + p.deltaCycles * exitsOf(w) + p.spillCycles * spillsOf(w) + noise;
    samples.push({
      groupIndex: g,
      startClock: start,
      endClock: start + BigInt(Math.round(end)),
      laneCounts: w,
      laneFinishClocks: w.map((x) => start + BigInt(laneT * x)),
    });
  }
  const identity = {
    job: 'synthetic',
    kernel: 'divergent',
    launchId: 7n,
    source: p.source ?? ('cuda' as const),
    groupSize: p.n,
    sync: true,
    device: { name: 'synthetic GPU', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 9, minor: 0 }, clockHz: 1_500_000_000 },
    startUnixNanos: 0n,
    endUnixNanos: 1n,
  };
  const simt = samples.map((s) => BigInt(p.n) * (s.endClock - s.startClock));
  const mimd = samples.map((s) => s.laneFinishClocks.reduce((a, c) => a + (c - s.startClock), 0n));
  const summary: LaunchSummaryFrame = {
    ...identity,
    type: 'launch-summary',
    frameSequence: 0,
    groupCount: p.groups,
    groupsCounted: p.groups,
    sumSimtClocks: simt.reduce((a, b) => a + b, 0n),
    sumMimdClocks: mimd.reduce((a, b) => a + b, 0n),
    sumMeasuredLoss: simt.reduce((a, c, i) => a + Number(c) / Number(mimd[i]), 0),
    sumCountsLoss: samples.reduce((a, s) => a + groupLoss(s.laneCounts), 0),
    sumMaxCounts: samples.reduce((a, s) => a + Math.max(...s.laneCounts), 0),
    sumCounts: samples.reduce((a, s) => a + s.laneCounts.reduce((x, y) => x + y, 0), 0),
    droppedSamples: 0,
    histogram: histogramOfCounts(samples.flatMap((s) => s.laneCounts)),
  };
  const frames: Frame[] = [summary];
  for (let i = 0; i < samples.length; i += 1000) {
    frames.push({
      ...identity,
      type: 'group-samples',
      frameSequence: 1 + i / 1000,
      groupCount: p.groups,
      selection: 'stride',
      samplingStride: 1,
      groups: samples.slice(i, i + 1000),
    } satisfies GroupSamplesFrame);
  }
  return { frames, samples };
}

/** Writes the frames with encodeFrame and runs `warpwatch analyze FILE --json ...args`. */
async function analyzeCli(name: string, frames: readonly Frame[], ...args: string[]): Promise<StreamAnalysis> {
  const file = join(dir, `${name}.bin`);
  writeFileSync(file, Buffer.concat(frames.map((f) => encodeFrame(f))));
  // The divergence fit is off unless asked for: these tests ask for it (or give fixed costs).
  const divergenceArgs = args.some((a) => a.startsWith('--divergence') || a === '--delta' || a === '--spill') ? args : ['--divergence', 'fit', ...args];
  const result = await runCli('analyze', file, '--json', ...divergenceArgs);
  expect(result.status).toBe(0);
  const parsed = JSON.parse(result.stdout) as { streams: StreamAnalysis[] };
  expect(parsed.streams).toHaveLength(1);
  return parsed.streams[0] as StreamAnalysis;
}

/** Mean over groups of measured H = n·(c_end − c0)/Σ(c_i − c0), and of H from counts. */
function sampledLosses(samples: readonly GroupSample[]): { measured: number; counts: number } {
  let measured = 0;
  let counts = 0;
  for (const s of samples) {
    const n = s.laneCounts.length;
    measured += (n * Number(s.endClock - s.startClock)) / s.laneFinishClocks.reduce((a, c) => a + Number(c - s.startClock), 0);
    counts += (n * Math.max(...s.laneCounts)) / s.laneCounts.reduce((a, b) => a + b, 0);
  }
  return { measured: measured / samples.length, counts: counts / samples.length };
}

const divergent = { seed: 11, groups: 3000, n: 32, iterationCycles: 200, deltaCycles: 30, spillCycles: 90, noise: 5 };

describe('analyze: divergence-extended prediction on synthetic GroupSamples', () => {
  it('fits T, δ and the spill cost from clocks made with them and explains ~100 % of the gap', async () => {
    const { frames, samples } = synthesize(divergent);
    expect(samples.some((s) => spillsOf(s.laneCounts) > 0)).toBe(true);
    const stream = await analyzeCli('divergent', frames);
    const d = stream.divergence;
    expect(d).not.toBeNull();
    if (d === null || d.fit === undefined) throw new Error('no fit');
    const se = d.fit.standardErrors ?? {};
    expect(Math.abs(d.fit.rawDeltaCycles - 30)).toBeLessThan(Math.max(4 * (se.deltaCycles ?? 0), 1e-9));
    expect(Math.abs(d.fit.rawDeltaCycles - 30)).toBeLessThan(1);
    expect(Math.abs((d.fit.rawSpillCycles ?? Number.NaN) - 90)).toBeLessThan(4 * (se.spillCycles ?? 0));
    expect(Math.abs(d.iterationCycles - 200)).toBeLessThan(4 * (se.iterationCycles ?? 0));
    expect(d.fit.deltaSignificant).toBe(true);
    expect(d.fit.clampedToZero).toEqual([]);
    const { measured, counts } = sampledLosses(samples);
    expect(d.lossMeasured).toBeCloseTo(measured, 10);
    expect(d.lossCounts).toBeCloseTo(counts, 10);
    expect(d.measuredGap).toBeGreaterThan(0.05);
    expect(stream.gapExplainedFraction).not.toBeNull();
    expect(Math.abs((stream.gapExplainedFraction ?? 0) - 1)).toBeLessThan(0.01);
    expect(stream.lossExtended).toBeCloseTo(stream.lossCounts + (stream.divergenceTerm ?? Number.NaN), 12);
    expect(stream.divergenceNote).toBeNull();
    // the plain keys are still there, unchanged in meaning
    expect(stream).toMatchObject({ stream: 'synthetic/divergent', n: 32, groups: 3000, sampledGroups: 3000 });
    expect(stream.lossMeasured).toBeCloseTo(measured, 10);
  });

  it('with δ = 0 and a gap from another cause (faster lane clocks) explains ~0 % of it', async () => {
    const { frames, samples } = synthesize({ ...divergent, seed: 12, deltaCycles: 0, spillCycles: 0, laneIterationCycles: 150 });
    const stream = await analyzeCli('no-divergence', frames);
    const d = stream.divergence;
    if (d === null || d.fit === undefined) throw new Error('no fit');
    const { measured, counts } = sampledLosses(samples);
    expect(d.measuredGap).toBeCloseTo(measured - counts, 10);
    expect(d.measuredGap).toBeGreaterThan(0.3);
    expect(Math.abs(d.fit.rawDeltaCycles)).toBeLessThan(4 * (d.fit.standardErrors?.deltaCycles ?? 0));
    expect(Math.abs(stream.gapExplainedFraction ?? Number.NaN)).toBeLessThan(0.005);
  });

  it('uses fixed costs (--delta/--spill, --divergence-arch) with T fitted from the clocks', async () => {
    const { frames, samples } = synthesize(divergent);
    // With a constant per group: T̂ = Σ (m − m̄)(y′ − ȳ′)/Σ (m − m̄)², y′ = y − δD − s·spills
    // (simple regression in two passes), then the extended loss by direct summation.
    const expected = (delta: number, spill: number): { t: number; extended: number } => {
      const ms = samples.map((s) => Math.max(...s.laneCounts));
      const ys = samples.map((s) => Number(s.endClock - s.startClock) - delta * exitsOf(s.laneCounts) - spill * spillsOf(s.laneCounts));
      const mBar = ms.reduce((x, y) => x + y, 0) / ms.length;
      const yBar = ys.reduce((x, y) => x + y, 0) / ys.length;
      let num = 0;
      let den = 0;
      ms.forEach((m, i) => {
        num += (m - mBar) * ((ys[i] as number) - yBar);
        den += (m - mBar) ** 2;
      });
      const t = num / den;
      const extended =
        samples.reduce((a, s) => {
          const w = s.laneCounts;
          const total = w.reduce((x, y) => x + y, 0);
          return a + (32 * (t * Math.max(...w) + delta * exitsOf(w) + spill * spillsOf(w))) / (t * total);
        }, 0) / samples.length;
      return { t, extended };
    };
    const given = await analyzeCli('given', frames, '--delta', '30', '--spill', '90');
    const e1 = expected(30, 90);
    expect(given.divergence).toMatchObject({ mode: 'parameters', deltaCycles: 30, spillCycles: 90 });
    expect(given.divergence?.iterationCycles).toBeCloseTo(e1.t, 9);
    expect(given.divergence?.lossExtended).toBeCloseTo(e1.extended, 10);
    expect(Math.abs((given.gapExplainedFraction ?? 0) - 1)).toBeLessThan(0.01);

    const kepler = await analyzeCli('kepler', frames, '--divergence-arch', 'kepler');
    const e2 = expected(32, 84);
    expect(kepler.divergence).toMatchObject({ mode: 'parameters', architecture: 'kepler', deltaCycles: 32, spillCycles: 84 });
    expect(kepler.divergence?.iterationCycles).toBeCloseTo(e2.t, 9);
    expect(kepler.divergence?.lossExtended).toBeCloseTo(e2.extended, 10);
    expect(kepler.divergence?.divergenceTermStandardError).toBeUndefined();
  });

  it('fixes a negative δ at 0 and refits T and the spill cost (non-negative least squares)', async () => {
    const { frames, samples } = synthesize({ ...divergent, seed: 13, deltaCycles: -20 });
    const stream = await analyzeCli('negative', frames);
    const d = stream.divergence;
    if (d === null || d.fit === undefined) throw new Error('no fit');
    expect(d.fit.rawDeltaCycles).toBeLessThan(-19);
    expect(d.fit.clampedToZero).toEqual(['deltaCycles']);
    expect(d.deltaCycles).toBe(0);
    // Independent: normal equations of y on (max, spills) with a constant, i.e. of the centred
    // values (two passes), solved by Cramer's rule.
    const rows = samples.map((s) => ({ m: Math.max(...s.laneCounts), sp: spillsOf(s.laneCounts), y: Number(s.endClock - s.startClock) }));
    const meanOf = (f: (r: (typeof rows)[number]) => number): number => rows.reduce((x, r) => x + f(r), 0) / rows.length;
    const [mBar, spBar, yBar] = [meanOf((r) => r.m), meanOf((r) => r.sp), meanOf((r) => r.y)];
    let smm = 0, sms = 0, sss = 0, smy = 0, ssy = 0;
    for (const r of rows) {
      const m = r.m - mBar;
      const sp = r.sp - spBar;
      const y = r.y - yBar;
      smm += m * m;
      sms += m * sp;
      sss += sp * sp;
      smy += m * y;
      ssy += sp * y;
    }
    const det = smm * sss - sms * sms;
    expect(d.iterationCycles).toBeCloseTo((smy * sss - sms * ssy) / det, 6);
    expect(d.spillCycles).toBeCloseTo((smm * ssy - sms * smy) / det, 4);
    expect(d.fit.rawDivergenceTerm).toBeLessThan(0);
    expect(stream.divergenceTerm).toBeGreaterThanOrEqual(0);
  });

  it('reports a standard error of the term that matches its spread over seeds', () => {
    // Estimation error of the term: fitted minus the term of the true costs on the same groups.
    const deviations: number[] = [];
    const errors: number[] = [];
    for (let seed = 100; seed < 140; seed += 1) {
      const { frames, samples } = synthesize({ ...divergent, seed, groups: 300, noise: 150 });
      const d = analyzeFrames(frames)[0]?.divergence;
      if (d === null || d === undefined || d.fit === undefined) throw new Error('no fit');
      const trueTerm =
        samples.reduce((a, s) => a + (32 * (30 * exitsOf(s.laneCounts) + 90 * spillsOf(s.laneCounts))) / (200 * s.laneCounts.reduce((x, y) => x + y, 0)), 0) /
        samples.length;
      deviations.push(d.fit.rawDivergenceTerm - trueTerm);
      errors.push(d.fit.rawDivergenceTermStandardError ?? Number.NaN);
    }
    const spread = Math.sqrt(deviations.reduce((a, t) => a + t * t, 0) / deviations.length);
    const meanError = errors.reduce((a, b) => a + b, 0) / errors.length;
    // RMS of 40 deviations: relative standard deviation ≈ 1/√80 ≈ 11 %, so ±35 % is about 3 of them.
    expect(spread / meanError).toBeGreaterThan(0.65);
    expect(spread / meanError).toBeLessThan(1.35);
  });

  it('omits the term with a note when there are no GroupSamples, nothing to fit, or --divergence off', async () => {
    const { frames } = synthesize({ ...divergent, groups: 50 });
    const plain = await analyzeCli('plain', frames.slice(0, 1));
    expect(plain).toMatchObject({ divergence: null, lossExtended: null, divergenceTerm: null, gapExplainedFraction: null });
    expect(plain.divergenceNote).toMatch(/no GroupSamples/);
    const off = await analyzeCli('off', frames, '--divergence', 'off');
    expect(off.divergence).toBeNull();
    expect(off.divergenceNote).toBe('divergence term not computed (off by default; --divergence fit computes it)');

    const flat = synthesize({ ...divergent, groups: 20 });
    const equal = flat.frames.map((f) =>
      f.type === 'group-samples' ? { ...f, groups: f.groups.map((g) => ({ ...g, laneCounts: g.laneCounts.map(() => 5) })) } : f,
    );
    const [stream] = analyzeFrames(equal);
    expect(stream?.divergence).toBeNull();
    expect(stream?.divergenceNote).toMatch(/no sampled group has a diverging exit/);
  });

  it('prints the extended prediction in the table, with the CPU caveat on CPU data', async () => {
    const { frames } = synthesize({ ...divergent, groups: 400, source: 'cpu' });
    const file = join(dir, 'table.bin');
    writeFileSync(file, Buffer.concat(frames.map((f) => encodeFrame(f))));
    const result = await runCli('analyze', file, '--divergence', 'fit');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/lossExtended \d\.\d{4} = lossCounts \+ divergence term/);
    expect(result.stdout).toMatch(/explains \d+\.\d% ± \d+\.\d% of the sampled gap/);
    expect(result.stdout).toMatch(/no reconvergence stack/);
  });

  it('prints no divergence fit unless asked for it', async () => {
    const { frames } = synthesize({ ...divergent, groups: 400, source: 'cpu' });
    const file = join(dir, 'default.bin');
    writeFileSync(file, Buffer.concat(frames.map((f) => encodeFrame(f))));
    const result = await runCli('analyze', file);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/lossCounts/);
    expect(result.stdout.replace(file, 'FILE')).not.toMatch(/divergence|lossExtended|explains/);
  });

  it('says "not identifiable" instead of a share of the gap when δ is within 2 standard errors of 0', async () => {
    // No divergence cost at all, clock noise only: the fitted δ is noise.
    const { frames } = synthesize({ ...divergent, seed: 21, groups: 300, deltaCycles: 0, spillCycles: 0, noise: 400, source: 'cpu' });
    const file = join(dir, 'noise.bin');
    writeFileSync(file, Buffer.concat(frames.map((f) => encodeFrame(f))));
    const json = JSON.parse((await runCli('analyze', file, '--json', '--divergence', 'fit')).stdout) as { streams: StreamAnalysis[] };
    expect(json.streams[0]?.divergence?.fit?.deltaSignificant).toBe(false);
    const result = await runCli('analyze', file, '--divergence', 'fit');
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/divergence term not identifiable on these data \(δ within 2 standard errors of 0\): no share of the sampled gap/);
    expect(result.stdout).not.toMatch(/explains/);
  });

  it.each([
    [['--divergence', 'fit', '--delta', '3'], /cannot be combined/],
    [['--divergence', 'maybe'], /--divergence must be fit or off/],
    [['--divergence-arch', 'fermi'], /architecture must be one of kepler, maxwell, generic/],
    [['--delta', '-1'], /--delta must be a decimal number ≥ 0, got '-1'/],
    [['--spill', 'x'], /--spill must be a decimal number ≥ 0, got 'x'/],
  ])('rejects %j with exit code 2', async (args, message) => {
    const file = join(dir, 'usage.bin');
    writeFileSync(file, Buffer.concat(synthesize({ ...divergent, groups: 10 }).frames.map((f) => encodeFrame(f))));
    const result = await runCli('analyze', file, ...args);
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(message);
  });
});

describe('one divergence fit: analyze and the estimator (what the dashboards show)', () => {
  /** The estimator's warpwatch_samples fields for the frames (one window), fed as Kafka messages. */
  function estimatorFields(frames: readonly Frame[]): Readonly<Record<string, unknown>> {
    const points: { measurement: string; fields: Readonly<Record<string, unknown>> }[] = [];
    const engine = createEstimatorEngine(
      testEngineOptions(),
      { writePoints: (p) => points.push(...p), publishDistribution: () => {}, publishAlert: () => {} },
      { frame: () => {}, windowClosed: () => {}, modelError: () => {}, alertRaised: () => {} },
    );
    frames.forEach((f, offset) => expect(engine.handleMessage(0, String(offset), encodeFrame(f), 1_800_000_000_000)).toBe('recorded'));
    engine.closeAll();
    const samples = points.filter((p) => p.measurement === MEASUREMENTS.samples);
    expect(samples).toHaveLength(1);
    return (samples[0] as { fields: Readonly<Record<string, unknown>> }).fields;
  }

  it.each([
    ['with spills and a per-group constant', { ...divergent, seed: 31, groups: 2500, overheadCycles: 700, noise: 40 }, 0],
    ['without spills (n = 16), δ near 0', { ...divergent, seed: 32, groups: 800, n: 16, deltaCycles: 0, spillCycles: 0, noise: 300 }, 0],
    ['with 3 invalid groups (a lane finishing before c0), left out by both', { ...divergent, seed: 33, groups: 600, overheadCycles: 90, noise: 20 }, 3],
  ])('report the same T, δ (± SE), constant and R² for the same frames (%s)', async (_, synthetic, invalid) => {
    const made = synthesize(synthetic).frames;
    let left = invalid;
    const frames = made.map((f) =>
      f.type !== 'group-samples'
        ? f
        : { ...f, groups: f.groups.map((g) => (left-- > 0 ? { ...g, laneFinishClocks: [g.startClock - 1n, ...g.laneFinishClocks.slice(1)] } : g)) },
    );
    const fields = estimatorFields(frames);
    const stream = await analyzeCli(`agreement-${synthetic.seed}`, frames);
    const fit = stream.divergence?.fit;
    if (fit === undefined) throw new Error('analyze made no fit');
    const f = FIELDS.samples;
    const same = (a: unknown, b: number | undefined): void => {
      expect(typeof a).toBe('number');
      expect(Math.abs((a as number) - (b as number))).toBeLessThanOrEqual(1e-9 * Math.abs(b as number) + 1e-9);
    };
    same(fields[f.deltaTicks], fit.rawDeltaCycles);
    same(fields[f.deltaStandardError], fit.standardErrors?.deltaCycles);
    same(fields[f.iterationTicks], fit.rawIterationCycles);
    same(fields[f.overheadTicks], fit.rawOverheadCycles);
    same(fields[f.rSquared], fit.rSquared);
    if (fit.rawSpillCycles === undefined) expect(fields[f.spillTicks]).toBeUndefined();
    else same(fields[f.spillTicks], fit.rawSpillCycles);
    expect(fields[f.groups]).toBe(synthetic.groups - invalid);
    expect(fields[f.invalidGroups]).toBe(invalid);
    expect(fit.observations).toBe(synthetic.groups - invalid);
  });
});

describe('divergenceSettingsOf', () => {
  it('lets --delta/--spill override a preset and defaults the missing cost to 0 without one', () => {
    expect(divergenceSettingsOf({})).toEqual({ mode: 'fit' });
    expect(divergenceSettingsOf({ architecture: 'Maxwell', deltaCycles: 40 })).toEqual({ mode: 'parameters', architecture: 'maxwell', deltaCycles: 40, spillCycles: 176 });
    expect(divergenceSettingsOf({ spillCycles: 7 })).toEqual({ mode: 'parameters', architecture: undefined, deltaCycles: 0, spillCycles: 7 });
  });
});
