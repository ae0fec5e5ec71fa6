import { describe, expect, it } from 'vitest';
import { DEMO_FAMILY_SPECS, planDemoRuns, resolveDemoSettings } from './demo-plan.ts';

describe('demo-plan', () => {
  describe('resolveDemoSettings', () => {
    it('uses the full defaults unless quick is asked for', () => {
      const full = resolveDemoSettings({ quick: false, job: 'demo-1' });
      const quick = resolveDemoSettings({ quick: true, job: 'demo-1' });
      expect(full.groupSizes).toEqual([4, 8, 16, 32]);
      expect(quick.groupSizes).toEqual([8, 32]);
      expect(quick.launches * quick.groupSizes.length).toBeLessThan(full.launches * full.groupSizes.length);
      expect(full.families).toEqual([...DEMO_FAMILY_SPECS]);
    });

    it('sorts and de-duplicates explicit group sizes', () => {
      expect(resolveDemoSettings({ quick: true, job: 'j', groupSizes: [32, 4, 32] }).groupSizes).toEqual([4, 32]);
    });

    it('reports every problem together', () => {
      expect(() => resolveDemoSettings({ quick: true, job: 'a/b', groupSizes: [0, 48], families: ['pois(-1)'], launches: 0 })).toThrow(
        /group size must be an integer 1\.\.32, got 0; group size must be an integer 1\.\.32, got 48; .*launches must be an integer 1\.\.1000, got 0; family 'pois\(-1\)'.*job must not contain '\/', got 'a\/b'/,
      );
    });
  });

  describe('planDemoRuns', () => {
    it('plans every family and both escape variants at every group size', () => {
      const settings = resolveDemoSettings({ quick: false, job: 'demo-x' });
      const runs = planDemoRuns(settings);
      expect(runs).toHaveLength((DEMO_FAMILY_SPECS.length + 2) * 4);
      expect(runs.filter((r) => r.workload === 'escape' && r.variant === 'sorted').map((r) => r.n)).toEqual([4, 8, 16, 32]);
      const kernels = new Set(runs.map((r) => `${r.kernel}|${r.n}`));
      expect(kernels.size).toBe(runs.length);
    });

    it('keeps units per launch constant across group sizes and passes the flags the programs take', () => {
      const settings = resolveDemoSettings({ quick: true, job: 'demo-x', seed: 9 });
      const [first] = planDemoRuns(settings);
      expect(first).toBeDefined();
      expect(first?.groupsPerLaunch).toBe(settings.matpowUnitsPerLaunch / 8);
      expect(first?.args).toEqual([
        '--dist', 'binom(60,0.5)', '--n', '8', '--groups', String(settings.matpowUnitsPerLaunch / 8), '--launches', String(settings.launches),
        '--seed', '9', '--job', 'demo-x', '--selection', 'hash', '--sample-rate', '0.25', '--quiet', '--kernel', 'matpow-binom-60-0.5',
      ]);
      const sorted = planDemoRuns(settings).find((r) => r.variant === 'sorted' && r.n === 32);
      expect(sorted?.args).toContain('--sorted');
      expect(sorted?.groupsPerLaunch).toBe(settings.escapeUnitsPerLaunch / 32);
    });
  });
});
