import { describe, it, expect } from 'vitest';
import { FIELDS, TAGS } from '../contracts/index.ts';
import { quoteIdentifier, quoteString, renderInfluxQl, selectFrom, showTagValues } from './influxql-query.ts';
import { DashboardsError } from './errors.ts';

describe('influxql-query', () => {
  describe('selectFrom', () => {
    it('renders an aggregated, filtered, time-bucketed query with Grafana macros', () => {
      const text = selectFrom('window')
        .field(FIELDS.window.lossPredicted, { aggregation: 'mean' })
        .field(FIELDS.window.lossMeasured, { aggregation: 'max', alias: 'worst' })
        .whereVariable(TAGS.job, 'job')
        .whereEquals(TAGS.source, 'cuda')
        .timeFiltered()
        .groupByTime()
        .groupBy(TAGS.stream, TAGS.n)
        .fill('none')
        .render();
      expect(text).toBe(
        'SELECT mean("loss_predicted") AS "loss_predicted", max("loss_measured") AS "worst" FROM "warpwatch_window" ' +
          'WHERE "job" =~ /^$job$/ AND "source" = \'cuda\' AND $timeFilter GROUP BY time($__interval), "stream", "n" fill(none)',
      );
    });

    it('renders rates of counters, tag columns, ordering and limits', () => {
      expect(
        selectFrom('pipeline')
          .field(FIELDS.pipeline.framesIn, { aggregation: 'max', derivativeUnit: '1s' })
          .timeFiltered()
          .groupByTime('1m')
          .render(),
      ).toBe('SELECT non_negative_derivative(max("frames_in"), 1s) AS "frames_in" FROM "warpwatch_pipeline" WHERE $timeFilter GROUP BY time(1m)');
      expect(selectFrom('alert').tagColumn(TAGS.kind).field(FIELDS.alert.message).timeFiltered().newestFirst().limit(5).render()).toBe(
        'SELECT "kind"::tag AS "kind", "message" AS "message" FROM "warpwatch_alert" WHERE $timeFilter ORDER BY time DESC LIMIT 5',
      );
    });

    it('is immutable: a shared base query is not changed by later calls', () => {
      const base = selectFrom('window').field(FIELDS.window.lossCounts, { aggregation: 'mean' });
      base.whereVariable(TAGS.job, 'job');
      expect(base.render()).toBe('SELECT mean("loss_counts") AS "loss_counts" FROM "warpwatch_window"');
    });

    it('rejects statements InfluxQL would refuse, saying what is wrong', () => {
      const w = FIELDS.window;
      const cases: [() => string, RegExp][] = [
        [() => selectFrom('window').render(), /select list is empty/],
        [() => selectFrom('window').field(w.lossCounts, { aggregation: 'mean' }).field(w.lossMeasured).render(), /cannot mix aggregated and raw/],
        [() => selectFrom('window').field(w.lossCounts).groupByTime().render(), /needs an aggregation/],
        [() => selectFrom('window').field(w.lossCounts, { aggregation: 'mean' }).fill('0').render(), /fill\(0\) needs GROUP BY time/],
        [() => selectFrom('window').field(w.lossCounts, { aggregation: 'mean' }).groupByTime('soon').render(), /got "soon"/],
        [() => selectFrom('window').field(w.lossCounts).field(w.lossCounts).render(), /used twice/],
        [() => selectFrom('window').field(w.lossCounts).limit(0).render(), /positive integer, got 0/],
        [() => selectFrom('window').field(w.lossCounts, { derivativeUnit: '1s' }).render(), /needs an aggregation and GROUP BY time/],
        [() => selectFrom('alert').tagColumn(TAGS.kind).render(), /not only tags/],
        [() => selectFrom('window').field(w.lossCounts).whereVariable(TAGS.job, 'a b').render(), /got "a b"/],
      ];
      for (const [make, message] of cases) {
        expect(make).toThrow(DashboardsError);
        expect(make).toThrow(message);
      }
    });
  });

  describe('showTagValues', () => {
    it('renders a variable query narrowed by earlier variables', () => {
      expect(renderInfluxQl(showTagValues('window', TAGS.kernel, [[TAGS.job, 'job']]))).toBe(
        'SHOW TAG VALUES FROM "warpwatch_window" WITH KEY = "kernel" WHERE "job" =~ /^$job$/',
      );
      expect(renderInfluxQl(showTagValues('pipeline', TAGS.service))).toBe('SHOW TAG VALUES FROM "warpwatch_pipeline" WITH KEY = "service"');
    });
  });

  describe('quoting', () => {
    it('escapes quotes and backslashes in identifiers and string literals', () => {
      expect(quoteIdentifier('a"b\\c')).toBe('"a\\"b\\\\c"');
      expect(quoteString("it's\\")).toBe("'it\\'s\\\\'");
    });
  });
});
