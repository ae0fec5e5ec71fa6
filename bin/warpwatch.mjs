#!/usr/bin/env node
// The warpwatch CLI. Runs the compiled JavaScript in dist/ (bin/build.mjs, run by `npm ci` and
// `npm pack` through `prepare`) when it is there and no source it was built from is newer;
// otherwise runs the TypeScript sources through tsx, so a checkout never runs stale code.
// WARPWATCH_FROM_SOURCE=1 forces the sources.
import { compiledIsCurrent } from './compiled-is-current.mjs';

// A reader that stopped reading (`warpwatch model --help | head -1`) closes the pipe: the output
// is not wanted any more, so the command ends quietly, as other Unix tools do, not with a stack trace.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
    throw error;
  });
}

let main;
if (compiledIsCurrent(new URL('../', import.meta.url), process.env)) {
  ({ main } = await import('../dist/main.js'));
} else {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import('../cli/main.ts'));
}
process.exitCode = await main(process.argv);
