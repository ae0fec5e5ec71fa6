/**
 * The relative error η(a, b) = |(a − b)/a| of `value` b against the `reference` a, the one
 * definition every output uses (docs/model.md §2c), e.g. η(μ_A, μ_S): how far the counts-based
 * loss is from the prediction.
 *
 * Zero denominator: η is not defined when the reference is 0 (0/0 and b/0 alike: there is no
 * scale to be relative to), and this returns undefined then; likewise when either value is
 * missing. Each caller says what an undefined η becomes in its output (the estimator leaves the
 * field out, `warpwatch analyze` prints 0 for 0/0 and ∞ for b/0, the demo NaN). Otherwise the
 * quotient is returned as IEEE arithmetic gives it: Infinity when it overflows (a tiny reference,
 * a huge value), NaN from an infinite reference or a NaN input; callers that store only finite
 * numbers check for that.
 *
 * @param reference a, the denominator (e.g. the prediction)
 * @param value b, compared with it
 * @returns |(a − b)/a| (a fraction: 0.25 is 25 %), or undefined when a is 0 or either is missing
 * @example relativeError(2, 1.5) // 0.25
 * @example relativeError(0, 0) // undefined
 */
export function relativeError(reference: number | undefined, value: number | undefined): number | undefined {
  if (reference === undefined || value === undefined || reference === 0) return undefined;
  return Math.abs((reference - value) / reference);
}
