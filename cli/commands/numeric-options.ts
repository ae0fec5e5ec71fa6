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
  const value = Number(text);
  const { min, max, exclusiveMin = false, integer = false } = constraints;
  const allowed = `${integer ? 'an integer' : 'a number'}${min === undefined ? '' : exclusiveMin ? ` > ${min}` : ` ≥ ${min}`}${max === undefined ? '' : ` ≤ ${max}`}`;
  const bad =
    text.trim() === '' ||
    !Number.isFinite(value) ||
    (integer && !Number.isSafeInteger(value)) ||
    (min !== undefined && (exclusiveMin ? value <= min : value < min)) ||
    (max !== undefined && value > max);
  if (bad) throw new UsageError(`${flag} must be ${allowed}, got '${text}'`);
  return value;
}

/**
 * Parses a comma-separated list of non-negative integers (e.g. lane trip counts).
 *
 * @example parseIntegerListOption('--bounds', '32,32,31') // → [32, 32, 31]
 */
export function parseIntegerListOption(flag: string, text: string): number[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => !/^\d+$/.test(p) || !Number.isSafeInteger(Number(p)))) {
    throw new UsageError(`${flag} must be a comma-separated list of non-negative integers, got '${text}'`);
  }
  return parts.map(Number);
}

/** Formats a number for text output: integers as is, others with 4 significant digits. */
export function formatQuantity(value: number | undefined): string {
  if (value === undefined) return 'n/a';
  if (Number.isInteger(value)) return String(value);
  return Number(value.toPrecision(4)).toString();
}
