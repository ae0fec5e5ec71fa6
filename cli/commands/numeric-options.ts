import { UsageError } from '../usage-error.ts';

/**
 * Parses a numeric flag value; throws UsageError naming the flag, what arrived and what is allowed.
 *
 * @example parseNumberOption('--peak', '1.5', { min: 0, exclusiveMin: true }) // → 1.5
 */
export function parseNumberOption(
  flag: string,
  text: string,
  constraints: { min?: number; max?: number; exclusiveMin?: boolean; integer?: boolean } = {},
): number {
  const { min, max, exclusiveMin = false, integer = false } = constraints;
  const allowed = `${integer ? 'a decimal integer' : 'a decimal number'}${min === undefined ? '' : exclusiveMin ? ` > ${min}` : ` ≥ ${min}`}${max === undefined ? '' : ` ≤ ${max}`}`;
  // Strict syntax: Number() would also take ' 5', '0x10', '1e3' and ''.
  const syntax = integer ? /^-?\d+$/ : /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;
  if (!syntax.test(text)) throw new UsageError(`${flag} must be ${allowed}, got '${text}'`);
  const value = Number(text);
  if (integer && !Number.isSafeInteger(value)) throw new UsageError(`${flag} must be ${allowed}; integers above 2^53−1 = 9007199254740991 are not exact, got '${text}'`);
  const bad = !Number.isFinite(value) || (min !== undefined && (exclusiveMin ? value <= min : value < min)) || (max !== undefined && value > max);
  if (bad) throw new UsageError(`${flag} must be ${allowed}, got '${text}'`);
  return value;
}

/**
 * Parses a comma-separated list of non-negative integers (e.g. lane trip counts).
 *
 * @example parseIntegerListOption('--bounds', '32,32,31') // → [32, 32, 31]
 */
export function parseIntegerListOption(flag: string, text: string): number[] {
  const parts = text.split(',');
  if (parts.some((p) => !/^\d+$/.test(p))) {
    throw new UsageError(`${flag} must be a comma-separated list of non-negative decimal integers (no spaces), got '${text}'`);
  }
  const large = parts.find((p) => !Number.isSafeInteger(Number(p)));
  if (large !== undefined) throw new UsageError(`${flag}: ${large} is above 2^53−1 = 9007199254740991 (not exact), in '${text}'`);
  return parts.map(Number);
}

/** Formats a number for text output: integers as is, others with 4 significant digits. */
export function formatQuantity(value: number | undefined): string {
  if (value === undefined) return 'n/a';
  if (Number.isInteger(value)) return String(value);
  return Number(value.toPrecision(4)).toString();
}
