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
  return replaceKafkajsExports<T>(path, binder, 'function', () => replacement);
}

/**
 * Replaces what kafkajs' module `path` exports with `replace(its exports)`, unless kafkajs has
 * already loaded `binder` (see {@link replaceKafkajsExport}); for a module that exports an
 * object of functions, `replace` returns a copy with some of them changed.
 *
 * @param kind - what the module must export for the replacement to happen
 * @returns the module's own exports, or undefined when nothing was replaced.
 * @example replaceKafkajsExports('./src/protocol/recordBatch/v0/index.js', './src/protocol/requests/produce/v3/request.js', 'object', (own) => ({ ...own, RecordBatch: mine }))
 */
export function replaceKafkajsExports<T>(path: string, binder: string, kind: 'function' | 'object', replace: (original: T) => T): T | undefined {
  try {
    const kafkajsRequire = createRequire(requireHere.resolve('kafkajs'));
    if (requireHere.cache[kafkajsRequire.resolve(binder)] !== undefined) return undefined;
    const resolved = kafkajsRequire.resolve(path);
    const original = kafkajsRequire(resolved) as T;
    const cached = requireHere.cache[resolved];
    if (typeof original !== kind || original === null || cached === undefined) return undefined;
    cached.exports = replace(original);
    return original;
  } catch {
    return undefined;
  }
}

/**
 * What kafkajs' module `path` exports at each call of the returned function: the module's own
 * export, or whatever replaced it in the module cache since.
 *
 * @throws Error when kafkajs or the file is not there.
 * @example const crc = liveKafkajsExport<(b: Buffer) => number>('./src/protocol/recordBatch/crc32C/index.js'); crc()(bytes)
 */
export function liveKafkajsExport<T>(path: string): () => T {
  const kafkajsRequire = createRequire(requireHere.resolve('kafkajs'));
  const resolved = kafkajsRequire.resolve(path);
  kafkajsRequire(resolved);
  const cached = requireHere.cache[resolved];
  if (cached === undefined) throw new Error(`kafkajs module ${path} is not in the module cache`);
  return () => cached.exports as T;
}
