/**
 * Kafka topics the pipeline uses, defined once for the collector (which produces frames and
 * DLQ records), the estimator (which consumes frames and produces the others) and the CLI.
 * Each service's config can rename them (WARPWATCH_*_TOPIC).
 *
 * @example
 * consumer.subscribe({ topic: TOPICS.frames });
 */
export const TOPICS = {
  frames: 'warpwatch.frames',
  dlq: 'warpwatch.dlq',
  distributions: 'warpwatch.distributions',
  alerts: 'warpwatch.alerts',
  estimatorCheckpoints: 'warpwatch.estimator.checkpoints',
} as const;
