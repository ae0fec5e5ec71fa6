// The container image must hold every project folder the CLI loads. The image's files come from
// the Dockerfile's COPY lines, so a new top-level folder that the CLI starts to import (as
// service/ did) breaks `collect` and `estimate` in the image with ERR_MODULE_NOT_FOUND. This
// check follows the CLI's imports as its compiled build does (bin/build.mjs: esbuild from
// cli/main.ts and the collector's validation worker, npm packages external) and needs neither
// Docker nor Kafka; test/integration/docker-image.int.test.ts then runs the assembled image.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Top-level project folders of every file esbuild reaches from the CLI's entry points. */
async function foldersTheCliLoads(): Promise<Set<string>> {
  const result = await build({
    absWorkingDir: root,
    entryPoints: ['cli/main.ts', 'collector/validation-worker.ts'],
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    packages: 'external',
    outdir: join(root, 'out', 'dockerfile-imports'),
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const folders = new Set<string>();
  for (const path of Object.keys(result.metafile.inputs)) {
    if (path.includes('node_modules/')) continue;
    const [first, ...rest] = path.split('/');
    if (first !== undefined && rest.length > 0) folders.add(first);
  }
  return folders;
}

/** Sources of the final stage's own COPY lines (not `--from=`), e.g. `cli`, `service`. */
function copiedIntoTheImage(): Set<string> {
  const text = readFileSync(join(root, 'Dockerfile'), 'utf8');
  const finalStage = text.slice(text.lastIndexOf('\nFROM '));
  const copied = new Set<string>();
  for (const line of finalStage.split('\n')) {
    const copy = /^COPY (?!--from)(.+) \S+$/.exec(line.trim());
    for (const source of copy?.[1]?.split(/\s+/) ?? []) copied.add(source.replace(/\/$/, ''));
  }
  return copied;
}

describe('the Dockerfile', () => {
  it('copies every project folder the CLI loads (cli, service, estimator, …)', async () => {
    const folders = await foldersTheCliLoads();
    // The walk must see the folders known to be loaded, or it proves nothing.
    for (const known of ['cli', 'collector', 'estimator', 'contracts', 'model', 'protocol', 'service']) expect(folders, known).toContain(known);
    const copied = copiedIntoTheImage();
    const missing = [...folders].filter((folder) => !copied.has(folder));
    expect(missing, `folders the CLI imports that the Dockerfile does not COPY: ${missing.join(', ')}`).toEqual([]);
  }, 60_000);
});
