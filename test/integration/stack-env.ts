/**
 * What integration tests share: the server addresses the global setup provides, and the
 * shape of an InfluxQL `/query` answer.
 */

/**
 * Reads an environment variable set by test/integration/global-setup.ts.
 *
 * @throws Error naming the variable when it is missing or empty.
 * @example const brokers = requiredEnv('WARPWATCH_KAFKA_BROKERS').split(',');
 */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`${name} is not set; test/integration/global-setup.ts sets it`);
  return value;
}

/** One series of an InfluxQL answer (InfluxDB 1.x `/query` JSON). */
export interface InfluxSeries {
  name: string;
  tags?: Record<string, string>;
  columns: string[];
  values: unknown[][];
}

/** One statement's result of an InfluxQL answer. */
export interface InfluxResult {
  statement_id?: number;
  series?: InfluxSeries[];
  error?: string;
}
