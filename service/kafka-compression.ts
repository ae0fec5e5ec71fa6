/**
 * Kafka's compression codecs for kafkajs, which has only gzip of its own: snappy, lz4 and zstd
 * record batches are consumed (a topic whose `compression.type` is one of them, a MirrorMaker
 * copy, another producer) and can be produced (`--compression`, docs/stack.md § Compression).
 *
 * The packages (docs/stack.md § Compression says why these):
 * - snappy: `snappy` (napi-rs; prebuilt for linux x64/arm64, glibc and musl, as optional
 *   dependencies from the npm registry). Kafka's Java client writes snappy in the xerial
 *   framing (a magic header, then length-prefixed blocks); both it and plain snappy are read,
 *   and batches are written framed, as the Java client does.
 * - lz4: `lz4-napi` (napi-rs, prebuilt as above): the LZ4 frame format Kafka uses.
 * - zstd: `@bokuweb/zstd-wasm` (zstd compiled to WebAssembly, in the package: no native build,
 *   the same on every platform). A zstd frame written by a streaming compressor (the Java
 *   client's) does not say its size, so the output buffer grows until the frame fits, up to
 *   {@link MAX_DECOMPRESSED_BYTES}.
 *
 * kafkajs looks a codec up by the batch's attributes when it decodes a batch, and by the
 * producer's `compression` when it encodes one; {@link installKafkaCompressionCodecs} puts these
 * into its table once per process.
 */
import kafkajs from 'kafkajs';
import { KAFKA_COMPRESSION_NAMES } from '../contracts/index.ts';
import { compressFrame as lz4CompressFrame, decompressFrame as lz4DecompressFrame } from 'lz4-napi';
import { compressSync as snappyCompress, uncompressSync as snappyUncompress } from 'snappy';
import { compress as zstdCompress, decompress as zstdDecompress, init as zstdInit } from '@bokuweb/zstd-wasm';

// kafkajs is CommonJS and its codec table is not among the names Node's ESM loader detects: taken from the default export.
const { CompressionCodecs, CompressionTypes } = kafkajs;
type CompressionTypes = kafkajs.CompressionTypes;

/** One of the codecs a service can produce with (contracts' KAFKA_COMPRESSION_NAMES; `none` = uncompressed). */
export type KafkaCompression = (typeof KAFKA_COMPRESSION_NAMES)[number];

/**
 * kafkajs' compression type of a codec name.
 *
 * @example kafkaCompressionType('zstd') // CompressionTypes.ZSTD (4)
 */
export function kafkaCompressionType(compression: KafkaCompression): CompressionTypes {
  switch (compression) {
    case 'none':
      return CompressionTypes.None;
    case 'gzip':
      return CompressionTypes.GZIP;
    case 'snappy':
      return CompressionTypes.Snappy;
    case 'lz4':
      return CompressionTypes.LZ4;
    case 'zstd':
      return CompressionTypes.ZSTD;
  }
}

/** The largest batch a zstd frame without a size may decompress to (bytes): Kafka's records are at most a few MiB compressed. */
export const MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024;

/** The xerial framing's header: magic `\x82SNAPPY\x00`, version 1, compatible version 1. */
const XERIAL_HEADER = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1]);
/** Input bytes per framed snappy block (the Java client's default block size). */
const XERIAL_BLOCK_BYTES = 32 * 1024;

/**
 * Snappy data as Kafka writes it: xerial-framed blocks, or plain snappy.
 *
 * @throws Error when a block is cut short or is not snappy
 * @example snappyDecompress(snappyCompressFramed(Buffer.from('abc'))).toString() // 'abc'
 */
export function snappyDecompress(data: Buffer): Buffer {
  if (data.length < XERIAL_HEADER.length || !data.subarray(0, 8).equals(XERIAL_HEADER.subarray(0, 8))) return Buffer.from(snappyUncompress(data) as Buffer);
  const blocks: Buffer[] = [];
  let at = XERIAL_HEADER.length;
  while (at < data.length) {
    if (at + 4 > data.length) throw new Error(`snappy: a block length is cut short at byte ${at} of ${data.length}`);
    const size = data.readInt32BE(at);
    at += 4;
    if (size < 0 || at + size > data.length) throw new Error(`snappy: a block of ${size} bytes at byte ${at} runs past the end (${data.length})`);
    blocks.push(snappyUncompress(data.subarray(at, at + size)) as Buffer);
    at += size;
  }
  return Buffer.concat(blocks);
}

/**
 * Snappy in the xerial framing, as Kafka's Java producer writes it.
 *
 * @example snappyCompressFramed(Buffer.alloc(100_000)).subarray(0, 8) // the magic header
 */
export function snappyCompressFramed(data: Buffer): Buffer {
  const parts: Buffer[] = [XERIAL_HEADER];
  for (let at = 0; at < data.length; at += XERIAL_BLOCK_BYTES) {
    const block = snappyCompress(data.subarray(at, at + XERIAL_BLOCK_BYTES));
    const size = Buffer.alloc(4);
    size.writeInt32BE(block.length, 0);
    parts.push(size, block);
  }
  return Buffer.concat(parts);
}

let zstdReady: Promise<void> | undefined;
/** Loads zstd's WebAssembly once (on first use). */
function ensureZstd(): Promise<void> {
  zstdReady ??= zstdInit();
  return zstdReady;
}

/**
 * A zstd frame decompressed; one that does not say its size is tried in buffers of 8× its size
 * (at least 1 MiB), doubled while too small, up to {@link MAX_DECOMPRESSED_BYTES}.
 *
 * @throws Error when it is not zstd, or would decompress to more than the limit
 * @example await zstdDecompressAny(await zstdCompressBuffer(Buffer.from('abc'))) // <Buffer 61 62 63>
 */
export async function zstdDecompressAny(data: Buffer): Promise<Buffer> {
  await ensureZstd();
  let capacity = Math.max(1024 * 1024, 8 * data.length);
  for (;;) {
    try {
      const out = zstdDecompress(data, { defaultHeapSize: capacity });
      // Already a copy out of the WebAssembly heap: wrapped, not copied again.
      return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
    } catch (error) {
      if (capacity >= MAX_DECOMPRESSED_BYTES) throw new Error(`zstd: the batch does not decompress within ${MAX_DECOMPRESSED_BYTES} bytes: ${error instanceof Error ? error.message : String(error)}`);
      capacity = Math.min(MAX_DECOMPRESSED_BYTES, capacity * 2);
    }
  }
}

/** zstd at level 3 (Kafka's default level). */
export async function zstdCompressBuffer(data: Buffer): Promise<Buffer> {
  await ensureZstd();
  const out = zstdCompress(data, 3);
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

/** kafkajs' codec shape: `compress` gets its encoder (the batch's bytes in `buffer`). */
interface KafkajsCodec {
  compress(encoder: { buffer: Buffer }): Promise<Buffer>;
  decompress(buffer: Buffer): Promise<Buffer>;
}

const CODECS: Readonly<Record<'snappy' | 'lz4' | 'zstd', KafkajsCodec>> = {
  snappy: {
    compress: (encoder) => Promise.resolve(snappyCompressFramed(encoder.buffer)),
    decompress: (buffer) => Promise.resolve(snappyDecompress(buffer)),
  },
  lz4: {
    compress: (encoder) => lz4CompressFrame(encoder.buffer),
    decompress: (buffer) => lz4DecompressFrame(buffer),
  },
  zstd: {
    compress: (encoder) => zstdCompressBuffer(encoder.buffer),
    decompress: (buffer) => zstdDecompressAny(buffer),
  },
};

let installed = false;

/**
 * Puts the snappy, lz4 and zstd codecs into kafkajs' codec table (once per process; gzip is
 * kafkajs' own). Called by createKafkaClient, so every client of the services has them.
 *
 * @example installKafkaCompressionCodecs(); // a consumer now reads zstd batches
 */
export function installKafkaCompressionCodecs(): void {
  if (installed) return;
  const table = CompressionCodecs as unknown as Record<number, () => KafkajsCodec>;
  table[CompressionTypes.Snappy] = () => CODECS.snappy;
  table[CompressionTypes.LZ4] = () => CODECS.lz4;
  table[CompressionTypes.ZSTD] = () => CODECS.zstd;
  installed = true;
}
