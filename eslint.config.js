// ESLint flat config: typescript-eslint type-aware rules, no floating promises, no `export *`,
// rules that keep model/ pure (no Node built-ins, no other project folder) and analysis/ free of
// I/O (no Node built-ins, no packages), and the folder
// boundaries of docs/architecture.md §2 (which folder may import which, through its index.ts
// only; client libraries of external systems only in their adapter files).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';
import path from 'node:path';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const projectFolders = ['analysis', 'protocol', 'kernels', 'collector', 'estimator', 'dashboards', 'cli', 'deploy', 'bench', 'test', 'contracts', 'service'];

/**
 * Which project folders each folder may import (docs/architecture.md §2, "may import").
 * Folders not listed here (bench/, test/) may import anything, also past index.ts.
 */
export const FOLDER_IMPORTS = {
  contracts: [],
  model: [],
  protocol: ['contracts', 'model'],
  service: ['contracts'],
  kernels: ['contracts', 'model', 'protocol'],
  collector: ['contracts', 'protocol', 'service'],
  estimator: ['contracts', 'model', 'protocol', 'service'],
  analysis: ['contracts', 'model', 'protocol', 'estimator'],
  dashboards: ['contracts'],
  deploy: ['contracts', 'dashboards', 'collector', 'estimator', 'service'],
  cli: ['contracts', 'model', 'protocol', 'service', 'analysis', 'kernels', 'collector', 'estimator', 'dashboards', 'deploy', 'bin'],
};

/**
 * Client libraries of external systems and the adapter files allowed to load them (type-only
 * imports are allowed anywhere: they load nothing). Tests and benchmarks are exempt.
 */
export const ADAPTER_FILES = {
  kafkajs: ['service/kafka-client.ts', 'service/kafka-compression.ts', 'collector/kafka-producer.ts', 'estimator/adapters/kafka.ts'],
};

/**
 * The estimator's engine (estimator/engine/, docs/estimator.md "Layout") is pure: I/O is passed in.
 * Its files import no adapter (estimator/adapters/), not the service wiring or the config loader,
 * no Node built-in and no client library of an external system, not even for types. Tests in
 * estimator/engine/ are exempt (they drive the engine with real frames and the service's fitter).
 */
export const ENGINE_PURITY = {
  files: ['estimator/engine/**/*.ts'],
  ignores: ['estimator/engine/**/*.test.ts'],
  rules: {
    'no-restricted-imports': [
      'error',
      {
        paths: [...nodeBuiltins, 'kafkajs'].map((name) => ({ name, message: 'estimator/engine/ is pure: no I/O modules (I/O is passed in).' })),
        patterns: [
          { group: ['@opentelemetry/*', '@influxdata/*', 'kafkajs/*'], message: 'estimator/engine/ is pure: no client library of an external system.' },
          { group: ['../adapters', '../adapters/*', '../estimator-service.ts', '../config.ts', '../index.ts'], message: 'estimator/engine/ imports no adapter, service wiring or config loader.' },
        ],
      },
    ],
    // service/index.ts also loads the services' I/O (Kafka client, InfluxDB writer): the engine takes its types only.
    '@typescript-eslint/no-restricted-imports': [
      'error',
      { paths: [{ name: '../../service/index.ts', message: 'estimator/engine/ takes only types from service/ (its values do I/O).', allowTypeImports: true }] },
    ],
  },
};

/**
 * analysis/ is domain code between model/ and cli/ (docs/architecture.md §2): it computes on what
 * it is given and reads, writes, spawns and connects nothing, so it imports project folders only
 * (no Node built-ins, no packages) and uses no process-level globals. Its tests are exempt.
 */
export const ANALYSIS_NO_IO_RULES = {
  'no-restricted-imports': ['error', { patterns: [{ regex: '^[^.]', message: 'analysis/ does no I/O: it imports project folders only (no Node built-ins, no packages).' }] }],
  'no-restricted-globals': ['error', 'process', 'Buffer', 'require', '__dirname', 'fetch', 'setTimeout', 'setInterval'],
};

/**
 * The boundary rule: an import of another folder must be allowed and go through its index.ts.
 * Test code — `*.test.ts` files and each folder's `testing/` subfolder of test-only fixtures — may
 * reach an allowed folder's internals and may use model/ from any folder (a pure leaf: seeded
 * generators, distributions); other code may not import a `testing/` module, not even its own.
 */
export const folderBoundaries = {
  meta: { type: 'problem', schema: [], messages: { folder: '{{from}}/ may not import {{to}}/ (docs/architecture.md §2).', deep: 'Import {{to}}/ through {{to}}/index.ts, not {{target}}.', testing: 'Only tests and testing/ fixtures may import {{target}} (test-only support).' } },
  create(context) {
    const root = import.meta.dirname;
    const file = path.relative(root, context.filename);
    const from = file.split(path.sep)[0];
    const allowed = FOLDER_IMPORTS[from];
    // Test code (test files and testing/ fixtures) may reach another allowed folder's internals.
    const isTest = /\.test\.ts$/.test(file) || file.split(path.sep).includes('testing');
    if (allowed === undefined) return {};
    const check = (node) => {
      const source = node.source;
      if (source === null || source === undefined || source.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = path.relative(root, path.resolve(path.dirname(context.filename), source.value)).split(path.sep).join('/');
      const to = target.split('/')[0];
      if (!isTest && target.split('/').includes('testing')) {
        context.report({ node: source, messageId: 'testing', data: { target } });
        return;
      }
      if (to === from || !projectFolders.concat(['model', 'bin']).includes(to)) return;
      if (!allowed.includes(to) && !(isTest && to === 'model')) context.report({ node: source, messageId: 'folder', data: { from, to } });
      else if (to !== 'bin' && !isTest && target !== `${to}/index.ts`) context.report({ node: source, messageId: 'deep', data: { to, target } });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export default tseslint.config(
  { ignores: ['node_modules/**', 'kernels/build/**', '**/generated/**', '.cache/**', 'out/**', 'test-output/**', 'dist/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'No `export *`: name each export in index.ts.' },
        { selector: 'ExportDefaultDeclaration', message: 'No default exports.' },
      ],
    },
  },
  {
    files: ['**/*.ts'],
    plugins: { warpwatch: { rules: { 'folder-boundaries': folderBoundaries } } },
    rules: { 'warpwatch/folder-boundaries': 'error' },
  },
  ...Object.entries(ADAPTER_FILES).map(([library, adapters]) => ({
    files: ['**/*.ts'],
    ignores: [...adapters, 'test/**', 'bench/**', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: library, message: `${library} is loaded only by its adapter files: ${adapters.join(', ')}.`, allowTypeImports: true }] },
      ],
    },
  })),
  ENGINE_PURITY,
  {
    files: ['model/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: nodeBuiltins.map((name) => ({ name, message: 'model/ is pure: no Node built-ins.' })),
          patterns: [
            {
              group: projectFolders.flatMap((f) => [`../${f}`, `../${f}/*`, `../../${f}`, `../../${f}/*`]),
              message: 'model/ imports nothing of the project.',
            },
          ],
        },
      ],
      'no-restricted-globals': ['error', 'process', 'Buffer', 'require', '__dirname', 'setTimeout', 'setInterval'],
    },
  },
  { files: ['analysis/**/*.ts'], ignores: ['**/*.test.ts'], rules: ANALYSIS_NO_IO_RULES },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['vitest.config.ts', 'eslint.config.js', 'eslint.config.d.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
