/**
 * Greatest common divisor of two non-negative integers (Euclid); gcd(0, b) = b.
 *
 * @example gcd(12, 18) // 6
 */
export function gcd(a: number, b: number): number {
  let x = a;
  let y = b;
  while (y !== 0) {
    const r = x % y;
    x = y;
    y = r;
  }
  return x;
}
