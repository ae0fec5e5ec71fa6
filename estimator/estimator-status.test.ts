import { describe, expect, it } from 'vitest';
import { estimatorStatus } from './estimator-service.ts';

describe('estimatorStatus (/healthz)', () => {
  const running = { stopping: false, assigned: new Set([0, 1]), restored: new Set([0, 1]) };

  it('is degraded while its writes to InfluxDB fail, and ok again after one succeeds', () => {
    expect(estimatorStatus({ ...running, influx: { failingWrites: 4 } })).toEqual({ status: 'degraded', reasons: ['influx-write'] });
    expect(estimatorStatus({ ...running, influx: { failingWrites: 0 } })).toEqual({ status: 'ok', reasons: [] });
    expect(estimatorStatus({ ...running, influx: undefined })).toEqual({ status: 'ok', reasons: [] });
  });

  it('is starting until every assigned partition is restored, and stopping once asked to stop', () => {
    expect(estimatorStatus({ ...running, restored: new Set([0]), influx: { failingWrites: 4 } }).status).toBe('starting');
    expect(estimatorStatus({ ...running, assigned: new Set(), influx: undefined }).status).toBe('starting');
    expect(estimatorStatus({ ...running, stopping: true, influx: { failingWrites: 4 } }).status).toBe('stopping');
  });

  it('is degraded with a topic-config reason per topic problem, also said while starting', () => {
    const problem = 'topic warpwatch.frames has max.message.bytes=1048588, it must take records of 4259856 bytes';
    expect(estimatorStatus({ ...running, influx: undefined, topicProblems: [problem] })).toEqual({ status: 'degraded', reasons: [`topic-config: ${problem}`] });
    expect(estimatorStatus({ ...running, assigned: new Set(), influx: undefined, topicProblems: [problem] })).toEqual({ status: 'starting', reasons: [`topic-config: ${problem}`] });
    expect(estimatorStatus({ ...running, influx: undefined, topicProblems: [] })).toEqual({ status: 'ok', reasons: [] });
  });
});
