import { CompressionCodecs, CompressionTypes } from 'kafkajs';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createSeededRandom } from '../model/index.ts';
import { KAFKA_COMPRESSION_NAMES } from '../contracts/index.ts';
import { installKafkaCompressionCodecs, kafkaCompressionType, snappyCompressFramed, snappyDecompress, zstdCompressBuffer, zstdDecompressAny } from './kafka-compression.ts';

/** Bytes that compress somewhat (a frame-like mix of repeats and noise), seeded. */
function sample(length: number, seed: number): Buffer {
  const random = createSeededRandom(seed);
  const out = Buffer.alloc(length);
  for (let i = 0; i < length; i += 1) out[i] = random.nextFloat() < 0.7 ? i % 17 : random.nextInt(256);
  return out;
}

const codec = (type: CompressionTypes) => (CompressionCodecs as unknown as Record<number, () => { compress(e: { buffer: Buffer }): Promise<Buffer>; decompress(b: Buffer): Promise<Buffer> }>)[type]!();

describe('Kafka compression codecs for kafkajs (service/kafka-compression.ts)', () => {
  installKafkaCompressionCodecs();

  it('puts snappy, lz4 and zstd into kafkajs\' table, keeps its gzip, and maps every codec name', async () => {
    for (const type of [CompressionTypes.Snappy, CompressionTypes.LZ4, CompressionTypes.ZSTD]) {
      const data = sample(100_000, type);
      const packed = await codec(type).compress({ buffer: data });
      expect(packed.length).toBeLessThan(data.length);
      expect((await codec(type).decompress(packed)).equals(data)).toBe(true);
    }
    // gzip stays kafkajs' own: what it writes is plain gzip.
    const data = sample(10_000, 9);
    expect(gunzipSync(await codec(CompressionTypes.GZIP).compress({ buffer: data })).equals(data)).toBe(true);
    expect(KAFKA_COMPRESSION_NAMES.map(kafkaCompressionType)).toEqual([CompressionTypes.None, CompressionTypes.GZIP, CompressionTypes.Snappy, CompressionTypes.LZ4, CompressionTypes.ZSTD]);
  });

  it('writes snappy in the xerial framing of Kafka\'s Java client (magic, version 1, 32 KiB blocks) and reads it and plain snappy', () => {
    const data = sample(70_000, 3);
    const framed = snappyCompressFramed(data);
    expect([...framed.subarray(0, 16)]).toEqual([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00, 0, 0, 0, 1, 0, 0, 0, 1]);
    // Three blocks for 70,000 bytes: the lengths walk to the end exactly.
    let at = 16;
    let blocks = 0;
    while (at < framed.length) {
      at += 4 + framed.readInt32BE(at);
      blocks += 1;
    }
    expect(at).toBe(framed.length);
    expect(blocks).toBe(3);
    expect(snappyDecompress(framed).equals(data)).toBe(true);
    // Plain snappy (a producer without the framing): the first block alone is plain snappy of the first 32 KiB.
    const first = framed.subarray(20, 20 + framed.readInt32BE(16));
    expect(snappyDecompress(first).equals(data.subarray(0, 32 * 1024))).toBe(true);
    expect(snappyDecompress(snappyCompressFramed(Buffer.alloc(0))).length).toBe(0);
  });

  it('refuses a framed snappy batch that is cut short, and bytes that are not snappy', () => {
    const framed = snappyCompressFramed(sample(50_000, 4));
    expect(() => snappyDecompress(framed.subarray(0, framed.length - 10))).toThrow(/runs past the end/);
    expect(() => snappyDecompress(Buffer.concat([framed, Buffer.from([0, 0])]))).toThrow(/cut short/);
    expect(() => snappyDecompress(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]))).toThrow();
  });

  it('decompresses a zstd frame larger than the first buffer it tries, and refuses bytes that are not zstd', async () => {
    // 40 MiB of zeros compress to a few KiB: 8× the input is far too small, so the buffer grows.
    const zeros = Buffer.alloc(40 * 1024 * 1024);
    const packed = await zstdCompressBuffer(zeros);
    expect(packed.length).toBeLessThan(100_000);
    expect((await zstdDecompressAny(packed)).equals(zeros)).toBe(true);
    await expect(zstdDecompressAny(Buffer.from('not zstd at all'))).rejects.toThrow(/zstd/);
  }, 60_000);
});
