import { afterEach, describe, expect, it } from 'vitest';
import { startFakeInflux, type FakeInflux } from '../../service/testing/fake-influx.ts';
import { EstimatorError } from '../errors.ts';
import { Secret } from '../../service/index.ts';
import { createEstimatorInfluxWriter, type EstimatorInfluxOptions } from './influx-writer.ts';
import { MEASUREMENTS } from '../../contracts/index.ts';
import type { SeriesPoint } from '../engine/series-points.ts';

// The estimator's adapter over the shared writer (service/influx-writer.ts, whose batching,
// retry and drop logic service/influx-writer.test.ts covers): its config slice mapped onto the
// writer, failures as EstimatorError WW_ERR_ESTIMATOR_INFLUX_WRITE.

function options(url: string, overrides: Partial<EstimatorInfluxOptions> = {}): EstimatorInfluxOptions {
  return {
    url,
    database: 'db',
    retentionPolicy: 'autogen',
    token: new Secret(''),
    org: '-',
    batchSize: 50,
    flushIntervalMillis: 0,
    maxBufferLines: 10_000,
    minRetryDelayMillis: 20,
    maxRetryDelayMillis: 40,
    requestTimeoutMillis: 5_000,
    maxInFlightBatches: 3,
    ...overrides,
  };
}

function point(i: number): SeriesPoint {
  return { measurement: MEASUREMENTS.window, tags: { stream: 'j/k' }, fields: { loss_predicted: i }, timestampMillis: 1_700_000_000_000 + i };
}

let fake: FakeInflux | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

describe('createEstimatorInfluxWriter', () => {
  it('reports a 503 as a retriable EstimatorError (onError and a rejected flush) and writes the batch on retry', async () => {
    fake = await startFakeInflux();
    fake.answerFor = (index) => (index === 0 ? 503 : 204);
    const errors: EstimatorError[] = [];
    const writer = createEstimatorInfluxWriter(options(fake.url), (error) => errors.push(error));
    writer.write(Array.from({ length: 20 }, (_, i) => point(i)));
    const failure = await writer.flush().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(EstimatorError);
    expect(failure).toMatchObject({ code: 'WW_ERR_ESTIMATOR_INFLUX_WRITE', retriable: true });
    expect((failure as EstimatorError).message).toContain('bucket db/autogen');
    expect(errors.map((e) => [e.code, e.retriable])).toEqual([['WW_ERR_ESTIMATOR_INFLUX_WRITE', true]]);
    const served = fake;
    await served.until(() => served.bodies.flat().length >= 20);
    await writer.flush();
    expect(writer.stats()).toMatchObject({ pointsIn: 20, pointsWritten: 20, writeErrors: 1, failingWrites: 0 });
    await writer.close(1_000);
  });

  it('reports a 400 as a non-retriable EstimatorError and counts the batch as rejected; maxBufferLines bounds the buffer in points', async () => {
    fake = await startFakeInflux();
    fake.answerFor = () => 400;
    const writer = createEstimatorInfluxWriter(options(fake.url, { maxBufferLines: 3 }), () => {});
    writer.write([point(1), point(2), point(3), point(4), point(5)]);
    const failure = await writer.flush().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'WW_ERR_ESTIMATOR_INFLUX_WRITE', retriable: false });
    expect(writer.stats()).toMatchObject({ pointsIn: 5, pointsWritten: 0, buffered: 0, dropped: { overflow: 2, rejected: 3, 'no-fields': 0, closed: 0 } });
    await writer.close(1_000);
  });

  it('rejects a maxInFlightBatches outside 1..64', () => {
    expect(() => createEstimatorInfluxWriter(options('http://127.0.0.1:9', { maxInFlightBatches: 0 }), () => {})).toThrow(RangeError);
  });
});
