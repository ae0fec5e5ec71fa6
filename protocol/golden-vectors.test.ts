import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeFrame } from './decode-frame.ts';
import { decodeFrames } from './decode-frames.ts';
import { encodeFrame } from './encode-frame.ts';
import { FrameError } from './errors.ts';
import { histogramToCounts } from './histogram-bins.ts';
import { sampleVectorFiles } from './sample-frames.ts';
import type { Frame, GroupSamplesFrame, LaunchSummaryFrame } from './types.ts';

const vectorsDirectory = fileURLToPath(new URL('./vectors/', import.meta.url));
const read = (name: string): Uint8Array => new Uint8Array(readFileSync(join(vectorsDirectory, name)));
const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const U64_MAX = 2n ** 64n - 1n;

// Expected values written out by hand from kernels/protocol-tests/golden_frames.hpp (not computed by the TS codec).
const cpuIdentity = {
  job: 'golden-job',
  kernel: 'matpow',
  launchId: 0x0123456789abcdefn,
  source: 'cpu',
  groupSize: 4,
  sync: true,
  device: { name: 'cpu-lockstep', uuid: '00010203-0405-0607-0809-0a0b0c0d0e0f', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
  startUnixNanos: 1_700_000_000_000_000_000n,
  endUnixNanos: 1_700_000_000_123_456_789n,
} as const;

const CPP_LAUNCH_SUMMARY: LaunchSummaryFrame = {
  type: 'launch-summary',
  ...cpuIdentity,
  frameSequence: 7,
  groupCount: 3,
  groupsCounted: 3,
  sumSimtClocks: 123456n,
  sumMimdClocks: 100000n,
  sumMeasuredLoss: 3.75,
  sumCountsLoss: 1.6 + 1 + 8000 / 3040, // H of groups {1,2,3,4}, {0,0,0,0}, {5,1030,2000,5}
  sumMaxCounts: 2004,
  sumCounts: 3050,
  droppedSamples: 1,
  // 1030 = 2^10 + 0·16 → bin 1024; 2000 = 2^10 + 61·16 + 0 → bin 1024 + 61.
  histogram: [
    { bin: 0, count: 4 },
    { bin: 1, count: 1 },
    { bin: 2, count: 1 },
    { bin: 3, count: 1 },
    { bin: 4, count: 1 },
    { bin: 5, count: 2 },
    { bin: 1024, count: 1 },
    { bin: 1085, count: 1 },
  ],
};

const CPP_GROUP_SAMPLES: GroupSamplesFrame = {
  type: 'group-samples',
  ...cpuIdentity,
  frameSequence: 8,
  groupCount: 3,
  selection: 'hash',
  samplingStride: 2,
  groups: [
    { groupIndex: 0, startClock: 1000n, endClock: 1100n, laneCounts: [1, 2, 3, 4], laneFinishClocks: [1010n, 1020n, 1030n, 1040n] },
    {
      groupIndex: 2,
      startClock: 2n ** 63n,
      endClock: U64_MAX,
      laneCounts: [5, 1030, 2000, 4294967295],
      laneFinishClocks: [2n ** 63n + 5n, 2n ** 63n + 1030n, 2n ** 63n + 2000n, U64_MAX - 1n],
    },
  ],
};

const CPP_EXTREMES: LaunchSummaryFrame = {
  type: 'launch-summary',
  job: 'jöb-東京',
  kernel: 'ns::kernel<float>',
  launchId: U64_MAX,
  frameSequence: 4294967295,
  source: 'cuda',
  groupSize: 32,
  sync: false,
  device: { name: '', uuid: 'ffffffff-ffff-ffff-ffff-ffffffffffff', computeCapability: { major: 9, minor: 0 }, clockHz: 1_755_000_000 },
  startUnixNanos: 0n,
  endUnixNanos: U64_MAX,
  groupCount: MAX_SAFE,
  groupsCounted: 2 ** 48 - 1,
  sumSimtClocks: U64_MAX,
  sumMimdClocks: 0n,
  sumMeasuredLoss: 1.5e300,
  sumCountsLoss: 0,
  sumMaxCounts: MAX_SAFE,
  sumCounts: MAX_SAFE,
  droppedSamples: MAX_SAFE,
  histogram: [{ bin: 2431, count: (2 ** 48 - 1) * 32 }],
};

const CPP_EMPTY_SAMPLES: GroupSamplesFrame = {
  type: 'group-samples',
  ...cpuIdentity,
  groupSize: 1,
  frameSequence: 9,
  groupCount: 0,
  selection: 'stride',
  samplingStride: 1,
  groups: [],
};

describe('golden vectors', () => {
  describe('written by the C++ encoder (frame.hpp)', () => {
    it('decode to the exact field values the C++ side wrote', () => {
      expect(decodeFrame(read('cpp-launch-summary.bin'))).toEqual(CPP_LAUNCH_SUMMARY);
      expect(decodeFrame(read('cpp-group-samples.bin'))).toEqual(CPP_GROUP_SAMPLES);
      expect(decodeFrame(read('cpp-extremes.bin'))).toEqual(CPP_EXTREMES);
      expect(decodeFrames(read('cpp-stream.bin'))).toEqual([CPP_LAUNCH_SUMMARY, CPP_GROUP_SAMPLES, CPP_EXTREMES, CPP_EMPTY_SAMPLES]);
    });

    it('re-encode in TS to the same bytes', () => {
      for (const name of ['cpp-launch-summary.bin', 'cpp-group-samples.bin', 'cpp-extremes.bin']) {
        const bytes = read(name);
        expect(encodeFrame(decodeFrame(bytes)), name).toEqual(bytes);
      }
    });

    it('give the histogram representatives of SPEC.md', () => {
      const frame = decodeFrame(read('cpp-launch-summary.bin')) as LaunchSummaryFrame;
      expect([...histogramToCounts(frame.histogram)]).toEqual([
        [0, 4],
        [1, 1],
        [2, 1],
        [3, 1],
        [4, 1],
        [5, 2],
        [1031, 1], // bin [1024, 1039]
        [2007, 1], // bin [2000, 2015]
      ]);
    });
  });

  describe('written by the TS encoder (write-vectors.ts)', () => {
    const files = sampleVectorFiles();

    it('are committed exactly as write-vectors.ts writes them now', () => {
      const committed = readdirSync(vectorsDirectory).filter((n) => n.startsWith('ts-') || n.startsWith('invalid-'));
      expect(committed.sort()).toEqual([...files.keys()].sort());
      for (const [name, bytes] of files) expect(read(name), `${name}: run npx tsx protocol/write-vectors.ts`).toEqual(bytes);
    });

    it('fail with the error code in their name when invalid', () => {
      for (const [name, bytes] of files) {
        if (!name.startsWith('invalid-')) continue;
        const expected = name.split('-')[1];
        let code = 'decoded';
        try {
          decodeFrame(bytes);
        } catch (error) {
          code = error instanceof FrameError ? error.code : String(error);
        }
        expect(code, name).toBe(expected);
      }
    });

    it('decode to the frames they were written from', () => {
      const frames: Frame[] = decodeFrames(read('ts-stream.bin'));
      expect(frames.map((f) => f.type)).toEqual(['launch-summary', 'group-samples']);
      expect(frames[0]).toEqual(decodeFrame(read('ts-launch-summary.bin')));
      // Block runs: selection block with groupsPerBlock; the literal bytes at body + 8..11 are 02 00 02 00.
      const blocks = read('ts-block-samples.bin');
      expect(decodeFrame(blocks)).toMatchObject({ selection: 'block', groupsPerBlock: 2, samplingStride: 3, groupCount: 16 });
      const bodyAt = blocks.length - (20 + 4 * (24 + 12 * 4));
      expect([...blocks.subarray(bodyAt + 8, bodyAt + 12)]).toEqual([2, 0, 2, 0]);
    });
  });

  describe('SPEC.md worked example', () => {
    it('shows the bytes of cpp-launch-summary.bin', () => {
      const spec = readFileSync(fileURLToPath(new URL('./SPEC.md', import.meta.url)), 'utf8');
      const block = /```hex\n([\s\S]*?)```/.exec(spec);
      expect(block, 'SPEC.md needs a ```hex block').not.toBeNull();
      const hex = block![1]!
        .split('\n')
        .map((line) => line.replace(/#.*$/, ''))
        .join('')
        .replace(/\s+/g, '');
      expect(hex).toBe(Buffer.from(read('cpp-launch-summary.bin')).toString('hex'));
    });
  });
});
