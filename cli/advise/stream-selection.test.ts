// selectStreamRecord: which warpwatch.distributions record `advise --stream` takes.
import { describe, expect, it } from 'vitest';
import type { DistributionRecord } from '../../contracts/index.ts';
import { AdviseError } from './errors.ts';
import { selectStreamRecord } from './advise-input.ts';

const GPU_A = '11111111-1111-1111-1111-111111111111';
const GPU_B = '22222222-2222-2222-2222-222222222222';

function record(groupSize: number, deviceUuid: string, host: string, updatedAtMillis: number): DistributionRecord {
  return {
    schema: 'warpwatch.distribution/v1',
    key: `train/matpow|n=${groupSize}|cuda|${deviceUuid}|${host}`,
    stream: 'train/matpow',
    job: 'train',
    kernel: 'matpow',
    device: 'NVIDIA H100 80GB HBM3',
    deviceUuid,
    host,
    labels: {},
    groupSize,
    source: 'cuda',
    updatedAtMillis,
  } as unknown as DistributionRecord;
}

const records = [record(8, GPU_A, 'node1', 100), record(32, GPU_A, 'node1', 200), record(32, GPU_A, 'node1', 300), record(32, GPU_B, 'node1', 250), record(8, GPU_A, 'node2', 50)];

describe('selectStreamRecord', () => {
  it('selects the n = 8 and the n = 32 run of one kernel apart, the latest record of each', () => {
    expect(selectStreamRecord(records, { stream: 'train/matpow', groupSize: 32, device: GPU_A }, 'topic')).toBe(records[2]);
    expect(selectStreamRecord(records, { stream: 'train/matpow', groupSize: 8, host: 'node1' }, 'topic')).toBe(records[0]);
    expect(selectStreamRecord(records, { stream: 'train/matpow', groupSize: 32, device: GPU_B }, 'topic')).toBe(records[3]);
  });

  it('lists the candidates instead of guessing when a selection names several streams', () => {
    let thrown: unknown;
    try {
      selectStreamRecord(records, { stream: 'train/matpow', groupSize: 32 }, 'topic');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(AdviseError);
    expect((thrown as AdviseError).code).toBe('WW_ERR_ADVISE_STREAM_AMBIGUOUS');
    const message = (thrown as AdviseError).message;
    expect(message).toMatch(/names 2 streams/);
    expect(message).toContain(`--n 32 --device ${GPU_A} (NVIDIA H100 80GB HBM3) --host node1`);
    expect(message).toContain(`--n 32 --device ${GPU_B} (NVIDIA H100 80GB HBM3) --host node1`);
  });

  it('matches a device by model name too, and says when nothing matches', () => {
    expect(() => selectStreamRecord(records, { stream: 'train/matpow', device: 'NVIDIA H100 80GB HBM3', groupSize: 8, host: 'node2' }, 'topic')).not.toThrow();
    expect(() => selectStreamRecord(records, { stream: 'train/matpow', groupSize: 16 }, 'topic')).toThrow(expect.objectContaining({ code: 'WW_ERR_ADVISE_STREAM_NOT_FOUND' }));
    expect(() => selectStreamRecord(records, { stream: 'other/k' }, 'topic')).toThrow(expect.objectContaining({ code: 'WW_ERR_ADVISE_STREAM_NOT_FOUND' }));
  });
});
