import type { Command } from 'commander';
import { UsageError } from './usage-error.ts';

/**
 * When a flag applies (flags that do not apply are errors, never silently ignored).
 * Each command lists its rules in one table; {@link rejectFlagsThatDoNotApply} checks them all
 * and names every misplaced flag in one line.
 *
 * @example
 * const RUN_RULES: FlagRule<{ workload: string }>[] = [
 *   { flag: '--csv', applies: (c) => c.workload === 'divergence', only: 'the divergence workload' },
 * ];
 */
export interface FlagRule<Context> {
  /** The flag as typed, e.g. `--csv`. */
  readonly flag: string;
  /** Whether the flag means something in this context. */
  readonly applies: (context: Context) => boolean;
  /** Where it applies, completing "`<flag>` applies to … only", e.g. `the divergence workload`. */
  readonly only: string;
  /** What the context is instead, said in brackets after the rule (e.g. `the workload is matpow`). */
  readonly instead?: (context: Context) => string;
}

/** The commander attribute name of a long flag: `--max-iter` → `maxIter`. */
function attributeOf(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/**
 * Whether the user typed a flag on the command line (a default value does not count).
 *
 * @example given(command, '--seed') // false for `warpwatch model --dist geo(0.5)`
 */
export function given(command: Command, flag: string): boolean {
  return command.getOptionValueSource(attributeOf(flag)) === 'cli';
}

/**
 * Checks a command's flag table: every flag typed on the command line whose rule does not apply
 * in this context is named, with where it applies.
 *
 * @throws UsageError (exit 2) naming each misplaced flag: `--csv applies to the divergence workload only (the workload is matpow)`, several joined by `; `
 * @example rejectFlagsThatDoNotApply(command, { workload: 'matpow' }, RUN_RULES);
 */
export function rejectFlagsThatDoNotApply<Context>(command: Command, context: Context, rules: readonly FlagRule<Context>[]): void {
  const misplaced = rules
    .filter((rule) => given(command, rule.flag) && !rule.applies(context))
    .map((rule) => `${rule.flag} applies to ${rule.only} only${rule.instead === undefined ? '' : ` (${rule.instead(context)})`}`);
  if (misplaced.length > 0) throw new UsageError(misplaced.join('; '));
}
