import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { crc32c } from './crc32c.ts';

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

  it('continues a running checksum across any split of the input', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.nat(), (bytes, cut) => {
        const at = bytes.length === 0 ? 0 : cut % (bytes.length + 1);
        expect(crc32c(bytes.subarray(at), crc32c(bytes.subarray(0, at)))).toBe(crc32c(bytes));
      }),
    );
  });
});
