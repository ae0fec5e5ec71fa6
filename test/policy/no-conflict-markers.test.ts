// No tracked file holds a leftover merge-conflict marker (a docs page once shipped with one).
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const TEXT = /\.(ts|mjs|js|json|md|yaml|yml|cpp|hpp|cuh|cu|txt|sh|toml|xml|cmake|in)$|(^|\/)(Dockerfile|CMakeLists\.txt|run)$/;

describe('the repository', () => {
  it('has no merge-conflict markers in tracked text files', () => {
    const listed = spawnSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
    expect(listed.status).toBe(0);
    const files = listed.stdout.split('\0').filter((path) => TEXT.test(path));
    expect(files.length).toBeGreaterThan(100);
    const marked: string[] = [];
    for (const path of files) {
      let text: string;
      try {
        text = readFileSync(join(root, path), 'utf8');
      } catch {
        continue; // listed but deleted in the work tree
      }
      text.split('\n').forEach((line, index) => {
        if (/^(<{7}|>{7}) |^={7}$/.test(line)) marked.push(`${path}:${index + 1}: ${line}`);
      });
    }
    expect(marked).toEqual([]);
  });
});
