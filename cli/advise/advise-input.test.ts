import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DistributionRecord } from '../../contracts/index.ts';
import { syntheticLaunchSummary } from '../../estimator/index.ts';
import { CategoricalDistribution, createSeededRandom } from '../../model/index.ts';
import { encodeFrame } from '../../protocol/index.ts';
import { adviseInputFromFrames, adviseInputFromRecord, adviseInputFromSpec } from './advise-input.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-advise-'));
const distribution = CategoricalDistribution.fromCounts({ 2: 5, 3: 3, 9: 1, 2000: 1 });

function frameFile(name: string, kernels: readonly string[]): string {
  const random = createSeededRandom(3);
  const chunks = kernels.map((kernel, i) =>
    encodeFrame(
      syntheticLaunchSummary({
        job: 'job',
        kernel,
        deviceName: 'cpu',
        groupSize: 16,
        source: 'cpu',
        launchId: BigInt(i),
        frameSequence: 0,
        endMillis: 1_700_000_000_000 + i,
        groups: 100,
        distribution,
        random,
        measuredOverhead: 0,
        measuredNoise: 0,
      }),
    ),
  );
  const bytes = new Uint8Array(chunks.reduce((s, c) => s + c.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  const path = join(directory, name);
  writeFileSync(path, bytes);
  return path;
}

describe('advise-input', () => {
  describe('adviseInputFromFrames', () => {
    it('merges the LaunchSummary histograms of a stream and takes n and units per launch from them', () => {
      const input = adviseInputFromFrames(frameFile('one.bin', ['k', 'k']), undefined);
      expect(input.groupSize).toBe(16);
      expect(input.unitsPerLaunch).toBe(1600);
      expect(input.distribution.totalWeight).toBe(3200);
      // Values ≥ 1024 are binned by the protocol (relative width < 2^-6): 2000 comes back within 2^-7.
      expect(input.distribution.values.slice(0, 3)).toEqual([2, 3, 9]);
      expect(Math.abs((input.distribution.max - 2000) / 2000)).toBeLessThan(2 ** -7);
      expect(input.source).toMatch(/job\/k \(2 launches\)/);
      expect(input.observedLossCounts).toBeGreaterThan(1);
    });

    it('asks for --stream when the file holds several streams, and names them', () => {
      const path = frameFile('two.bin', ['a', 'b']);
      expect(() => adviseInputFromFrames(path, undefined)).toThrow(/holds 2 streams \(job\/a, job\/b\); pick one with --stream/);
      expect(adviseInputFromFrames(path, 'job/b').distribution.totalWeight).toBe(1600);
      expect(() => adviseInputFromFrames(path, 'job/c')).toThrow(/--stream 'job\/c' is not in .*; it holds job\/a, job\/b/);
    });

    it('rejects a file that is not a frame stream with the frame error code', () => {
      const path = join(directory, 'junk.bin');
      writeFileSync(path, 'not frames at all');
      expect(() => adviseInputFromFrames(path, undefined)).toThrow(/WW_ERR_FRAME_BAD_MAGIC/);
    });
  });

  describe('adviseInputFromRecord', () => {
    const record = {
      stream: 'job/k',
      device: 'cpu',
      groupSize: 8,
      updatedAtMillis: 0,
      window: { launches: 2, units: 800, entries: [[4, 4, 10]] },
      current: { entries: [[5, 5, 1]] },
      cumulative: { entries: [[4, 4, 10], [2048, 2079, 6]] },
      predictions: { lossCounts: 1.5 },
    } as unknown as DistributionRecord;

    it('uses the chosen histogram, bins at their middle value', () => {
      const input = adviseInputFromRecord(record, 'cumulative');
      expect([...input.distribution.values]).toEqual([4, 2064]);
      expect(input.distribution.totalWeight).toBe(16);
      expect(input.groupSize).toBe(8);
      expect(input.unitsPerLaunch).toBe(400);
      expect(input.observedLossCounts).toBe(1.5);
      expect([...adviseInputFromRecord(record, 'current').distribution.values]).toEqual([5]);
    });
  });

  describe('adviseInputFromSpec', () => {
    it('turns a bad spec into a usage error', () => {
      expect(() => adviseInputFromSpec('pois(-3)')).toThrow(/^--dist: /);
    });
  });
});
