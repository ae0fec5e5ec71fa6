import { describe, expect, it } from 'vitest';
import { createAdviseProgress, PROGRESS_AFTER_MS, PROGRESS_SUPPORT, UPDATE_INTERVAL_PIPE_MS, UPDATE_INTERVAL_TTY_MS } from './advise-progress.ts';

function capture(isTTY: boolean): { stream: { isTTY: boolean; write(text: string): boolean }; text: () => string } {
  const parts: string[] = [];
  return { stream: { isTTY, write: (text: string) => parts.push(text) > 0 }, text: () => parts.join('') };
}

describe('advise progress on stderr', () => {
  it('says nothing for a small support that finishes quickly', () => {
    let clock = 0;
    const { stream, text } = capture(false);
    const progress = createAdviseProgress(stream, 270, () => clock);
    for (const [i, step] of ['granularity', 'sorting', 'binning k = 2', 'fit'].entries()) {
      clock += 100;
      progress.onProgress(step, i + 1, 4);
    }
    progress.done();
    expect(text()).toBe('');
  });

  it('writes one line per step to a pipe once a step starts late, a few lines in all', () => {
    let clock = 0;
    const { stream, text } = capture(false);
    const progress = createAdviseProgress(stream, 5000, () => clock);
    progress.onProgress('granularity', 1, 4);
    clock = PROGRESS_AFTER_MS + 200;
    progress.onProgress('sorting', 2, 4);
    clock += 3000;
    progress.onProgress('fit', 4, 4);
    progress.done();
    expect(text().split('\n').filter((l) => l !== '')).toEqual([
      'warpwatch advise: sorting (step 2 of 4, 1.2 s, 5000 values)',
      'warpwatch advise: fit (step 4 of 4, 4.2 s, 5000 values)',
    ]);
  });

  it('rewrites one line on a terminal from the first step of a large support and clears it at the end', () => {
    let clock = 0;
    const { stream, text } = capture(true);
    const progress = createAdviseProgress(stream, PROGRESS_SUPPORT, () => clock);
    progress.onProgress('granularity', 1, 2);
    clock = 2500;
    progress.onProgress('sorting', 2, 2);
    progress.done();
    expect(text()).toBe(
      '\r\u001b[Kwarpwatch advise: granularity (step 1 of 2, 0.0 s, 20000 values)\r\u001b[Kwarpwatch advise: sorting (step 2 of 2, 2.5 s, 20000 values)\r\u001b[K',
    );
    expect(text()).not.toContain('\n');
  });

  it('thins updates within a long step: one line per 10 s to a pipe, 4 a second on a terminal, and shows a long step of a small support', () => {
    for (const [isTTY, interval] of [
      [false, UPDATE_INTERVAL_PIPE_MS],
      [true, UPDATE_INTERVAL_TTY_MS],
    ] as const) {
      let clock = 0;
      const { stream, text } = capture(isTTY);
      const progress = createAdviseProgress(stream, 270, () => clock);
      progress.onProgress('granularity', 1, 3);
      progress.onProgress('sorting', 2, 3); // quick so far: nothing shown
      const span = 3 * interval;
      for (let g = 1; g <= 100; g++) {
        clock = (g * span) / 100 + PROGRESS_AFTER_MS;
        progress.onProgress(`sorting (${g} of 100 groups)`, 2, 3);
      }
      progress.onProgress('fit', 3, 3);
      progress.done();
      const lines = text()
        .split(isTTY ? '\r\u001b[K' : '\n')
        .filter((l) => l !== '');
      expect(lines[0]).toMatch(/^warpwatch advise: sorting \(1 of 100 groups\) \(step 2 of 3, /);
      expect(lines.at(-1)).toMatch(/^warpwatch advise: fit \(step 3 of 3, /);
      // 3 intervals of updates: the first and about one per interval, then the next step.
      expect(lines.length).toBeGreaterThanOrEqual(4);
      expect(lines.length).toBeLessThanOrEqual(5);
    }
  });
});
