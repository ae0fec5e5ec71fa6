import { describe, expect, it } from 'vitest';
import { consumerLagOf, createPartitionCountWatch, estimatorStatus } from './estimator-service.ts';

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

  it('is failed (503) with the reason once the service cannot work any more, before everything else', () => {
    const failure = 'WW_ERR_ESTIMATOR_KAFKA: the consumer of f stopped for good (kafkajs does not restart it): ZSTD compression not implemented';
    expect(estimatorStatus({ ...running, influx: { failingWrites: 2 }, failure })).toEqual({ status: 'failed', reasons: [failure] });
    expect(estimatorStatus({ ...running, stopping: true, influx: undefined, failure })).toEqual({ status: 'failed', reasons: [failure] });
    expect(estimatorStatus({ ...running, assigned: new Set(), influx: undefined, failure }).status).toBe('failed');
  });

  it('is degraded with the refusal as a kafka reason while the broker refuses its checkpoint writes (a missing ACL)', () => {
    const refusal = 'WW_ERR_KAFKA_AUTHORIZATION: writing 2 checkpoint records of f[0] to c: Kafka refused: User:e lacks ALLOW Write on Topic c (docs/security.md § Kafka ACLs); grant: …';
    expect(estimatorStatus({ ...running, influx: undefined, refusal })).toEqual({ status: 'degraded', reasons: [`kafka: ${refusal}`] });
    expect(estimatorStatus({ ...running, influx: undefined, refusal: undefined })).toEqual({ status: 'ok', reasons: [] });
  });

  it('is degraded with a kafka reason while the brokers do not answer, also before its partitions are restored', () => {
    const reason = 'kafka: the brokers do not answer (retrying; the consumer lag is unknown meanwhile)';
    expect(estimatorStatus({ ...running, influx: undefined, kafkaReachable: false })).toEqual({ status: 'degraded', reasons: [reason] });
    expect(estimatorStatus({ ...running, assigned: new Set(), influx: undefined, kafkaReachable: false })).toEqual({ status: 'degraded', reasons: [reason] });
    expect(estimatorStatus({ ...running, influx: undefined, kafkaReachable: true })).toEqual({ status: 'ok', reasons: [] });
  });

  it('is degraded with a membership reason while the coordinator has not confirmed the member within its lease (docs/estimator.md § Fencing)', () => {
    const lapsed = { held: false, confirmedAgoMillis: 4_200, leaseMillis: 3_000 };
    expect(estimatorStatus({ ...running, influx: undefined, membership: lapsed })).toEqual({
      status: 'degraded',
      reasons: ['membership: not confirmed by the group coordinator for 4200 ms (lease 3000 ms): nothing is closed or checkpointed meanwhile'],
    });
    expect(estimatorStatus({ ...running, influx: undefined, membership: { ...lapsed, confirmedAgoMillis: null } }).reasons).toEqual([
      'membership: not confirmed by the group coordinator since it ended (lease 3000 ms): nothing is closed or checkpointed meanwhile',
    ]);
    expect(estimatorStatus({ ...running, influx: undefined, membership: { held: true, confirmedAgoMillis: 800, leaseMillis: 3_000 } })).toEqual({ status: 'ok', reasons: [] });
  });
});

describe('consumerLagOf (/healthz consumerLag, the lag gauge)', () => {
  const state = (measured: Record<number, [bigint, number]>) => ({
    restored: new Set(Object.keys(measured).map(Number)),
    lag: new Map(Object.entries(measured).map(([p, [lag]]) => [Number(p), lag] as const)),
    lagMeasuredAt: new Map(Object.entries(measured).map(([p, [, at]]) => [Number(p), at] as const)),
  });

  it('sums the lags of the restored partitions while each was measured within the freshness', () => {
    expect(consumerLagOf(state({ 0: [3n, 9_000], 1: [4n, 8_500] }), 10_000, 2_000)).toBe(7);
    expect(consumerLagOf(state({}), 10_000, 2_000)).toBe(0);
  });

  it('is unknown (undefined, not 0) once one partition has no fresh measurement: the broker stopped answering', () => {
    expect(consumerLagOf(state({ 0: [0n, 9_000], 1: [0n, 7_999] }), 10_000, 2_000)).toBeUndefined();
    const unmeasured = state({ 0: [0n, 9_000] });
    unmeasured.restored.add(1);
    expect(consumerLagOf(unmeasured, 10_000, 2_000)).toBeUndefined();
  });
});

describe('createPartitionCountWatch (docs/estimator.md § Adding partitions)', () => {
  it('says nothing while the count stays what it first was, and ignores a read that found no partition', () => {
    const watch = createPartitionCountWatch('t.frames');
    expect(watch.observe(0)).toBeUndefined();
    expect(watch.observe(6)).toBeUndefined();
    expect(watch.observe(6)).toBeUndefined();
    expect(watch.problem).toBeUndefined();
  });

  it('says once, with both counts and the procedure, when the count changes, and keeps it', () => {
    const watch = createPartitionCountWatch('t.frames');
    watch.observe(6);
    const line = watch.observe(12);
    expect(line).toMatch(/^WW_ERR_ESTIMATOR_PARTITIONS_CHANGED: t\.frames has 12 partitions, 6 when this instance started: .*docs\/estimator\.md § Adding partitions/);
    expect(watch.observe(12)).toBeUndefined();
    expect(watch.observe(24)).toBeUndefined();
    expect(watch.problem).toBe(line);
  });
});
