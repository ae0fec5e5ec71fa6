/**
 * The one logger type of both services (collector, estimator): a service creates it once, with
 * its prefix, and every line it says goes through it, so the prefix is written in one place.
 * The line sink (timestamp, stderr) belongs to the entry point (cli/commands/collect.ts,
 * cli/commands/estimate.ts) or to a test that collects the lines.
 */

/** How bad a line is; shown in the line when the logger shows levels. */
export type LogLevel = 'info' | 'warn' | 'error';

/** Where a logger's finished lines go (without a trailing newline). */
export type LogLineSink = (line: string) => void;

/** A service's logger; its methods are bound, so each may be passed on as a callback. */
export interface ServiceLogger {
  /** The service's prefix, e.g. `warpwatch collect`. */
  readonly prefix: string;
  /** Says `message` at `level`. */
  readonly log: (level: LogLevel, message: string) => void;
  readonly info: (message: string) => void;
  readonly warn: (message: string) => void;
  readonly error: (message: string) => void;
}

/** Settings of {@link createServiceLogger}. */
export interface ServiceLoggerOptions {
  /** What starts every line, e.g. `warpwatch estimate`. */
  readonly prefix: string;
  /**
   * Whether the level is part of the line: `<prefix> <level>: <message>` (the collector's
   * lines, docs/collector.md), else `<prefix>: <message>` (the estimator's, docs/estimator.md).
   */
  readonly showLevel: boolean;
  /** Where the lines go. */
  readonly write: LogLineSink;
}

/**
 * Creates a service's logger: each call writes one line, `<prefix> <level>: <message>` or,
 * without levels, `<prefix>: <message>`. Writes nothing else (no timestamp: the sink adds one).
 *
 * @example
 * const logger = createServiceLogger({ prefix: 'warpwatch estimate', showLevel: false, write: (line) => process.stderr.write(`${line}\n`) });
 * logger.info('stopped'); // "warpwatch estimate: stopped"
 * createServiceLogger({ prefix: 'warpwatch collect', showLevel: true, write }).warn('spooling'); // "warpwatch collect warn: spooling"
 */
export function createServiceLogger(options: ServiceLoggerOptions): ServiceLogger {
  const { prefix, write } = options;
  const log = (level: LogLevel, message: string): void => write(formatLogLine(options, level, message));
  return Object.freeze({
    prefix,
    log,
    info: (message: string) => log('info', message),
    warn: (message: string) => log('warn', message),
    error: (message: string) => log('error', message),
  });
}

/**
 * The line a logger with these settings writes for `message` at `level` (the one format of
 * {@link createServiceLogger}), for a function that returns a finished line rather than saying it.
 *
 * @example formatLogLine({ prefix: 'warpwatch collect', showLevel: true }, 'warn', 'spooling') // 'warpwatch collect warn: spooling'
 */
export function formatLogLine(options: Pick<ServiceLoggerOptions, 'prefix' | 'showLevel'>, level: LogLevel, message: string): string {
  return options.showLevel ? `${options.prefix} ${level}: ${message}` : `${options.prefix}: ${message}`;
}

/**
 * A line sink for a service run from the command line: each line on stderr after an ISO-8601
 * timestamp, as `warpwatch collect` and `warpwatch estimate` print them.
 *
 * @example createServiceLogger({ prefix: 'warpwatch collect', showLevel: true, write: stderrLineSink(process.stderr) });
 */
export function stderrLineSink(stream: { write(text: string): unknown }): LogLineSink {
  return (line) => {
    stream.write(`${new Date().toISOString()} ${line}\n`);
  };
}
