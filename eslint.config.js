// ESLint flat config: typescript-eslint type-aware rules, no floating promises, no `export *`,
// and a boundary rule that keeps model/ pure (no Node built-ins, no other project folder).
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import { builtinModules } from 'node:module';

const nodeBuiltins = [...builtinModules, ...builtinModules.map((m) => `node:${m}`)];
const projectFolders = ['protocol', 'kernels', 'collector', 'estimator', 'dashboards', 'cli', 'deploy', 'bench', 'test'];

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
    files: ['vitest.config.ts', 'eslint.config.js'],
    rules: { 'no-restricted-syntax': 'off' },
  },
);
