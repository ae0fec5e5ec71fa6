import { describe, expect, it } from 'vitest';
import { contextFromTraceparent } from '../adapters/estimator-telemetry.ts';
import { trace } from '@opentelemetry/api';
import { toLineProtocol } from '../adapters/influx-writer.ts';
import { FIELDS, MEASUREMENTS, TAGS } from '../../contracts/index.ts';

describe('series-points', () => {
  describe('toLineProtocol', () => {
    it('escapes tags and strings, sorts tags, writes integers as floats, and uses millisecond timestamps', () => {
      const line = toLineProtocol({
        measurement: MEASUREMENTS.alert,
        tags: { [TAGS.stream]: 'job a/k,1', [TAGS.device]: 'x=y', [TAGS.kind]: 'drift' },
        fields: { [FIELDS.alert.oldLevel]: 2, [FIELDS.alert.message]: 'say "hi" \\ now' },
        timestampMillis: 1_700_000_000_123,
      });
      expect(line).toBe('warpwatch_alert,device=x\\=y,kind=drift,stream=job\\ a/k\\,1 old_level=2.0,message="say \\"hi\\" \\\\ now" 1700000000123');
    });
  });
});

describe('estimator-telemetry', () => {
  describe('contextFromTraceparent', () => {
    it('carries a valid W3C traceparent as the remote parent span context', () => {
      const context = contextFromTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01');
      expect(trace.getSpanContext(context)).toEqual({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true });
    });
    it('ignores missing, malformed or all-zero headers', () => {
      for (const header of [undefined, 'garbage', '00-00000000000000000000000000000000-b7ad6b7169203331-01', 'ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01']) {
        expect(trace.getSpanContext(contextFromTraceparent(header))).toBeUndefined();
      }
    });
  });
});
