// Types of the named exports of eslint.config.js that test/policy/lint-boundaries.test.ts imports.
import type { Linter, Rule } from 'eslint';

/** Which project folders each folder may import (docs/architecture.md §2). */
export declare const FOLDER_IMPORTS: Readonly<Record<string, readonly string[]>>;
/** Client libraries of external systems → the adapter files allowed to load them. */
export declare const ADAPTER_FILES: Readonly<Record<string, readonly string[]>>;
/** The rules that keep analysis/ free of I/O (no Node built-ins, no packages, no process globals). */
export declare const ANALYSIS_NO_IO_RULES: Linter.RulesRecord;
/** The config block that keeps estimator/engine/ free of adapters and I/O modules. */
export declare const ENGINE_PURITY: Linter.Config;
/** The lint rule that enforces FOLDER_IMPORTS and index-only imports. */
export declare const folderBoundaries: Rule.RuleModule;
declare const config: Linter.Config[];
export default config;
