import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 24 * 512;

/**
 * Creates a generator of W3C Trace Context `traceparent` values
 * (`00-<32 hex trace id>-<16 hex span id>-01`), one fresh random trace per produced message
 * so a frame can be followed from the collector through Kafka to the estimator. Random
 * bytes come from a pooled `randomFillSync` (one syscall per 512 ids, not per message).
 *
 * @example const nextTraceparent = createTraceparentGenerator(); nextTraceparent() // '00-4bf9...-00f0...-01'
 */
export function createTraceparentGenerator(): () => string {
  const pool = Buffer.allocUnsafe(POOL_BYTES);
  let at = POOL_BYTES;
  return () => {
    for (;;) {
      if (at + 24 > POOL_BYTES) {
        randomFillSync(pool);
        at = 0;
      }
      const traceId = pool.toString('hex', at, at + 16);
      const spanId = pool.toString('hex', at + 16, at + 24);
      at += 24;
      // All-zero ids are invalid per the spec (probability 2^-64, but cheap to exclude).
      if (traceId !== '00000000000000000000000000000000' && spanId !== '0000000000000000') return `00-${traceId}-${spanId}-01`;
    }
  };
}
