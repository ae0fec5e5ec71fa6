import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { FrameError, PROTOCOL_ERROR_CODES, ProtocolError } from './errors.ts';

describe('protocol errors', () => {
  it('lists every code in docs/errors.md and in SPEC.md', () => {
    const docs = readFileSync(fileURLToPath(new URL('../docs/errors.md', import.meta.url)), 'utf8');
    const spec = readFileSync(fileURLToPath(new URL('./SPEC.md', import.meta.url)), 'utf8');
    for (const code of PROTOCOL_ERROR_CODES) {
      expect(docs, code).toContain(`- \`${code}\` — `);
      expect(spec, code).toContain(code);
    }
  });

  it('makes FrameError a non-retriable ProtocolError carrying code, offset and cause', () => {
    const cause = new Error('inner');
    const error = new FrameError('WW_ERR_FRAME_TRUNCATED', 'frame header needs 16 bytes, got 3', { offset: 40, cause });
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ name: 'FrameError', code: 'WW_ERR_FRAME_TRUNCATED', retriable: false, offset: 40, cause });
  });
});
