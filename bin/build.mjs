#!/usr/bin/env node
// Compiles the CLI to plain JavaScript in dist/ (run by `npm ci` and `npm pack` through the
// `prepare` script, or by hand: `node bin/build.mjs`). bin/warpwatch.mjs runs dist/ when it is
// at least as new as the TypeScript sources, and the sources through tsx otherwise, so a checkout
// never runs stale code. One bundle with code splitting: each subcommand is its own chunk, loaded
// only when it runs, so `warpwatch --version` loads little more than commander. npm packages stay
// external (installed as dependencies). The collector's validation worker is a second entry point,
// beside the chunks, where collector/frame-intake.ts looks for it.
import { build } from 'esbuild';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist');
const started = Date.now();
rmSync(outdir, { recursive: true, force: true });
mkdirSync(outdir, { recursive: true });
const result = await build({
  absWorkingDir: root,
  entryPoints: { main: 'cli/main.ts', 'validation-worker': 'collector/validation-worker.ts' },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: '[name]-[hash]',
  sourcemap: 'linked',
  logLevel: 'warning',
  metafile: true,
});
// The stamp bin/warpwatch.mjs compares with the sources' modification times.
// The sources this build was made from (the project's own files, not node_modules): the files
// bin/warpwatch.mjs compares with the stamp BUILT.
const sources = Object.keys(result.metafile.inputs).filter((path) => !path.includes('node_modules/'));
writeFileSync(join(outdir, 'sources.json'), `${JSON.stringify(sources)}\n`);
writeFileSync(join(outdir, 'BUILT'), `${new Date().toISOString()}\n`);
process.stderr.write(`warpwatch: compiled the CLI into dist/ in ${Date.now() - started} ms\n`);
