import { describe, it, expect } from 'vitest';
import { readFileSync, existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';

const root = fileURLToPath(new URL('../..', import.meta.url));
const folders = ['contracts', 'model', 'protocol', 'collector', 'estimator', 'dashboards', 'cli', 'deploy', 'kernels', 'python'];

/** Collects every `*_ERROR_CODES` array exported by a folder's errors.ts. */
async function codesInCode(): Promise<Set<string>> {
  const codes = new Set<string>(['WW_ERR_USAGE']);
  for (const folder of folders) {
    const file = join(root, folder, 'errors.ts');
    if (!existsSync(file)) continue;
    const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (name.endsWith('_ERROR_CODES') && Array.isArray(value)) for (const code of value) codes.add(String(code));
    }
  }
  return codes;
}

describe('docs/errors.md', () => {
  it('lists exactly the error codes the code defines', async () => {
    const documented = new Set(readFileSync(join(root, 'docs', 'errors.md'), 'utf8').match(/WW_ERR_[A-Z0-9_]+/g) ?? []);
    const defined = await codesInCode();
    expect([...defined].filter((c) => !documented.has(c)).sort()).toEqual([]);
    expect([...documented].filter((c) => !defined.has(c)).sort()).toEqual([]);
  });
});
