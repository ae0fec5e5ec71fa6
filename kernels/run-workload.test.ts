// The one way a workload program is spawned (kernels/run-workload.ts): its failures are typed
// (WorkloadError.failure, exitCode), so callers branch on them, never on the message text.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { CPU_WORKLOAD_TARGETS, ensureKernelsBuilt, runWorkload, streamWorkloadFrames, WorkloadError } from './index.ts';

let binDir: string;
beforeAll(async () => {
  ({ binDir } = await ensureKernelsBuilt({ targets: CPU_WORKLOAD_TARGETS, tests: false }));
}, 900_000);

const emptyDir = mkdtempSync(join(tmpdir(), 'ww-no-workloads-'));
const small = ['--dist', 'pois(5)', '--n', '8', '--groups', '64', '--seed', '1', '--job', 'spawn'];

describe('streamWorkloadFrames', () => {
  it('hands over every frame and returns the program’s report', async () => {
    let frames = 0;
    const run = await streamWorkloadFrames({ binDir, workload: 'matpow', args: small, onFrame: () => void (frames += 1) });
    expect(run.report.groups).toBe(64);
    expect(run.frames).toBe(frames);
    expect(run.frames).toBeGreaterThan(0);
    expect(run.frameErrors).toEqual([]);
  });

  it('rejects flags the program refuses as failure `usage` with exit code 2', async () => {
    const error = await streamWorkloadFrames({ binDir, workload: 'matpow', args: [...small, '--seed', 'abc'], onFrame: () => undefined }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WorkloadError);
    expect(error).toMatchObject({ failure: 'usage', exitCode: 2, signal: null, code: 'WW_ERR_KERNELS_WORKLOAD_USAGE' });
    expect((error as Error).message).toMatch(/^warpwatch-matpow-cpu .* --out - ended with exit 2: .*--seed must be an integer/);
  });

  it('says a missing program is `not-built`', async () => {
    const error = await streamWorkloadFrames({ binDir: emptyDir, workload: 'escape', args: [], onFrame: () => undefined }).catch((e: unknown) => e);
    expect(error).toMatchObject({ failure: 'not-built', exitCode: null, code: 'WW_ERR_KERNELS_WORKLOAD_FAILED' });
    expect((error as Error).message).toBe(`${join(emptyDir, 'warpwatch-escape-cpu')} does not exist: the kernels build did not produce the CPU escape program`);
  });

  it('rethrows what onFrame throws, as it is', async () => {
    const own = new Error('transport down');
    await expect(
      streamWorkloadFrames({
        binDir,
        workload: 'matpow',
        args: small,
        onFrame: () => {
          throw own;
        },
      }),
    ).rejects.toBe(own);
  });
});

describe('runWorkload', () => {
  it('types the same failures: `usage` (the program’s own words), `not-built` (WW_ERR_KERNELS_NO_CUDA for CUDA)', async () => {
    const usage = await runWorkload({ binDir, workload: 'matpow', backend: 'cpu', args: ['--seed', 'abc'] }).catch((e: unknown) => e);
    expect(usage).toMatchObject({ failure: 'usage', exitCode: 2, code: 'WW_ERR_KERNELS_WORKLOAD_USAGE' });
    expect((usage as Error).message).toMatch(/^--seed must be an integer/);
    const cuda = await runWorkload({ binDir: emptyDir, workload: 'matpow', backend: 'cuda', args: [] }).catch((e: unknown) => e);
    expect(cuda).toMatchObject({ failure: 'not-built', code: 'WW_ERR_KERNELS_NO_CUDA' });
    const cpu = await runWorkload({ binDir: emptyDir, workload: 'matpow', backend: 'cpu', args: [] }).catch((e: unknown) => e);
    expect(cpu).toMatchObject({ failure: 'not-built', code: 'WW_ERR_KERNELS_WORKLOAD_FAILED' });
  });
});
