// advise --frames takes units per launch from the groups a summary measured (groupsCounted),
// not from groupCount, which under launch sampling also counts the launches left out
// (docs/kernels.md, "Launch sampling").
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeFrame, histogramOfCounts, type LaunchSummaryFrame } from '../../protocol/index.ts';
import { runCli } from '../testing/run-cli.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-advise-units-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('advise --frames units per launch', () => {
  it('is groupsCounted × n per summary, whatever groupCount says about sampled-out launches', async () => {
    const lanes = Array.from({ length: 64 * 8 }, (_, i) => 1 + (i % 7));
    const summary: LaunchSummaryFrame = {
      type: 'launch-summary',
      job: 'j',
      kernel: 'k',
      launchId: 1n,
      frameSequence: 0,
      source: 'cpu',
      groupSize: 8,
      sync: true,
      device: { name: 'cpu', uuid: '00000000-0000-0000-0000-000000000000', computeCapability: { major: 0, minor: 0 }, clockHz: 1e9 },
      startUnixNanos: 0n,
      endUnixNanos: 1n,
      groupCount: 64 * 100, // recorded 1 in 100: this summary stands for 100 launches of 64 groups
      groupsCounted: 64,
      sumSimtClocks: 100n,
      sumMimdClocks: 90n,
      sumMeasuredLoss: 64,
      sumCountsLoss: 64,
      sumMaxCounts: 64 * 7,
      sumCounts: lanes.reduce((a, b) => a + b, 0),
      droppedSamples: 0,
      histogram: histogramOfCounts(lanes),
    };
    const file = join(directory, 'sampled.wwf');
    writeFileSync(file, encodeFrame(summary));
    const result = await runCli('advise', '--frames', file, '--json');
    expect(result.status, result.stderr).toBe(0);
    expect((JSON.parse(result.stdout) as { unitsPerLaunch: number }).unitsPerLaunch).toBe(64 * 8);
  });
});
