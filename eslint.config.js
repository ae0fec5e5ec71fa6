// ESLint flat config: typescript-eslint type-aware rules, no floating promises, no `export *`,
// a rule that keeps model/ pure (no Node built-ins, no other project folder), and the folder
// boundaries of docs/architecture.md §2 (which folder may import which, through its index.ts
// only; client libraries of external systems only in their adapter files).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';
import path from 'node:path';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const projectFolders = ['protocol', 'kernels', 'collector', 'estimator', 'dashboards', 'cli', 'deploy', 'bench', 'test', 'contracts', 'service'];

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
  dashboards: ['contracts'],
  deploy: ['contracts', 'dashboards', 'collector', 'estimator', 'service'],
  cli: ['contracts', 'model', 'protocol', 'service', 'kernels', 'collector', 'estimator', 'dashboards', 'deploy', 'bin'],
};

/**
 * Client libraries of external systems and the adapter files allowed to load them (type-only
 * imports are allowed anywhere: they load nothing). Tests and benchmarks are exempt.
 */
export const ADAPTER_FILES = {
  kafkajs: ['service/kafka-client.ts', 'collector/kafka-producer.ts', 'estimator/kafka.ts'],
};

/** The boundary rule: an import of another folder must be allowed and go through its index.ts. */
export const folderBoundaries = {
  meta: { type: 'problem', schema: [], messages: { folder: '{{from}}/ may not import {{to}}/ (docs/architecture.md §2).', deep: 'Import {{to}}/ through {{to}}/index.ts, not {{target}}.' } },
  create(context) {
    const root = import.meta.dirname;
    const file = path.relative(root, context.filename);
    const from = file.split(path.sep)[0];
    const allowed = FOLDER_IMPORTS[from];
    // Test files may reach another allowed folder's internals (fixtures, test support).
    const isTest = /\.test\.ts$/.test(file);
    if (allowed === undefined) return {};
    const check = (node) => {
      const source = node.source;
      if (source === null || source === undefined || source.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const target = path.relative(root, path.resolve(path.dirname(context.filename), source.value)).split(path.sep).join('/');
      const to = target.split('/')[0];
      if (to === from || !projectFolders.concat(['model', 'bin']).includes(to)) return;
      if (!allowed.includes(to)) context.report({ node: source, messageId: 'folder', data: { from, to } });
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
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { ...globals.node } },
  },
  {
    files: ['vitest.config.ts', 'eslint.config.js', 'eslint.config.d.ts'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
