import { Command, CommanderError } from 'commander';
import { UsageError } from './usage-error.ts';
import type { registerCollectCommand } from './commands/collect.ts';

/** How a subcommand module registers itself on the program. */
type Register = typeof registerCollectCommand;

/**
 * The subcommands: name, the one-line summary the top-level help lists, and the module that
 * registers the full command (options, help, action). Each lives in cli/commands/<name>.ts and
 * exports `registerXCommand(program)`; this is the only place that lists them. A module is
 * loaded only when its command runs (or for `--help` of everything), so `warpwatch --version`
 * and `warpwatch model ...` do not load kafkajs, the InfluxDB client or the OTel SDK.
 */
export const COMMANDS: readonly { readonly name: string; readonly summary: string; readonly load: () => Promise<Register> }[] = [
  { name: 'collect', summary: 'Run the host agent: frames from sockets, stdin or files into Kafka, nothing lost', load: async () => (await import('./commands/collect.ts')).registerCollectCommand },
  { name: 'estimate', summary: 'Run the estimator: Kafka frames into windowed predictions, measurements and alerts in InfluxDB', load: async () => (await import('./commands/estimate.ts')).registerEstimateCommand },
  { name: 'divergence', summary: 'Divergence-management cost: emulate the reconvergence stack, predict or fit it', load: async () => (await import('./commands/divergence.ts')).registerDivergenceCommand },
  { name: 'bound', summary: 'Finishing-time upper bound of n threads on one SM', load: async () => (await import('./commands/bound.ts')).registerBoundCommand },
  { name: 'transit', summary: 'Transit model: steady state of compute and memory flow, bound class', load: async () => (await import('./commands/transit.ts')).registerTransitCommand },
  { name: 'demo', summary: 'Run the reference workloads on the CPU backend and write a report', load: async () => (await import('./commands/demo.ts')).registerDemoCommand },
  { name: 'advise', summary: 'Design advice for a work distribution: group size, sorting, binning', load: async () => (await import('./commands/advise.ts')).registerAdviseCommand },
  { name: 'model', summary: 'Expected SIMT imbalance loss of a work distribution for group sizes n', load: async () => (await import('./commands/model.ts')).registerModelCommand },
  { name: 'run', summary: 'Run an instrumented workload and record its frames', load: async () => (await import('./commands/run.ts')).registerRunCommand },
  { name: 'analyze', summary: 'Decode frame files and compare predicted, counts-based and measured loss', load: async () => (await import('./commands/analyze.ts')).registerAnalyzeCommand },
  { name: 'compare', summary: 'Compare two frame files per stream: the change and whether it is beyond noise', load: async () => (await import('./commands/compare.ts')).registerCompareCommand },
];

/** The subcommand an argv names (`warpwatch <name> ...` or `warpwatch help <name>`), if any. */
function requestedCommand(argv: readonly string[]): string | undefined {
  const words = argv.slice(2).filter((word) => !word.startsWith('-'));
  const first = words[0] === 'help' ? words[1] : words[0];
  return COMMANDS.some((command) => command.name === first) ? first : undefined;
}

/**
 * Builds the `warpwatch` command tree. With `only`, just that subcommand is loaded in full and
 * the others are listed by name and summary (enough for `--help` and `--version`); without it,
 * every subcommand is loaded (what the docs-citation test walks).
 *
 * @example
 * const program = await createProgram('model'); // loads cli/commands/model.ts only
 */
export async function createProgram(only?: string | null): Promise<Command> {
  const program = new Command('warpwatch')
    .description('Measure and predict SIMT thread-imbalance loss of GPU kernels.')
    .version('0.1.0')
    .exitOverride()
    .showHelpAfterError(false);
  for (const command of COMMANDS) {
    if (only === null || (only !== undefined && command.name !== only)) {
      program.command(command.name).summary(command.summary).description(command.summary);
    } else {
      (await command.load())(program);
      program.commands.at(-1)?.summary(command.summary);
    }
  }
  for (const command of allCommands(program)) command.configureOutput({ outputError: (text, write) => write(usageLine(text, command)) });
  return program;
}

/** A command and every subcommand below it. */
function allCommands(command: Command): Command[] {
  return [command, ...command.commands.flatMap(allCommands)];
}

/** The full name of a command: `warpwatch divergence fit`. */
function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/**
 * Commander's one-line error as warpwatch says it: `warpwatch: ...` (not `error: ...`), and for
 * an unknown option or command, what is allowed there.
 *
 * @example usageLine("error: unknown option '--nope'\n", modelCommand)
 * // "warpwatch: unknown option '--nope' for 'warpwatch model'; allowed: --dist <spec>, --n <list>, ..., -h, --help\n"
 */
export function usageLine(text: string, command: Command): string {
  const first = (text.split('\n')[0] ?? '').replace(/^error: /, '');
  if (/^unknown option/.test(first)) {
    const allowed = command.options.map((option) => option.flags).concat(['-h, --help']);
    return `warpwatch: ${first} for '${commandPath(command)}'; allowed: ${allowed.join(', ')}\n`;
  }
  if (/^unknown command/.test(first)) {
    return `warpwatch: ${first}; commands: ${command.commands.map((c) => c.name()).join(', ')}\n`;
  }
  return `warpwatch: ${first}\n`;
}

/**
 * Runs the CLI with the given argv (as `process.argv`). Returns the exit code:
 * 0 success, 1 runtime failure, 2 bad flags or input (one line on stderr says what and what is allowed).
 */
export async function main(argv: readonly string[]): Promise<number> {
  const program = await createProgram(requestedCommand(argv) ?? null);
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
      // A usage error with a code of its own (a stream-identity rule, a service's config) says it.
      // A RangeError carrying a WW_ERR_* code (contracts' StreamIdentityError) is matched by its code, so that
      // starting the CLI does not load contracts/ (startup time, bench/cli-startup.bench.ts).
      const own = (error as { code?: unknown }).code;
      const code = error instanceof UsageError ? error.code : typeof own === 'string' && own.startsWith('WW_ERR_') ? own : 'WW_ERR_USAGE';
      process.stderr.write(`warpwatch: ${code === 'WW_ERR_USAGE' || error.message.includes(code) ? '' : `${code}: `}${error.message}\n`);
      return 2;
    }
    // Coded errors (WW_ERR_*, docs/errors.md) say their code, so the line can be looked up.
    const code = (error as { code?: unknown }).code;
    const prefix = typeof code === 'string' && code.startsWith('WW_ERR_') && !(error as Error).message.includes(code) ? `${code}: ` : '';
    process.stderr.write(`warpwatch: ${prefix}${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
}
