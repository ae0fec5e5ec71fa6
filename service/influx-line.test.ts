import { describe, expect, it } from 'vitest';
import { encodeLineProtocol } from './influx-line.ts';

describe('encodeLineProtocol', () => {
  it('sorts tags, leaves out empty ones, writes integers as floats, quotes strings and escapes per the line-protocol reference', () => {
    const line = encodeLineProtocol({
      measurement: 'my measure,x',
      tags: { zone: 'a b', app: 'k=v,w', empty: '' },
      fields: { count: 5, ratio: -0.25, note: 'say "hi" \\o/' },
      timestampMillis: 1_700_000_000_000.4,
    });
    expect(line).toBe('my\\ measure\\,x,app=k\\=v\\,w,zone=a\\ b count=5.0,ratio=-0.25,note="say \\"hi\\" \\\\o/" 1700000000000');
  });
});
