/**
 * Test-only reference: model/distributions/fit-parametric.ts as it was before the window model's cache-miss
 * path was made cheaper (docs/estimator.md, Performance), kept verbatim (imports adjusted) so the
 * property tests can check the current code against it bit for bit (Object.is). Not for use
 * outside tests.
 */
/**
 * Parametric fit (docs/model.md §2d): which of Poisson, geometric, negative binomial, binomial and
 * discrete uniform describes observed work best, by maximum likelihood and AIC.
 */
import { CategoricalDistribution, type WeightInput } from '../../distributions/categorical-distribution.ts';
import { ModelError } from '../../errors.ts';
import { familyLogPmf, type FamilySpec } from '../../distributions/family.ts';
import { logFactorial, logGamma } from '../../numerics/special-functions.ts';

/** One fitted family. */
export interface ParametricFit {
  readonly family: 'pois' | 'geo' | 'nbinom' | 'binom' | 'unif';
  /** MLE parameters by name (lambda; p; r and p; trials and p; low and high). */
  readonly parameters: Readonly<Record<string, number>>;
  /** The fitted distribution as a spec (feed it to CategoricalDistribution.fromFamily). */
  readonly spec: FamilySpec;
  /** Σ count·ln P(value) at the MLE. */
  readonly logLikelihood: number;
  /** 2·(number of parameters) − 2·logLikelihood; smaller is better. */
  readonly aic: number;
}

interface Sample {
  readonly values: readonly number[];
  readonly counts: Float64Array;
  readonly total: number;
  readonly mean: number;
  readonly variance: number;
  readonly min: number;
  readonly max: number;
}

function logLikelihoodOf(sample: Sample, spec: FamilySpec): number {
  let sum = 0;
  for (let j = 0; j < sample.values.length; j++) sum += sample.counts[j]! * familyLogPmf(spec, sample.values[j]!);
  return sum;
}

/** NB profile log-likelihood in r with p = r/(r + mean) (the MLE of p for a given r). */
function negativeBinomialProfile(sample: Sample, r: number): number {
  const p = r / (r + sample.mean);
  const logP = Math.log(p);
  const logQ = Math.log1p(-p);
  const lgR = logGamma(r);
  let sum = 0;
  for (let j = 0; j < sample.values.length; j++) {
    const k = sample.values[j]!;
    sum += sample.counts[j]! * (logGamma(k + r) - lgR - logFactorial(k) + r * logP + k * logQ);
  }
  return sum;
}

/** Maximises f on [low, high] (unimodal near the optimum) by golden-section search to ~1e-10 relative. */
function goldenSectionMaximum(f: (x: number) => number, low: number, high: number): number {
  const ratio = (Math.sqrt(5) - 1) / 2;
  let a = low;
  let b = high;
  let c = b - ratio * (b - a);
  let d = a + ratio * (b - a);
  let fc = f(c);
  let fd = f(d);
  for (let i = 0; i < 200 && b - a > 1e-10 * (Math.abs(a) + Math.abs(b) + 1e-12); i++) {
    if (fc > fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - ratio * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + ratio * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2;
}

function fitNegativeBinomial(sample: Sample): { r: number; p: number } | undefined {
  // Under- or equi-dispersed data push the MLE to r → ∞ (the Poisson limit): no NB fit then.
  if (!(sample.variance > sample.mean) || sample.mean === 0) return undefined;
  // ln r on a grid over [1e-3, 1e6], then golden section around the best grid point.
  const lowLog = Math.log(1e-3);
  const highLog = Math.log(1e6);
  const steps = 60;
  let bestIndex = 0;
  let bestValue = -Infinity;
  for (let i = 0; i <= steps; i++) {
    const value = negativeBinomialProfile(sample, Math.exp(lowLog + ((highLog - lowLog) * i) / steps));
    if (value > bestValue) {
      bestValue = value;
      bestIndex = i;
    }
  }
  const step = (highLog - lowLog) / steps;
  const logR = goldenSectionMaximum(
    (x) => negativeBinomialProfile(sample, Math.exp(x)),
    lowLog + Math.max(0, bestIndex - 1) * step,
    lowLog + Math.min(steps, bestIndex + 1) * step,
  );
  const r = Math.exp(logR);
  return { r, p: r / (r + sample.mean) };
}

function binomialProfile(sample: Sample, trials: number): number {
  return logLikelihoodOf(sample, { family: 'binom', trials, p: Math.min(1, sample.mean / trials) });
}

function fitBinomial(sample: Sample): { trials: number; p: number } | undefined {
  // Over- or equi-dispersed data push the MLE to N → ∞ (the Poisson limit): no binomial fit then.
  if (!(sample.variance < sample.mean)) return undefined;
  const lowest = Math.max(1, sample.max);
  // The moment estimate N ≈ mean²/(mean − variance) bounds the search region generously.
  const moment = (sample.mean * sample.mean) / (sample.mean - sample.variance);
  let high = Math.min(1e6, Math.max(lowest + 10, Math.ceil(4 * moment)));
  let low = lowest;
  // Integer ternary search (the profile likelihood is unimodal in N), then a final scan.
  while (high - low > 8) {
    const m1 = low + Math.floor((high - low) / 3);
    const m2 = high - Math.floor((high - low) / 3);
    if (binomialProfile(sample, m1) < binomialProfile(sample, m2)) low = m1 + 1;
    else high = m2 - 1;
  }
  let bestTrials = low;
  let bestValue = -Infinity;
  for (let trials = low; trials <= high; trials++) {
    const value = binomialProfile(sample, trials);
    if (value > bestValue) {
      bestValue = value;
      bestTrials = trials;
    }
  }
  return { trials: bestTrials, p: sample.mean / bestTrials };
}

/**
 * Fits Poisson, geometric (on {1, 2, ...}), negative binomial (failures before the r-th success),
 * binomial and discrete uniform to observed counts by maximum likelihood and returns them best
 * first by AIC = 2k − 2·ln L. Estimators (all MLE):
 * - pois: λ = sample mean.
 * - geo: p = 1/mean; left out when 0 was observed (outside its support).
 * - nbinom: p = r/(r + mean) for each r (its MLE given r); r maximises that profile likelihood,
 *   found on a log grid over [1e-3, 1e6] then by golden section. Left out when variance ≤ mean
 *   (then the MLE is the Poisson limit r → ∞).
 * - binom: p = mean/N for each N ≥ max observed; N maximises the profile likelihood (integer
 *   ternary search then a scan). Left out when variance ≥ mean (MLE N → ∞, the Poisson limit).
 * - unif: a = min, b = max observed.
 * The sample size is `sampleSize` if given, else `totalWeight` of the distribution (the number
 * of observations for fromCounts). Variance is the MLE (divide by N). Cost O(|supp|·~150).
 *
 * @throws {ModelError} WW_ERR_MODEL_INVALID_DISTRIBUTION for invalid counts; WW_ERR_MODEL_INVALID_ARGUMENT for a bad sampleSize.
 * @example fitParametric({ 0: 10, 1: 20, 2: 15, 3: 5 })[0].family // 'binom' or 'pois'
 */
export function fitParametric(input: CategoricalDistribution | WeightInput, options: { sampleSize?: number } = {}): ParametricFit[] {
  const dist = input instanceof CategoricalDistribution ? input : CategoricalDistribution.fromCounts(input);
  const total = options.sampleSize ?? dist.totalWeight;
  if (!(total > 0) || !Number.isFinite(total)) {
    throw new ModelError('WW_ERR_MODEL_INVALID_ARGUMENT', `sampleSize must be a positive number, got ${String(total)}`);
  }
  const counts = Float64Array.from(dist.probabilities, (p) => p * total);
  const sample: Sample = { values: dist.values, counts, total, mean: dist.mean(), variance: dist.variance(), min: dist.min, max: dist.max };
  const fits: ParametricFit[] = [];
  const add = (family: ParametricFit['family'], parameters: Record<string, number>, spec: FamilySpec, parameterCount: number): void => {
    const logLikelihood = logLikelihoodOf(sample, spec);
    if (!Number.isFinite(logLikelihood)) return;
    fits.push({ family, parameters, spec, logLikelihood, aic: 2 * parameterCount - 2 * logLikelihood });
  };
  add('pois', { lambda: sample.mean }, { family: 'pois', lambda: sample.mean }, 1);
  if (sample.min >= 1) add('geo', { p: 1 / sample.mean }, { family: 'geo', p: 1 / sample.mean }, 1);
  const nb = fitNegativeBinomial(sample);
  if (nb !== undefined) add('nbinom', { r: nb.r, p: nb.p }, { family: 'nbinom', r: nb.r, p: nb.p }, 2);
  const binomial = fitBinomial(sample);
  if (binomial !== undefined) add('binom', { trials: binomial.trials, p: binomial.p }, { family: 'binom', trials: binomial.trials, p: binomial.p }, 2);
  add('unif', { low: sample.min, high: sample.max }, { family: 'unif', low: sample.min, high: sample.max }, 2);
  return fits.sort((a, b) => a.aic - b.aic);
}
