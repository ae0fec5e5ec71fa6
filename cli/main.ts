import { Command, CommanderError } from 'commander';
import { UsageError } from './usage-error.ts';
import { registerCollectCommand } from './commands/collect.ts';
import { registerEstimateCommand } from './commands/estimate.ts';
import { registerDivergenceCommand } from './commands/divergence.ts';
import { registerBoundCommand } from './commands/bound.ts';
import { registerTransitCommand } from './commands/transit.ts';
import { registerDemoCommand } from './commands/demo.ts';
import { registerAdviseCommand } from './commands/advise.ts';
import { registerModelCommand } from './commands/model.ts';
import { registerRunCommand } from './commands/run.ts';
import { registerAnalyzeCommand } from './commands/analyze.ts';
// Subcommands: one import and one register call per file in cli/commands/.

/**
 * Builds the `warpwatch` command tree. Each subcommand lives in cli/commands/<name>.ts and
 * exports `registerXCommand(program)`; this is the only place that lists them.
 */
export function createProgram(): Command {
  const program = new Command('warpwatch')
    .description('Measure and predict SIMT thread-imbalance loss of GPU kernels.')
    .version('0.1.0')
    .exitOverride()
    .showHelpAfterError(false)
    .configureOutput({ outputError: (text, write) => write(text.split('\n')[0] + '\n') });
  registerCollectCommand(program);
  registerEstimateCommand(program);
  registerDivergenceCommand(program);
  registerBoundCommand(program);
  registerTransitCommand(program);
  registerDemoCommand(program);
  registerAdviseCommand(program);
  registerModelCommand(program);
  registerRunCommand(program);
  registerAnalyzeCommand(program);
  return program;
}

/**
 * Runs the CLI with the given argv (as `process.argv`). Returns the exit code:
 * 0 success, 1 runtime failure, 2 bad flags or input (one line on stderr says what and what is allowed).
 */
export async function main(argv: readonly string[]): Promise<number> {
  const program = createProgram();
  for (const sub of program.commands) sub.exitOverride();
  try {
    await program.parseAsync([...argv]);
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      return 2; // commander already printed its one-line message
    }
    if (error instanceof UsageError || error instanceof RangeError) {
      process.stderr.write(`warpwatch: ${error.message}\n`);
      return 2;
    }
    // Coded errors (WW_ERR_*, docs/errors.md) say their code, so the line can be looked up.
    const code = (error as { code?: unknown }).code;
    const prefix = typeof code === 'string' && code.startsWith('WW_ERR_') && !(error as Error).message.includes(code) ? `${code}: ` : '';
    process.stderr.write(`warpwatch: ${prefix}${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
