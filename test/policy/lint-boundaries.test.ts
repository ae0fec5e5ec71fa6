/**
 * The folder boundaries of docs/architecture.md §2 are enforced by a lint rule
 * (eslint.config.js `folderBoundaries`) and by a kafkajs-only-in-adapters rule. These tests lint
 * small sources as if they lived in given folders, so a rule that stopped reporting fails here.
 */
import path from 'node:path';
import { ESLint, type Linter } from 'eslint';
import tseslint from 'typescript-eslint';
import { describe, expect, it } from 'vitest';
import { ADAPTER_FILES, ANALYSIS_NO_IO_RULES, ENGINE_PURITY, FOLDER_IMPORTS, folderBoundaries } from '../../eslint.config.js';

const root = path.resolve(import.meta.dirname, '../..');

const config: Linter.Config[] = [
  {
    files: ['**/*.ts'],
    languageOptions: { parser: tseslint.parser as Linter.Parser },
    plugins: {
      warpwatch: { rules: { 'folder-boundaries': folderBoundaries } },
      '@typescript-eslint': tseslint.plugin as unknown as ESLint.Plugin,
    },
    rules: {
      'warpwatch/folder-boundaries': 'error',
      '@typescript-eslint/no-restricted-imports': ['error', { paths: [{ name: 'kafkajs', message: 'adapter only', allowTypeImports: true }] }],
    },
  },
  { files: ['analysis/**/*.ts'], ignores: ['**/*.test.ts'], rules: ANALYSIS_NO_IO_RULES },
];

/** Lints `code` as the file `file` (relative to the repository root); returns the rule ids reported. */
async function ruleIds(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({ cwd: root, overrideConfigFile: true, overrideConfig: config });
  const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
  if (result === undefined) throw new Error('no lint result');
  return result.messages.map((m) => `${m.ruleId ?? 'parse'}: ${m.message}`);
}

describe('folder boundaries (lint)', () => {
  it('rejects an import past another folder’s index.ts and accepts the index', async () => {
    const deep = await ruleIds('cli/commands/example.ts', "import { x } from '../../estimator/config.ts';\nexport const y = x;\n");
    expect(deep).toEqual(['warpwatch/folder-boundaries: Import estimator/ through estimator/index.ts, not estimator/config.ts.']);
    expect(await ruleIds('cli/commands/example.ts', "import { x } from '../../estimator/index.ts';\nexport const y = x;\n")).toEqual([]);
    // Within its own folder a file imports anything.
    expect(await ruleIds('cli/commands/example.ts', "import { x } from '../advise/advice.ts';\nexport const y = x;\n")).toEqual([]);
  });

  it('rejects a folder that may not be imported, also by re-export and dynamic import', async () => {
    expect(await ruleIds('dashboards/example.ts', "export { x } from '../estimator/index.ts';\n")).toEqual([
      'warpwatch/folder-boundaries: dashboards/ may not import estimator/ (docs/architecture.md §2).',
    ]);
    expect(await ruleIds('contracts/example.ts', "export const m = () => import('../model/index.ts');\n")).toEqual([
      'warpwatch/folder-boundaries: contracts/ may not import model/ (docs/architecture.md §2).',
    ]);
    expect(await ruleIds('collector/example.ts', "import { x } from '../estimator/index.ts';\nexport const y = x;\n")).toHaveLength(1);
    expect(await ruleIds('estimator/example.ts', "import { x } from '../model/index.ts';\nexport const y = x;\n")).toEqual([]);
  });

  it('leaves tests and benchmarks free to reach internals, but not folders their own folder may not import', async () => {
    expect(await ruleIds('cli/commands/example.test.ts', "import { x } from '../../estimator/testing/test-support.ts';\nexport const y = x;\n")).toEqual([]);
    expect(await ruleIds('dashboards/example.test.ts', "import { x } from '../estimator/index.ts';\nexport const y = x;\n")).toHaveLength(1);
    expect(await ruleIds('test/integration/example.int.test.ts', "import { x } from '../../collector/disk-spool.ts';\nexport const y = x;\n")).toEqual([]);
    expect(await ruleIds('bench/example.bench.ts', "import { x } from '../model/loss/exact-loss.ts';\nexport const y = x;\n")).toEqual([]);
  });

  it('keeps testing/ fixtures to test code, and lets test code use model/ from any folder', async () => {
    expect(await ruleIds('collector/example.ts', "import { x } from './testing/frame-fixtures.ts';\nexport const y = x;\n")).toEqual([
      'warpwatch/folder-boundaries: Only tests and testing/ fixtures may import collector/testing/frame-fixtures.ts (test-only support).',
    ]);
    expect(await ruleIds('cli/commands/example.ts', "import { x } from '../../estimator/testing/test-support.ts';\nexport const y = x;\n")).toHaveLength(1);
    expect(await ruleIds('collector/example.test.ts', "import { x } from './testing/frame-fixtures.ts';\nexport const y = x;\n")).toEqual([]);
    expect(await ruleIds('collector/testing/example.ts', "import { x } from '../../protocol/frame-header.ts';\nexport const y = x;\n")).toEqual([]);
    expect(await ruleIds('service/example.test.ts', "import { x } from '../model/index.ts';\nexport const y = x;\n")).toEqual([]);
    expect(await ruleIds('service/example.ts', "import { x } from '../model/index.ts';\nexport const y = x;\n")).toEqual([
      'warpwatch/folder-boundaries: service/ may not import model/ (docs/architecture.md §2).',
    ]);
  });

  it('lets analysis/ import model/ and protocol/ but not cli/ or kernels/, and cli/ and bench/ import analysis/', async () => {
    expect(await ruleIds('analysis/example.ts', "import { x } from '../model/index.ts';\nexport const y = x;\n")).toEqual([]);
    expect(await ruleIds('analysis/example.ts', "import { x } from '../protocol/index.ts';\nexport const y = x;\n")).toEqual([]);
    expect(await ruleIds('analysis/example.ts', "import { x } from '../cli/usage-error.ts';\nexport const y = x;\n")).toEqual([
      'warpwatch/folder-boundaries: analysis/ may not import cli/ (docs/architecture.md §2).',
    ]);
    expect(await ruleIds('analysis/example.ts', "import { x } from '../kernels/index.ts';\nexport const y = x;\n")).toHaveLength(1);
    expect(await ruleIds('model/example.ts', "import { x } from '../analysis/index.ts';\nexport const y = x;\n")).toHaveLength(1);
    expect(await ruleIds('cli/commands/example.ts', "import { x } from '../../analysis/index.ts';\nexport const y = x;\n")).toEqual([]);
    expect(await ruleIds('cli/commands/example.ts', "import { x } from '../../analysis/advice.ts';\nexport const y = x;\n")).toEqual([
      'warpwatch/folder-boundaries: Import analysis/ through analysis/index.ts, not analysis/advice.ts.',
    ]);
    expect(await ruleIds('bench/example.bench.ts', "import { x } from '../analysis/advice.ts';\nexport const y = x;\n")).toEqual([]);
  });

  it('keeps analysis/ free of I/O: no Node built-ins, no packages, no process globals (its tests exempt)', async () => {
    expect(await ruleIds('analysis/example.ts', "import { readFileSync } from 'node:fs';\nexport const y = readFileSync;\n")).toEqual([
      "no-restricted-imports: 'node:fs' import is restricted from being used by a pattern. analysis/ does no I/O: it imports project folders only (no Node built-ins, no packages).",
    ]);
    expect(await ruleIds('analysis/example.ts', "import { spawn } from 'child_process';\nexport const y = spawn;\n")).toHaveLength(1);
    expect(await ruleIds('analysis/example.ts', "import { Command } from 'commander';\nexport const y = Command;\n")).toHaveLength(1);
    expect(await ruleIds('analysis/example.ts', 'export const y = process.env.HOME;\n')).toEqual(["no-restricted-globals: Unexpected use of 'process'."]);
    expect(await ruleIds('analysis/example.test.ts', "import { readFileSync } from 'node:fs';\nexport const y = readFileSync;\n")).toEqual([]);
    expect(await ruleIds('cli/example.ts', "import { readFileSync } from 'node:fs';\nexport const y = readFileSync;\n")).toEqual([]);
  });

  it('keeps kafkajs to type imports outside its adapter files', async () => {
    expect(await ruleIds('estimator/example.ts', "import { Kafka } from 'kafkajs';\nexport const k = Kafka;\n")).toHaveLength(1);
    expect(await ruleIds('estimator/example.ts', "import type { SASLOptions } from 'kafkajs';\nexport type S = SASLOptions;\n")).toEqual([]);
  });

  it('keeps the estimator engine free of adapters and I/O modules, also for types', async () => {
    const engineConfig: Linter.Config[] = [
      { files: ['**/*.ts'], languageOptions: { parser: tseslint.parser as Linter.Parser }, plugins: { '@typescript-eslint': tseslint.plugin as never } },
      ENGINE_PURITY,
    ];
    const lint = async (file: string, code: string): Promise<string[]> => {
      const eslint = new ESLint({ cwd: root, overrideConfigFile: true, overrideConfig: engineConfig });
      const [result] = await eslint.lintText(code, { filePath: path.join(root, file) });
      return (result?.messages ?? []).map((m) => m.ruleId ?? 'parse');
    };
    const engineFile = 'estimator/engine/example.ts';
    for (const source of ["'../adapters/kafka.ts'", "'../estimator-service.ts'", "'../config.ts'", "'node:fs'", "'net'", "'kafkajs'", "'@opentelemetry/api'"]) {
      expect(await lint(engineFile, `import { x } from ${source};\nexport const y = x;\n`), source).toEqual(['no-restricted-imports']);
    }
    expect(await lint(engineFile, "import type { EstimatorKafka } from '../adapters/kafka.ts';\nexport type K = EstimatorKafka;\n")).toEqual(['no-restricted-imports']);
    // The engine's own files, contracts/, model/ and protocol/ are fine; adapters and engine tests may do I/O.
    expect(await lint(engineFile, "import { a } from './stream-state.ts';\nimport { b } from '../../contracts/index.ts';\nimport { c } from '../errors.ts';\nexport const y = [a, b, c];\n")).toEqual([]);
    // service/index.ts loads the Kafka client and the InfluxDB writer: types only.
    expect(await lint(engineFile, "import { encodeLineProtocol } from '../../service/index.ts';\nexport const y = encodeLineProtocol;\n")).toEqual(['@typescript-eslint/no-restricted-imports']);
    expect(await lint(engineFile, "import type { InfluxPoint } from '../../service/index.ts';\nexport type P = InfluxPoint;\n")).toEqual([]);
    expect(await lint('estimator/adapters/example.ts', "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n")).toEqual([]);
    expect(await lint('estimator/engine/example.test.ts', "import { readFileSync } from 'node:fs';\nexport const r = readFileSync;\n")).toEqual([]);
  });

  it('matches the architecture table: every folder’s allowed imports are named there', async () => {
    const { readFile } = await import('node:fs/promises');
    const doc = await readFile(path.join(root, 'docs/architecture.md'), 'utf8');
    for (const [folder, allowed] of Object.entries(FOLDER_IMPORTS)) {
      const row = doc.split('\n').find((line) => line.startsWith(`| ${folder}/ |`));
      expect(row, `docs/architecture.md has a row for ${folder}/`).toBeDefined();
      const mayImport = (row ?? '').split('|')[3] ?? '';
      for (const other of allowed.filter((f) => f !== 'bin')) expect(mayImport, `${folder}/ row names ${other}`).toContain(other);
    }
    expect(Object.keys(ADAPTER_FILES)).toContain('kafkajs');
  });
});
