// bin/compiled-is-current.mjs: when bin/warpwatch.mjs may run dist/ instead of the sources.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain JavaScript module of bin/, without type declarations
import { compiledIsCurrent } from '../bin/compiled-is-current.mjs';

const isCurrent = compiledIsCurrent as (root: URL, env: Record<string, string | undefined>) => boolean;

describe('compiledIsCurrent', () => {
  let dir: string;
  let root: URL;
  const at = (seconds: number): Date => new Date(1_700_000_000_000 + seconds * 1000);
  const write = (path: string, text: string, seconds: number): void => {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), text);
    utimesSync(join(dir, path), at(seconds), at(seconds));
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'ww-compiled-'));
    root = pathToFileURL(`${dir}/`);
    write('cli/main.ts', 'x', 0);
    write('model/a.ts', 'x', 0);
    write('dist/sources.json', JSON.stringify(['cli/main.ts', 'model/a.ts']), 10);
    write('dist/BUILT', 'stamp', 10);
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is true when every listed source is older than the build', () => {
    expect(isCurrent(root, {})).toBe(true);
  });
  it('is false once a source the build read is edited after it', () => {
    utimesSync(join(dir, 'model/a.ts'), at(11), at(11));
    expect(isCurrent(root, {})).toBe(false);
  });
  it('ignores listed sources that are absent (an installed package ships none)', () => {
    rmSync(join(dir, 'cli'), { recursive: true });
    rmSync(join(dir, 'model'), { recursive: true });
    expect(isCurrent(root, {})).toBe(true);
  });
  it('is false without a build stamp, with a broken source list, or with WARPWATCH_FROM_SOURCE=1', () => {
    expect(isCurrent(root, { WARPWATCH_FROM_SOURCE: '1' })).toBe(false);
    write('dist/sources.json', '{not json', 10);
    expect(isCurrent(root, {})).toBe(false);
    rmSync(join(dir, 'dist/BUILT'));
    expect(isCurrent(root, {})).toBe(false);
  });
});
