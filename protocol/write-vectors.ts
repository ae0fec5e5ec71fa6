/**
 * Writes the TS-side golden vectors into protocol/vectors/ (entry point; run with
 * `npx tsx protocol/write-vectors.ts [DIR]`). The C++ tool `ww_vectors check` decodes them and
 * re-encodes them to the same bytes; protocol/golden-vectors.test.ts fails when the committed
 * files differ from what this would write.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sampleVectorFiles } from './sample-frames.ts';

const directory = process.argv[2] ?? join(fileURLToPath(new URL('.', import.meta.url)), 'vectors');
mkdirSync(directory, { recursive: true });
for (const [name, bytes] of sampleVectorFiles()) {
  writeFileSync(join(directory, name), bytes);
  process.stdout.write(`wrote ${name} (${bytes.length} bytes)\n`);
}
