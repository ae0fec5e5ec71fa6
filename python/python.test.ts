import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeFrames } from '../analysis/index.ts';
import { splitmix64 } from '../kernels/sampling-statistics.ts';
import { decodeFrame, decodeFrames, encodeFrame, type Frame, type GroupSamplesFrame, type LaunchSummaryFrame } from '../protocol/index.ts';
import { frameArbitrary } from '../protocol/testing/frame-arbitraries.ts';
import { PYTHON_ERROR_CODES } from './errors.ts';
import { escapeCounts, expectedFromCounts } from './testing/escape-reference.ts';
import { ensurePythonInstalled, PYTHON_DIR, runPython } from './index.ts';

// The Python producer (python/, docs/python.md): its install, the NVRTC compile of the device
// header, pytest, and the frame codec against the TypeScript one in both directions.
let python = '';
let scratch = '';

beforeAll(async () => {
  python = await ensurePythonInstalled();
  scratch = mkdtempSync(join(tmpdir(), 'ww-python-'));
}, 1_500_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

/** The canonical JSON form of a frame, built here from the TS frame (python/tests/interop.py builds it from a Python one). */
function canonical(frame: Frame): unknown {
  const common = {
    type: frame.type,
    job: frame.job,
    kernel: frame.kernel,
    launchId: frame.launchId.toString(),
    frameSequence: frame.frameSequence,
    source: frame.source,
    groupSize: frame.groupSize,
    sync: frame.sync,
    device: { name: frame.device.name, uuid: frame.device.uuid, major: frame.device.computeCapability.major, minor: frame.device.computeCapability.minor, clockHz: frame.device.clockHz },
    startUnixNanos: frame.startUnixNanos.toString(),
    endUnixNanos: frame.endUnixNanos.toString(),
    groupCount: frame.groupCount,
  };
  if (frame.type === 'launch-summary') {
    return {
      ...common,
      groupsCounted: frame.groupsCounted,
      sumSimtClocks: frame.sumSimtClocks.toString(),
      sumMimdClocks: frame.sumMimdClocks.toString(),
      sumMeasuredLoss: frame.sumMeasuredLoss,
      sumCountsLoss: frame.sumCountsLoss,
      sumMaxCounts: frame.sumMaxCounts,
      sumCounts: frame.sumCounts,
      droppedSamples: frame.droppedSamples,
      histogram: frame.histogram.map((e) => [e.bin, e.count]),
    };
  }
  return {
    ...common,
    selection: frame.selection,
    samplingStride: frame.samplingStride,
    groupsPerBlock: frame.groupsPerBlock ?? 0,
    groups: frame.groups.map((g) => ({
      groupIndex: g.groupIndex,
      startClock: g.startClock.toString(),
      endClock: g.endClock.toString(),
      laneCounts: [...g.laneCounts],
      laneFinishClocks: g.laneFinishClocks.map((c) => c.toString()),
    })),
  };
}

// C0, DEL and C1 control characters: the identity rule forbids them in job, kernel and device name.
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('python package', () => {
  it('uses exactly the WW_ERR_PYTHON_* codes of python/errors.ts (which docs/errors.md lists)', () => {
    const sources = readdirSync(join(PYTHON_DIR, 'warpwatch'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.py'));
    const used = new Set(sources.flatMap((f) => readFileSync(join(PYTHON_DIR, 'warpwatch', f), 'utf8').match(/WW_ERR_PYTHON_[A-Z_]+/g) ?? []));
    expect([...used].sort()).toEqual([...PYTHON_ERROR_CODES].sort());
  });

  it('type-checks python/warpwatch and python/tests with mypy --strict (the [tool.mypy] settings of python/pyproject.toml)', async () => {
    // The files and the strictness come from pyproject.toml (mypy reads it from python/, the cwd);
    // --strict again here so that the test cannot pass on a weakened config. The cache lives in
    // the scratch folder: no .mypy_cache in the checkout.
    const result = await runPython(python, ['-m', 'mypy', '--strict', '--config-file', 'pyproject.toml', '--cache-dir', join(scratch, 'mypy-cache')], {}, 600_000);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    // Every .py file of both folders was checked (a narrowed `files` setting would show here).
    const sources = ['warpwatch', 'tests'].flatMap((dir) => readdirSync(join(PYTHON_DIR, dir), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.py')));
    expect(result.stdout).toContain(`Success: no issues found in ${sources.length} source files`);
  }, 600_000);

  it('compiles the NVRTC-safe device header to PTX and cubin for sm_70, sm_80 and sm_90 (python -m warpwatch.nvrtc_check)', async () => {
    const result = await runPython(python, ['-m', 'warpwatch.nvrtc_check']);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    for (const cc of [70, 80, 90]) {
      expect(result.stdout).toMatch(new RegExp(`^ok compute_${cc}: ptx \\d+ bytes`, 'm'));
      expect(result.stdout).toMatch(new RegExp(`^ok sm_${cc}: cubin \\d+ bytes`, 'm'));
    }
  }, 300_000);

  it('passes pytest (codec vs golden vectors and the C++ selection and bins, probe buffers vs the C++ frame builder, recorder accounting and sinks, probe read-back vs a fake GPU, the CuPy kernel source through NVRTC, the GPU examples\' clean skip)', async () => {
    const result = await runPython(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {}, 900_000);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/\d+ passed/);
    expect(result.stdout).not.toMatch(/skipped|xfail/);
  }, 900_000);

  it('decodes what the TypeScript codec encodes (random frames), field for field and byte for byte on re-encode', async () => {
    const frames = fc.sample(frameArbitrary, { numRuns: 400, seed: 20261126 });
    const input = join(scratch, 'ts-frames.json');
    writeFileSync(input, JSON.stringify(frames.map((f) => ({ hex: hex(encodeFrame(f)) }))));
    const result = await runPython(python, ['tests/interop.py', 'decode', input]);
    expect(result.status, result.stderr).toBe(0);
    const decoded = JSON.parse(result.stdout) as ({ ok: true; fields: unknown; reencoded: boolean } | { ok: false; code: string; message: string })[];
    expect(decoded).toHaveLength(frames.length);
    // frameArbitrary draws identities within the rules (contracts/stream-identity.ts), so every
    // frame must be accepted; frames that break them (control characters, a backslash InfluxDB
    // cannot store) are the invalid golden vectors, which pytest checks are rejected with their code.
    frames.forEach((frame, i) => {
      expect(decoded[i], `frame ${i}`).toEqual({ ok: true, fields: canonical(decodeFrame(encodeFrame(frame))), reencoded: true });
    });
  }, 300_000);

  it('encodes what the TypeScript codec decodes (random Python frames), field for field and byte for byte on re-encode', async () => {
    const result = await runPython(python, ['tests/interop.py', 'random', '20261126', '400']);
    expect(result.status, result.stderr).toBe(0);
    const items = JSON.parse(result.stdout) as { hex: string; fields: unknown }[];
    expect(items).toHaveLength(400);
    const types = new Set<string>();
    for (const [i, item] of items.entries()) {
      const bytes = new Uint8Array(Buffer.from(item.hex, 'hex'));
      const frame = decodeFrame(bytes);
      types.add(frame.type === 'group-samples' ? `${frame.type}/${frame.selection}` : frame.type);
      expect(canonical(frame), `frame ${i}`).toEqual(item.fields);
      expect(hex(encodeFrame(frame)), `frame ${i}`).toBe(item.hex);
    }
    expect([...types].sort()).toEqual(['group-samples/block', 'group-samples/hash', 'group-samples/stride', 'launch-summary']);
  }, 300_000);
});

const EXAMPLES: readonly { example: string; env: Record<string, string>; nFlag: string; n: number; device: string }[] = [
  { example: 'numba_escape', env: { NUMBA_ENABLE_CUDASIM: '1' }, nFlag: '--n', n: 8, device: 'numba-cuda-simulator' },
  { example: 'triton_escape', env: { TRITON_INTERPRET: '1' }, nFlag: '--block', n: 16, device: 'triton-interpreter' },
];

describe.each(EXAMPLES)('python -m warpwatch.examples.$example', ({ example, env, nFlag, n, device }) => {
  it('writes counts-only frames whose `warpwatch analyze` numbers equal an independent computation from the per-element counts', async () => {
    const [width, height, maxIter, stride] = [32, 16, 40, 4];
    const out = join(scratch, `${example}.bin`);
    const result = await runPython(python, ['-m', `warpwatch.examples.${example}`, '--out', out, '--width', String(width), '--height', String(height),
      '--max-iter', String(maxIter), nFlag, String(n), '--launches', '2', '--sampling-stride', String(stride)], env);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ written: 4, dropped: 0, complete: true });

    const frames = decodeFrames(new Uint8Array(readFileSync(out)));
    const summaries = frames.filter((f): f is LaunchSummaryFrame => f.type === 'launch-summary');
    const samples = frames.filter((f): f is GroupSamplesFrame => f.type === 'group-samples');
    expect(summaries).toHaveLength(2);
    expect(frames.map((f) => f.frameSequence)).toEqual([0, 1, 2, 3]);
    const counts = escapeCounts(width, height, maxIter);
    for (const s of summaries) {
      expect(s).toMatchObject({ source: 'cpu', groupSize: n, groupCount: counts.length / n, groupsCounted: counts.length / n, device: { name: device } });
      // Counts only (SPEC.md "Counts-only frames"): no clock sums and no measured loss.
      expect([s.sumSimtClocks, s.sumMimdClocks, s.sumMeasuredLoss]).toEqual([0n, 0n, 0]);
    }
    for (const f of samples) {
      // The groups the C++ recorder's hash rule selects for this launchId, with their counts.
      const selected = Array.from({ length: counts.length / n }, (_, g) => g).filter((g) => splitmix64(f.launchId ^ BigInt(g)) % BigInt(stride) === 0n);
      expect(f.groups.map((g) => g.groupIndex)).toEqual(selected);
      for (const g of f.groups) {
        expect(g.laneCounts).toEqual(counts.slice(g.groupIndex * n, g.groupIndex * n + n));
        expect([g.startClock, g.endClock, ...g.laneFinishClocks].every((c) => c === 0n)).toBe(true);
      }
    }

    const [analysis, ...others] = analyzeFrames(frames);
    expect(others).toHaveLength(0);
    const expected = expectedFromCounts(counts, n);
    expect(analysis).toMatchObject({ stream: `${example.replace('_', '-')}/escape`, n, launches: 2, groups: 2 * expected.groups });
    expect(analysis!.lossCounts).toBeCloseTo(expected.lossCounts, 12);
    expect(analysis!.workloadLossCounts).toBeCloseTo(expected.workloadLossCounts, 12);
    expect(analysis!.meanCount).toBeCloseTo(expected.meanCount, 12);
    expect(analysis!.sampledGroups).toBe(samples.reduce((a, f) => a + f.groups.length, 0));
    expect(expected.lossCounts).toBeGreaterThan(1.05); // the workload is imbalanced: the comparison is not trivial
  }, 300_000);
});
