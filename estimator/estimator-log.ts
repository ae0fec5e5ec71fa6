import { createServiceLogger, formatLogLine, type LogLineSink, type ServiceLogger } from '../service/index.ts';

/** The prefix of every line the estimator says (docs/estimator.md). */
export const ESTIMATOR_LOG_PREFIX = 'warpwatch estimate';

/** The estimator's lines: `warpwatch estimate: <message>`, no level shown. */
const ESTIMATOR_LOG_FORMAT = { prefix: ESTIMATOR_LOG_PREFIX, showLevel: false } as const;

/**
 * The estimator's logger (service/service-logger.ts), created once per service by startEstimator.
 *
 * @example createEstimatorLogger((line) => process.stderr.write(`${line}\n`)).info('stopped'); // "warpwatch estimate: stopped"
 */
export function createEstimatorLogger(write: LogLineSink): ServiceLogger {
  return createServiceLogger({ ...ESTIMATOR_LOG_FORMAT, write });
}

/**
 * The line the estimator's logger writes for `message`, for functions that return a finished line.
 *
 * @example estimatorLogLine('stopped') // 'warpwatch estimate: stopped'
 */
export function estimatorLogLine(message: string): string {
  return formatLogLine(ESTIMATOR_LOG_FORMAT, 'info', message);
}
