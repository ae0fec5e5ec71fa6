import { kafkaTlsFailure } from './kafka-security.ts';
/**
 * What to try when Kafka or InfluxDB does not answer, said once: `npm run stack -- up`
 * when the address is the local stack's default, otherwise the variable (and flag) that set it.
 * Used by the collector, the estimator and the CLI commands that talk to the servers, so every
 * one of them gives the same advice.
 */
import { LOCAL_STACK_FIELDS } from '../contracts/index.ts';

/**
 * The addresses of the local stack (`npm run stack -- up`, docs/stack.md), from its field
 * definitions (LOCAL_STACK_FIELDS): also the defaults of WARPWATCH_KAFKA_BROKERS and
 * WARPWATCH_INFLUX_URL in the services' field definitions.
 */
export const LOCAL_STACK_ADDRESSES = Object.freeze({ kafkaBrokers: LOCAL_STACK_FIELDS.kafkaBrokers.default.join(','), influxUrl: LOCAL_STACK_FIELDS.influxUrl.default });

/** The variables that point the services at a server. */
const VARIABLES = { kafka: 'WARPWATCH_KAFKA_BROKERS', influx: 'WARPWATCH_INFLUX_URL' } as const;

/**
 * The advice for a server that does not answer at `address`.
 *
 * @param server which server
 * @param address the broker list (`host:port,...`) or URL that was tried
 * @param flag the command's flag that also sets the address, if it has one (`--brokers`, `--influx-url`)
 * @example unreachableServerHint('kafka', '127.0.0.1:19092')
 * // 'is the local stack running? start it with `npm run stack -- up` (or point WARPWATCH_KAFKA_BROKERS at a running Kafka)'
 * @example unreachableServerHint('influx', 'http://influx:8086', '--influx-url')
 * // 'check WARPWATCH_INFLUX_URL (or --influx-url): nothing answers at http://influx:8086'
 */
export function unreachableServerHint(server: 'kafka' | 'influx', address: string, flag?: string): string {
  const name = server === 'kafka' ? 'Kafka' : 'InfluxDB';
  const local = server === 'kafka' ? LOCAL_STACK_ADDRESSES.kafkaBrokers : LOCAL_STACK_ADDRESSES.influxUrl;
  if (address.replace(/\/+$/, '') === local) {
    return `is the local stack running? start it with \`npm run stack -- up\` (or point ${VARIABLES[server]} at a running ${name})`;
  }
  return `check ${VARIABLES[server]}${flag === undefined ? '' : ` (or ${flag})`}: nothing answers at ${address}`;
}

/** Messages of a server that is not there (refused, unknown host, timed out), as Node and kafkajs say them. */
const UNREACHABLE = /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|ECONNRESET|Connection error|Connection timeout|KafkaJSConnectionError|KafkaJSNumberOfRetriesExceeded|does not answer|fetch failed/;

/**
 * Whether an error says that the server could not be reached at all (rather than refusing a
 * request: a login, a certificate, a malformed line), looking through `cause` chains.
 *
 * @example isUnreachableError(new Error('connect ECONNREFUSED 127.0.0.1:19092')) // true
 */
export function isUnreachableError(error: unknown): boolean {
  // A TLS handshake that failed reached the server: it is a certificate problem, not an outage.
  if (kafkaTlsFailure(error) !== undefined) return false;
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    const text = e instanceof Error ? `${e.name} ${e.message} ${String((e as { code?: unknown }).code ?? '')}` : String(e);
    if (UNREACHABLE.test(text)) return true;
    e = e instanceof Error ? (e.cause ?? (e as { originalError?: unknown }).originalError) : undefined;
  }
  return false;
}
