/**
 * Errors of contracts/: an argument that names part of a stream identity (job, kernel, stream,
 * host, device, label, group size, source) breaks the rules of stream-identity.ts; an existing
 * Kafka topic cannot take what a service sends or reads (topics.ts topicConfigProblems, said by
 * the collector and the estimator with WW_ERR_KAFKA_TOPIC_CONFIG). Listed in
 * docs/errors.md (test/policy/errors-doc.test.ts checks they match).
 */

/** Every error code contracts/ raises. */
export const CONTRACTS_ERROR_CODES = ['WW_ERR_STREAM_IDENTITY', 'WW_ERR_KAFKA_TOPIC_CONFIG'] as const;

/**
 * A stream-identity argument (a CLI flag, a WARPWATCH_* variable) that breaks the identity
 * rules; the message names the argument, the rule and what arrived. A `RangeError`, so the CLI
 * exits with code 2; never retriable.
 *
 * @example throw new StreamIdentityError("--job must not contain '/', got 'a/b'");
 */
export class StreamIdentityError extends RangeError {
  readonly code = 'WW_ERR_STREAM_IDENTITY';
  constructor(message: string) {
    super(message);
    this.name = 'StreamIdentityError';
  }
}
