import { describe, it, expect } from 'vitest';
// The cross-check needs what the estimator writes (its point builders), beside what dashboards query.
// eslint-disable-next-line warpwatch/folder-boundaries
import { alertPoint, pipelinePoint, windowPoints, type AlertEvent, type WindowResult } from '../estimator/index.ts';
import { FIELDS, MEASUREMENTS } from '../contracts/index.ts';
import { MEASUREMENT_TAGS } from './influxql-query.ts';
import { findUnknownSeriesNames } from './series-references.ts';

describe('series-references', () => {
  describe('findUnknownSeriesNames', () => {
    it('accepts fields, tags and aliases the estimator writes', () => {
      expect(
        findUnknownSeriesNames(
          'SELECT mean("loss_predicted") AS "whatever" FROM "warpwatch_window" WHERE "job" =~ /^$job$/ AND $timeFilter GROUP BY "stream"',
        ),
      ).toEqual([]);
      expect(findUnknownSeriesNames('SHOW TAG VALUES FROM "warpwatch_pipeline" WITH KEY = "service"')).toEqual([]);
      expect(findUnknownSeriesNames('SELECT count("new_level") FROM "warpwatch_alert" WHERE "kind" = \'drift\'')).toEqual([]);
    });

    it('reports a field that belongs to another measurement', () => {
      expect(findUnknownSeriesNames('SELECT mean("frames_in") FROM "warpwatch_window"')).toEqual(['field or tag "frames_in" of warpwatch_window']);
    });

    it('reports unknown measurements, tags and tag values', () => {
      expect(findUnknownSeriesNames('SELECT mean("x") FROM "warpwatch_windows"')).toEqual(['measurement "warpwatch_windows"']);
      expect(findUnknownSeriesNames('SELECT mean("loss_counts") FROM "warpwatch_window" GROUP BY "gpu"')).toEqual([
        'field or tag "gpu" of warpwatch_window',
      ]);
      expect(findUnknownSeriesNames('SELECT count("message") FROM "warpwatch_alert" WHERE "kind" = \'rising\'')).toEqual([
        "value 'rising' of tag \"kind\"",
      ]);
      expect(findUnknownSeriesNames('SELECT 1')).toEqual(['no FROM "<measurement>" in query: SELECT 1']);
    });
  });
});

describe('MEASUREMENT_TAGS', () => {
  it('matches the tag keys the estimator writes on each measurement', () => {
    const identity = { stream: 'j/k', job: 'j', kernel: 'k', device: 'd', groupSize: 32, source: 'cpu', deviceUuid: '00000000-0000-0000-0000-000000000000', host: 'h', labels: { pod: 'p', namespace: 'ns', node: 'n7' } } as const;
    const result: WindowResult = {
      identity,
      startMillis: 0,
      endMillis: 10_000,
      launches: 1,
      groups: 1,
      units: 32,
      lossPredicted: 1.5,
      lossPredictedLow: 1.4,
      lossPredictedHigh: 1.6,
      lossPredictedStandardError: 0.05,
      lossCounts: 1.5,
      lossMeasured: 1.6,
      workloadLossPredicted: 1.3,
      workloadLossMeasured: 1.4,
      etaPredictedCounts: 0,
      etaCountsMeasured: 0.06,
      etaPredictedMeasured: 0.06,
      lossQ50: 1.5,
      lossQ90: 1.8,
      lossQ99: 2,
      quantileMethod: 'exact',
      binningErrorBound: 0,
      sweep: [{ groupSize: 8, lossPredicted: 1.2, workloadLossPredicted: 1.1 }],
      fit: { family: 'pois', parameters: { lambda: 3 }, logLikelihood: -10, aic: 22 },
      sampled: {
        groups: 12,
        invalidGroups: 0,
        lossMeasured: 1.5,
        lossCounts: 1.4,
        laneIdleFraction: 0.3,
        countIcc: 0.01,
        divergence: { iterationTicks: 40, deltaTicks: 25, deltaStandardError: 3, spillTicks: 170, overheadTicks: 100, rSquared: 0.9, groups: 12 },
      },
      histogram: [{ low: 0, high: 0, count: 32, probability: 1 }],
    };
    const alert: AlertEvent = {
      kind: 'drift',
      identity,
      timeMillis: 0,
      series: 'measured_over_predicted',
      oldLevel: 1,
      newLevel: 1.3,
      statistic: 0.3,
      evidence: { detector: 'threshold', windowsSinceChange: 1, changeStartMillis: 0, baselineSigma: undefined, threshold: 0.2, windowMillis: 10_000 },
      message: 'drift',
    };
    const counters = { framesIn: 1, framesOut: 1, framesRejected: 0, framesDropped: 0, consumerLag: 0, windowLatencyMillis: 5, influxWriteErrors: 0 };
    const labelTags = ['pod', 'namespace', 'node'];
    const points = [...windowPoints(result, { includeHistogram: true, labelTags }), alertPoint(alert, labelTags), pipelinePoint('i', counters, 0)];
    const keyOf = new Map((Object.keys(MEASUREMENTS) as (keyof typeof MEASUREMENTS)[]).map((key) => [MEASUREMENTS[key] as string, key]));
    const seen = new Set<string>();
    for (const point of points) {
      const key = keyOf.get(point.measurement);
      if (key === undefined) throw new Error(`unknown measurement ${point.measurement}`);
      seen.add(key);
      expect(Object.keys(point.tags).sort(), point.measurement).toEqual([...MEASUREMENT_TAGS[key]].sort());
      const fields = new Set<string>(Object.values(FIELDS[key]));
      expect(Object.keys(point.fields).filter((f) => !fields.has(f)), point.measurement).toEqual([]);
    }
    expect([...seen].sort()).toEqual(Object.keys(MEASUREMENTS).sort());
  });
});
