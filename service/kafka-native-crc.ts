/**
 * kafkajs computes the CRC-32C of every record batch it produces in JavaScript
 * (kafkajs/src/protocol/recordBatch/crc32C), byte by byte: ~65 µs for an 18 KB checkpoint record,
 * a third of the CPU of writing it (docs/estimator.md, The dedupe memory at steady state). kafkajs
 * 2.2.4 is its last release, and it offers no way to pass another function. So before a client
 * produces its first batch, {@link installNativeKafkaCrc32c} replaces that module's export in
 * Node's module cache with the native SIMD CRC-32C of `@node-rs/crc32` (the one protocol/crc32c.ts
 * uses for frames), for batches of 256 bytes and more; below that kafkajs' own is faster. The
 * values are the same (service/kafka-native-crc.test.ts compares them; the broker checks every
 * batch's CRC, so every Kafka integration test would fail on a wrong one). Where the addon cannot
 * load, or kafkajs already encoded a batch with its own, nothing changes.
 */
import { createRequire } from 'node:module';
import { replaceKafkajsExport } from './kafkajs-patch.ts';

const requireHere = createRequire(import.meta.url);

/** Batches from this size up use the native CRC (below it the addon call costs more). */
const NATIVE_FROM_BYTES = 256;

let installed: boolean | undefined;
let nativeCrc: ((input: Uint8Array) => number) | undefined;
let portableCrc: ((buffer: Buffer) => number) | undefined;

/**
 * The CRC-32C that kafkajs' record batch encoder calls once {@link installNativeKafkaCrc32c}
 * succeeded: native from 256 bytes, kafkajs' own below (unsigned, as kafkajs' module returns it).
 *
 * @example batchCrc32c(Buffer.from('123456789')) // 0xe3069283
 */
export function batchCrc32c(buffer: Buffer): number {
  if (nativeCrc !== undefined && buffer.length >= NATIVE_FROM_BYTES) return nativeCrc(buffer) >>> 0;
  if (portableCrc === undefined) throw new Error('batchCrc32c before installNativeKafkaCrc32c');
  return portableCrc(buffer);
}

/**
 * Makes kafkajs use the native CRC-32C for the record batches it produces from now on; once per
 * process (later calls return the first answer).
 *
 * @returns true when kafkajs now uses the native CRC; false when `@node-rs/crc32` cannot load,
 *   kafkajs' files are not where version 2.2.4 has them, or kafkajs has already bound its own.
 * @example installNativeKafkaCrc32c(); const kafka = new Kafka({ brokers });
 */
export function installNativeKafkaCrc32c(): boolean {
  if (installed !== undefined) return installed;
  installed = false;
  try {
    const native = (requireHere('@node-rs/crc32') as { crc32c?: (input: Uint8Array) => number }).crc32c;
    if (typeof native !== 'function') return false;
    // recordBatch/v0 takes the CRC function once, when it is first loaded: too late after that.
    const portable = replaceKafkajsExport<(buffer: Buffer) => number>('./src/protocol/recordBatch/crc32C/index.js', './src/protocol/recordBatch/v0/index.js', batchCrc32c);
    if (portable === undefined) return false;
    nativeCrc = native;
    portableCrc = portable;
    installed = true;
  } catch {
    installed = false;
  }
  return installed;
}
