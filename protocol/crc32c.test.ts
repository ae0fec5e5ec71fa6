import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32c, crc32cImplementation, crc32cPortable, NATIVE_CRC32C_MIN_BYTES } from './crc32c.ts';

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

describe('crc32c', () => {
  it('gives the published check value of CRC-32C for "123456789"', () => {
    expect(crc32c(ascii('123456789'))).toBe(0xe3069283);
  });

  it('gives 0 for no bytes and the RFC 3720 (iSCSI) values for 32 zero and 32 0xFF bytes', () => {
    expect(crc32c(new Uint8Array(0))).toBe(0);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
  });

  it('agrees with a bit-at-a-time CRC-32C for every length 0..80 and any start offset (slicing-by-8 tail and body)', () => {
    const bitwise = (bytes: Uint8Array): number => {
      let c = 0xffffffff;
      for (const byte of bytes) {
        c ^= byte;
        for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
      }
      return (c ^ 0xffffffff) >>> 0;
    };
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 90 }), fc.nat({ max: 80 }), fc.nat({ max: 9 }), (bytes, length, start) => {
        const view = bytes.subarray(Math.min(start, bytes.length), Math.min(start + length, bytes.length));
        expect(crc32c(view)).toBe(bitwise(view));
      }),
      { numRuns: 500 },
    );
  });

  it('uses the native addon on this platform (linux x64: @node-rs/crc32 ships a prebuilt binary)', () => {
    expect(crc32cImplementation).toBe('native');
  });

  it('native and portable agree for every length across the 256-byte switch and any running start value', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: NATIVE_CRC32C_MIN_BYTES - 40, maxLength: 4_200 }), fc.nat({ max: 4_200 }), fc.integer({ min: 0, max: 0xffffffff }), (bytes, length, previous) => {
        const view = bytes.subarray(0, Math.min(length, bytes.length));
        expect(crc32c(view, previous)).toBe(crc32cPortable(view, previous));
      }),
      { numRuns: 300 },
    );
    // The published check value through the native path: "123456789" repeated past the switch.
    const long = ascii('123456789'.repeat(40));
    expect(long.length).toBeGreaterThanOrEqual(NATIVE_CRC32C_MIN_BYTES);
    expect(crc32c(long)).toBe(crc32cPortable(long));
  });

  it('continues a running checksum across any split of the input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 1_000 }), fc.nat(), (bytes, cut) => {
        const at = bytes.length === 0 ? 0 : cut % (bytes.length + 1);
        expect(crc32c(bytes.subarray(at), crc32c(bytes.subarray(0, at)))).toBe(crc32c(bytes));
      }),
    );
  });
});
