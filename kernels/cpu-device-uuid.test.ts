// The CPU backend's device UUID (kernels/cpu/cpu-backend.hpp cpuDeviceUuid): CPU frames name
// their device by a host-stable UUID, so CPU streams of two hosts stay apart even in files read
// without a collector (contracts/stream-identity.ts). Checked on frames of the real program.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeFrames } from '../protocol/index.ts';
import { ensureKernelsBuilt, runWorkload, workloadBinaryName } from './index.ts';

let binDir = '';
const directory = mkdtempSync(join(tmpdir(), 'ww-cpu-uuid-'));
beforeAll(async () => {
  ({ binDir } = await ensureKernelsBuilt({ targets: [workloadBinaryName('matpow', 'cpu')] }));
}, 600_000);
afterAll(() => rmSync(directory, { recursive: true, force: true }));

async function uuidsOfRun(name: string, seed: number): Promise<Set<string>> {
  const out = join(directory, `${name}.wwf`);
  await runWorkload({ binDir, workload: 'matpow', backend: 'cpu', args: ['--dist', 'pois(5)', '--n', '8', '--groups', '16', '--seed', String(seed), '--out', out] });
  return new Set(decodeFrames(new Uint8Array(readFileSync(out))).map((f) => f.device.uuid));
}

describe('CPU device UUID', () => {
  it('is the same non-nil version-8 UUID in every run on this host', async () => {
    const first = await uuidsOfRun('a', 1);
    const second = await uuidsOfRun('b', 2);
    expect(first.size).toBe(1);
    const [uuid] = [...first];
    expect(uuid).not.toBe('00000000-0000-0000-0000-000000000000');
    // RFC 9562: version nibble 8 (custom), variant bits 10.
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect([...second]).toEqual([uuid]);
  }, 120_000);
});
