/**
 * CRC-32C (Castagnoli): reflected polynomial 0x82F63B78, init 0xFFFFFFFF, final XOR 0xFFFFFFFF.
 * Table-driven, one byte per step; small and dependency-free (frames are at most 4 MiB, and
 * typical summaries are a few hundred bytes, so slicing-by-8 is not worth its table size).
 */

const CRC32C_TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
})();

/**
 * CRC-32C of `bytes`, as an unsigned 32-bit number. Pass a previous result as `previous` to
 * continue a running checksum over several chunks.
 *
 * @example crc32c(new TextEncoder().encode('123456789')) === 0xe3069283
 */
export function crc32c(bytes: Uint8Array, previous = 0): number {
  let c = ~previous >>> 0;
  for (let i = 0; i < bytes.length; i++) {
    c = CRC32C_TABLE[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  }
  return ~c >>> 0;
}
