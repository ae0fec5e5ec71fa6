import { describe, it, expect } from 'vitest';
import fc from 'fast-check';
import {
  ALL_VALUE_MARKER,
  escapeGrafanaRegex,
  formatGrafanaInterval,
  interpolateInfluxQl,
  replaceInfluxMacros,
  replaceTemplateVariables,
} from './grafana-macros.ts';
import { DashboardsError } from './errors.ts';

// Expected strings below are written by hand from Grafana's sources: @grafana/data
// escapeRegex, the scenes `regex` variable formatter, pkg/tsdb/influxdb/models/query.go
// Build and grafana-plugin-sdk-go gtime.FormatInterval.

describe('grafana-macros', () => {
  describe('escapeGrafanaRegex', () => {
    it('escapes the slash so stream ids fit inside InfluxQL /.../ literals', () => {
      expect(escapeGrafanaRegex('matpow/k1.v2')).toBe('matpow\\/k1\\.v2');
    });

    it('escapes every character of escapeRegex and nothing else', () => {
      expect(escapeGrafanaRegex('\\^$*+?.()|[]{}/')).toBe('\\\\\\^\\$\\*\\+\\?\\.\\(\\)\\|\\[\\]\\{\\}\\/');
      expect(escapeGrafanaRegex('a-b_c:d e#f')).toBe('a-b_c:d e#f');
    });

    it('yields a regex that matches exactly the original value (property)', () => {
      fc.assert(
        fc.property(fc.string({ maxLength: 30 }), fc.string({ minLength: 1, maxLength: 3 }), (value, suffix) => {
          const pattern = new RegExp(`^${escapeGrafanaRegex(value)}$`);
          expect(pattern.test(value)).toBe(true);
          expect(pattern.test(value + suffix)).toBe(false);
        }),
      );
    });
  });

  describe('formatGrafanaInterval', () => {
    it('uses the largest whole unit, truncating', () => {
      expect(formatGrafanaInterval(10_000)).toBe('10s');
      expect(formatGrafanaInterval(90_000)).toBe('1m');
      expect(formatGrafanaInterval(1_500)).toBe('1s');
      expect(formatGrafanaInterval(999)).toBe('999ms');
      expect(formatGrafanaInterval(2 * 3_600_000)).toBe('2h');
      expect(formatGrafanaInterval(25 * 3_600_000)).toBe('1d');
      expect(formatGrafanaInterval(400 * 24 * 3_600_000)).toBe('1y');
    });

    it('returns 1ms below one millisecond and rejects negative or non-finite input', () => {
      expect(formatGrafanaInterval(0)).toBe('1ms');
      expect(() => formatGrafanaInterval(-1)).toThrow(RangeError);
      expect(() => formatGrafanaInterval(Number.NaN)).toThrow(RangeError);
    });
  });

  describe('replaceTemplateVariables', () => {
    it('regex-escapes a single value', () => {
      expect(replaceTemplateVariables('"stream" =~ /^$stream$/', { stream: { value: 'matpow/k1' } })).toBe('"stream" =~ /^matpow\\/k1$/');
    });

    it('turns a multi-value selection into an alternation and a one-element selection into the value', () => {
      expect(replaceTemplateVariables('/^$job$/', { job: { value: ['a', 'b.c'] } })).toBe('/^(a|b\\.c)$/');
      expect(replaceTemplateVariables('/^$job$/', { job: { value: ['a.b'] } })).toBe('/^a\\.b$/');
    });

    it('inserts a custom all value unescaped, or all options when there is none', () => {
      expect(replaceTemplateVariables('/^$job$/', { job: { value: ALL_VALUE_MARKER, allValue: '.*' } })).toBe('/^.*$/');
      expect(replaceTemplateVariables('/^$job$/', { job: { value: [ALL_VALUE_MARKER], options: ['x.y', 'z'] } })).toBe('/^(x\\.y|z)$/');
      expect(() => replaceTemplateVariables('/^$job$/', { job: { value: ALL_VALUE_MARKER } })).toThrow(DashboardsError);
    });

    it('supports ${var}, [[var]] and the raw format, and leaves unknown names alone', () => {
      const variables = { job: { value: 'a.b' } };
      expect(replaceTemplateVariables('${job}|[[job]]|${job:raw}|$jobs|$timeFilter|$__interval', variables)).toBe(
        'a\\.b|a\\.b|a.b|$jobs|$timeFilter|$__interval',
      );
    });

    it('rejects formats the InfluxQL substitution does not implement', () => {
      expect(() => replaceTemplateVariables('${job:csv}', { job: { value: 'a' } })).toThrow(/format "csv"/);
    });
  });

  describe('replaceInfluxMacros', () => {
    it('replaces $timeFilter with an inclusive millisecond range and the interval macros', () => {
      const text = replaceInfluxMacros('WHERE $timeFilter GROUP BY time($__interval) -- $interval $__interval_ms', {
        fromMillis: 1_000,
        toMillis: 61_000,
        intervalMillis: 10_000,
      });
      expect(text).toBe('WHERE time >= 1000ms and time <= 61000ms GROUP BY time(10s) -- 10s 10000');
    });

    it('raises a sub-millisecond interval to 1 ms and rejects an inverted range', () => {
      expect(replaceInfluxMacros('$__interval $__interval_ms', { fromMillis: 0, toMillis: 1, intervalMillis: 0.2 })).toBe('1ms 1');
      expect(() => replaceInfluxMacros('$timeFilter', { fromMillis: 2, toMillis: 1, intervalMillis: 1 })).toThrow(RangeError);
    });
  });

  describe('interpolateInfluxQl', () => {
    it('produces the text Grafana sends for a dashboard panel query', () => {
      const query =
        'SELECT mean("loss_measured") AS "loss_measured" FROM "warpwatch_window" WHERE "job" =~ /^$job$/ AND "n" =~ /^$n$/ AND $timeFilter GROUP BY time($__interval), "stream" fill(none)';
      const text = interpolateInfluxQl(query, {
        fromMillis: 1_700_000_000_000,
        toMillis: 1_700_000_600_000,
        intervalMillis: 20_000,
        variables: { job: { value: ['matpow', 'escape.time'] }, n: { value: ALL_VALUE_MARKER, allValue: '.*' } },
      });
      expect(text).toBe(
        'SELECT mean("loss_measured") AS "loss_measured" FROM "warpwatch_window" WHERE "job" =~ /^(matpow|escape\\.time)$/ AND "n" =~ /^.*$/ AND time >= 1700000000000ms and time <= 1700000600000ms GROUP BY time(20s), "stream" fill(none)',
      );
    });
  });
});
