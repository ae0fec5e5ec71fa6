import { describe, it, expect } from 'vitest';
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
