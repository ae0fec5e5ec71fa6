/**
 * Entry point of `npm run config-docs`: rewrites the env tables of the docs
 * (service/config-docs.ts CONFIG_DOC_TABLES) from the field definitions of
 * contracts/config-fields.ts. service/config-docs.test.ts fails when a committed doc differs.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CONFIG_DOC_TABLES, replaceGeneratedSections } from './config-docs.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
for (const [path, tables] of Object.entries(CONFIG_DOC_TABLES)) {
  const file = join(root, path);
  const before = readFileSync(file, 'utf8');
  const after = replaceGeneratedSections(before, tables);
  if (after !== before) writeFileSync(file, after);
  process.stdout.write(`${after === before ? 'unchanged' : 'wrote    '} ${path}\n`);
}
