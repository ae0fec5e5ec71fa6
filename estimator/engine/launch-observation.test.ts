import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createStreamKeyCache, streamKeyOfObservation, type ObservationStream } from './launch-observation.ts';

describe('createStreamKeyCache', () => {
  const part = (values: readonly string[]) => fc.constantFrom(...values);
  const observationArbitrary: fc.Arbitrary<ObservationStream> = fc.record({
    job: part(['a', 'b', 'training-job-000042']),
    kernel: part(['k', 'matmul', 'k2']),
    device: part(['d']),
    deviceUuid: fc.option(part(['00000000-0000-0000-0000-000000000000', '5a8c2f3e-0b1d-4e6f-8a9b-c0d1e2f3a4b5']), { nil: undefined }),
    host: fc.option(part(['', 'node7', 'gpu-node-0007.example']), { nil: undefined }),
    groupSize: fc.constantFrom(1, 32, 64),
    source: fc.constantFrom('cuda' as const, 'cpu' as const),
  });

  it('gives the text of streamKeyOfObservation for every observation: held, dropped past 16 per job, and after restarts when full', () => {
    fc.assert(
      fc.property(fc.array(observationArbitrary, { maxLength: 300 }), fc.constantFrom(1, 2, 5, 8, 10_000), (observations, limit) => {
        const keyOf = createStreamKeyCache(limit);
        for (const observation of observations) expect(keyOf(observation)).toBe(streamKeyOfObservation(observation));
      }),
      { numRuns: 300 },
    );
  });

  it('returns the held key (the same string) for a stream seen before, and rejects a bad limit', () => {
    const keyOf = createStreamKeyCache();
    const observation: ObservationStream = { job: 'j', kernel: 'k', device: 'd', groupSize: 32, source: 'cuda', host: 'h' };
    const first = keyOf(observation);
    expect(keyOf({ ...observation })).toBe(first);
    expect(keyOf({ ...observation, groupSize: 16 })).toBe(streamKeyOfObservation({ ...observation, groupSize: 16 }));
    expect(() => createStreamKeyCache(0)).toThrow(RangeError);
  });
});
