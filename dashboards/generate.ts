/**
 * Entry point of `npm run dashboards`: writes the generated dashboards, alert rules and
 * provisioning files (see generated-artifacts.ts) relative to the repository root.
 * `dashboards/generate.test.ts` fails `npm test` when the committed files differ.
 */
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateArtifacts } from './generated-artifacts.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const artifact of generateArtifacts().artifacts) {
  const file = join(root, artifact.path);
  const unchanged = existsSync(file) && readFileSync(file, 'utf8') === artifact.content;
  if (!unchanged) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, artifact.content);
  }
  process.stdout.write(`${unchanged ? 'unchanged' : 'wrote    '} ${artifact.path}\n`);
}
