import type { GroupSamplesFrame } from '../protocol/index.ts';

/**
 * The sampled groups' lane counts grouped by launch id (a launch may span several GroupSamples
 * frames): the runs of `advise --frames` and `--workload`, also taken by the demo's advice: what the
 * what-ifs on the runs' units sort within (docs/model.md §11b).
 *
 * @example runsByLaunchOf(samples).flat().length // sampled groups in all
 */
export function runsByLaunchOf(samples: readonly GroupSamplesFrame[]): number[][][] {
  const byLaunch = new Map<bigint, number[][]>();
  for (const frame of samples) {
    const runs = byLaunch.get(frame.launchId) ?? [];
    for (const group of frame.groups) runs.push([...group.laneCounts]);
    byLaunch.set(frame.launchId, runs);
  }
  return [...byLaunch.values()];
}
