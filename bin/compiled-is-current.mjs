// Whether bin/warpwatch.mjs may run the compiled CLI in dist/ (see bin/build.mjs).
import { readFileSync, statSync } from 'node:fs';

/**
 * True when `<root>/dist/BUILT` exists and no source file listed in `<root>/dist/sources.json`
 * (the project files the build read) is newer than it. Listed files that do not exist are
 * ignored: an installed package ships dist/ without the TypeScript sources. False when
 * WARPWATCH_FROM_SOURCE=1 is set, or dist/ is missing or incomplete.
 *
 * @param {URL} root - the package root, as a directory URL ending in '/'
 * @param {Record<string, string | undefined>} env - the environment (process.env)
 * @returns {boolean}
 * @example compiledIsCurrent(new URL('../', import.meta.url), process.env)
 */
export function compiledIsCurrent(root, env) {
  if (env.WARPWATCH_FROM_SOURCE === '1') return false;
  let built;
  let sources;
  try {
    built = statSync(new URL('dist/BUILT', root)).mtimeMs;
    sources = JSON.parse(readFileSync(new URL('dist/sources.json', root), 'utf8'));
  } catch {
    return false;
  }
  if (!Array.isArray(sources)) return false;
  for (const source of sources) {
    let modified;
    try {
      modified = statSync(new URL(source, root)).mtimeMs;
    } catch {
      continue;
    }
    if (modified > built) return false;
  }
  return true;
}
