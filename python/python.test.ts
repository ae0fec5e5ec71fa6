import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFrame, encodeFrame, type Frame } from '../protocol/index.ts';
import { frameArbitrary } from '../protocol/frame-arbitraries.ts';
import { ensurePythonInstalled, runPython } from './index.ts';

// The Python producer (python/, docs/python.md): its install, the NVRTC compile of the device
// header, pytest, and the frame codec against the TypeScript one in both directions.
let python = '';
let scratch = '';

beforeAll(() => {
  python = ensurePythonInstalled();
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
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;
const hasControl = (f: Frame): boolean => CONTROL.test(f.job) || CONTROL.test(f.kernel) || CONTROL.test(f.device.name);
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');

describe('python package', () => {
  it('compiles the NVRTC-safe device header to PTX and cubin for sm_70, sm_80 and sm_90 (python -m warpwatch.nvrtc_check)', () => {
    const result = runPython(python, ['-m', 'warpwatch.nvrtc_check']);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    for (const cc of [70, 80, 90]) {
      expect(result.stdout).toMatch(new RegExp(`^ok compute_${cc}: ptx \\d+ bytes`, 'm'));
      expect(result.stdout).toMatch(new RegExp(`^ok sm_${cc}: cubin \\d+ bytes`, 'm'));
    }
  }, 300_000);

  it('passes pytest (codec vs golden vectors, recorder accounting, Numba simulator and Triton interpreter examples)', () => {
    const result = runPython(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', 'tests'], {}, 900_000);
    expect(result.status, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/\d+ passed/);
    expect(result.stdout).not.toMatch(/skipped|xfail/);
  }, 900_000);

  it('decodes what the TypeScript codec encodes (random frames), field for field and byte for byte on re-encode', () => {
    const frames = fc.sample(frameArbitrary, { numRuns: 400, seed: 20261126 });
    const input = join(scratch, 'ts-frames.json');
    writeFileSync(input, JSON.stringify(frames.map((f) => ({ hex: hex(encodeFrame(f)) }))));
    const result = runPython(python, ['tests/interop.py', 'decode', input]);
    expect(result.status, result.stderr).toBe(0);
    const decoded = JSON.parse(result.stdout) as ({ ok: true; fields: unknown; reencoded: boolean } | { ok: false; code: string; message: string })[];
    expect(decoded).toHaveLength(frames.length);
    let accepted = 0, rejected = 0;
    frames.forEach((frame, i) => {
      const out = decoded[i]!;
      if (hasControl(frame)) {
        // The identity rule: Python rejects control characters in identity strings.
        expect(out, `frame ${i}`).toMatchObject({ ok: false, code: 'WW_ERR_FRAME_INVALID' });
        rejected++;
        return;
      }
      expect(out, `frame ${i}`).toEqual({ ok: true, fields: canonical(decodeFrame(encodeFrame(frame))), reencoded: true });
      accepted++;
    });
    expect(accepted).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(10);
  }, 300_000);

  it('encodes what the TypeScript codec decodes (random Python frames), field for field and byte for byte on re-encode', () => {
    const result = runPython(python, ['tests/interop.py', 'random', '20261126', '400']);
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
