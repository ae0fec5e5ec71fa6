/**
 * The one way warpwatch puts a function of its own in place of one of kafkajs' modules
 * (kafkajs 2.2.4 is its last release and takes no other CRC-32C, record decoder or encoder):
 * the module's export is replaced in Node's module cache, before the kafkajs module that binds
 * it is loaded. Used by kafka-native-crc.ts and kafka-record-codec.ts.
 */
import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/**
 * A module of kafkajs, by its path inside the package.
 *
 * @throws Error when kafkajs or the file is not there.
 * @example requireKafkajs<{ prototype: object }>('./src/protocol/encoder.js')
 */
export function requireKafkajs<T>(path: string): T {
  return createRequire(requireHere.resolve('kafkajs'))(path) as T;
}

/**
 * Replaces the function kafkajs' module `path` exports with `replacement`, unless kafkajs has
 * already loaded `binder`, the module that takes that function once, when it is loaded.
 *
 * @returns kafkajs' own function, or undefined when nothing was replaced (kafkajs' files not
 *   where version 2.2.4 has them, the export not a function, or `binder` already loaded).
 * @example const own = replaceKafkajsExport('./src/protocol/recordBatch/crc32C/index.js', './src/protocol/recordBatch/v0/index.js', myCrc)
 */
export function replaceKafkajsExport<T>(path: string, binder: string, replacement: T): T | undefined {
  try {
    const kafkajsRequire = createRequire(requireHere.resolve('kafkajs'));
    if (requireHere.cache[kafkajsRequire.resolve(binder)] !== undefined) return undefined;
    const resolved = kafkajsRequire.resolve(path);
    const original = kafkajsRequire(resolved) as T;
    const cached = requireHere.cache[resolved];
    if (typeof original !== 'function' || cached === undefined) return undefined;
    cached.exports = replacement;
    return original;
  } catch {
    return undefined;
  }
}
