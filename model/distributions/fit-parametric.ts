/**
 * Parametric fit (docs/model.md §2d): which of Poisson, geometric, negative binomial, binomial and
 * discrete uniform describes observed work best, by maximum likelihood and AIC.
 */
import { CategoricalDistribution, type WeightInput } from './categorical-distribution.ts';
import { ModelError } from '../errors.ts';
import { familyLogPmf, type FamilySpec } from './family.ts';
import { logFactorial, logGamma } from '../numerics/special-functions.ts';

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
  /** ln(k!) of each value (logFactorial), computed once per fit instead of once per likelihood evaluation. */
  readonly logFactorials: Float64Array;
}


/**
 * Σ count·ln P(value) under `spec`: per value the very expression of familyLogPmf (same bits),
 * with what depends only on the spec (ln λ, ln p, ln(1 − p), ln Γ(r), ln N!, the uniform's
 * ln(b − a + 1)) computed once instead of once per value, and ln k! from the sample.
 */
function logLikelihoodOf(sample: Sample, spec: FamilySpec): number {
  const { values, counts, logFactorials } = sample;
  let sum = 0;
  switch (spec.family) {
    case 'pois': {
      const lambda = spec.lambda;
      const logLambda = Math.log(lambda);
      for (let j = 0; j < values.length; j++) {
        const k = values[j]!;
        let term: number;
        if (!Number.isInteger(k) || k < 0) term = -Infinity;
        else if (lambda === 0) term = k === 0 ? 0 : -Infinity;
        else term = k * logLambda - lambda - logFactorials[j]!;
        sum += counts[j]! * term;
      }
      return sum;
    }
    case 'geo': {
      const p = spec.p;
      const logQ = Math.log1p(-p);
      const logP = Math.log(p);
      for (let j = 0; j < values.length; j++) {
        const k = values[j]!;
        let term: number;
        if (!Number.isInteger(k) || k < 1) term = -Infinity;
        else if (p === 1) term = k === 1 ? 0 : -Infinity;
        else term = (k - 1) * logQ + logP;
        sum += counts[j]! * term;
      }
      return sum;
    }
    case 'nbinom': {
      const { r, p } = spec;
      // ln Γ(r) only where familyLogPmf would compute it (p ≠ 1), so a bad r throws as it did.
      const lgR = p === 1 ? 0 : logGamma(r);
      const logP = Math.log(p);
      const logQ = Math.log1p(-p);
      for (let j = 0; j < values.length; j++) {
        const k = values[j]!;
        let term: number;
        if (!Number.isInteger(k) || k < 0) term = -Infinity;
        else if (p === 1) term = k === 0 ? 0 : -Infinity;
        else term = logGamma(k + r) - lgR - logFactorials[j]! + r * logP + k * logQ;
        sum += counts[j]! * term;
      }
      return sum;
    }
    case 'binom':
      return binomialLogLikelihood(sample, spec.trials, spec.p);
    case 'unif': {
      const { low, high } = spec;
      const inside = -Math.log(high - low + 1);
      for (let j = 0; j < values.length; j++) {
        const k = values[j]!;
        sum += counts[j]! * (!Number.isInteger(k) || k < 0 ? -Infinity : k >= low && k <= high ? inside : -Infinity);
      }
      return sum;
    }
    default:
      for (let j = 0; j < values.length; j++) sum += counts[j]! * familyLogPmf(spec, values[j]!);
      return sum;
  }
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
    sum += sample.counts[j]! * (logGamma(k + r) - lgR - sample.logFactorials[j]! + r * logP + k * logQ);
  }
  return sum;
}

/** The NB fit's grid of ln r: GRID_STEPS + 1 points evenly over [ln 1e-3, ln 1e6]. */
const GRID_STEPS = 60;
const GRID_LOW_LOG = Math.log(1e-3);
const GRID_HIGH_LOG = Math.log(1e6);
/** r of each grid point, exactly as fitNegativeBinomial computes it, and ln Γ(r). */
const gridR = Float64Array.from({ length: GRID_STEPS + 1 }, (_, i) => Math.exp(GRID_LOW_LOG + ((GRID_HIGH_LOG - GRID_LOW_LOG) * i) / GRID_STEPS));
const gridLogGammaR = Float64Array.from(gridR, (r) => logGamma(r));
/** Values k below this keep a row of ln Γ(k + r) over the grid (at most 4096 · 61 doubles, 2 MB). */
const GRID_CACHE_VALUES = 4096;
const gridRows: (Float64Array | undefined)[] = [];

/**
 * The row of ln Γ(k + r_i) over the grid points i for the value k (NaN where not computed yet),
 * shared by every fit: the grid does not depend on the sample, so these are the same calls
 * with the same arguments fit after fit; undefined for k ≥ {@link GRID_CACHE_VALUES}.
 */
function gridLogGammaRow(k: number): Float64Array | undefined {
  if (!(k < GRID_CACHE_VALUES)) return undefined;
  let row = gridRows[k];
  if (row === undefined) gridRows[k] = row = new Float64Array(GRID_STEPS + 1).fill(Number.NaN);
  return row;
}

/**
 * {@link negativeBinomialProfile} at grid point i (r = gridR[i]), its ln Γ terms from the shared
 * rows (`rows[j]`: the row of value j, {@link gridLogGammaRow}; undefined beyond
 * GRID_CACHE_VALUES): the same bits.
 */
function negativeBinomialGridProfile(sample: Sample, rows: readonly (Float64Array | undefined)[], i: number): number {
  const r = gridR[i]!;
  const p = r / (r + sample.mean);
  const logP = Math.log(p);
  const logQ = Math.log1p(-p);
  const lgR = gridLogGammaR[i]!;
  let sum = 0;
  for (let j = 0; j < sample.values.length; j++) {
    const k = sample.values[j]!;
    const row = rows[j];
    let lgKR: number;
    if (row === undefined) lgKR = logGamma(k + r);
    else {
      lgKR = row[i]!;
      if (Number.isNaN(lgKR)) row[i] = lgKR = logGamma(k + r);
    }
    sum += sample.counts[j]! * (lgKR - lgR - sample.logFactorials[j]! + r * logP + k * logQ);
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
  const rows: (Float64Array | undefined)[] = [];
  for (const k of sample.values) rows.push(gridLogGammaRow(k));
  const lowLog = GRID_LOW_LOG;
  const highLog = GRID_HIGH_LOG;
  const steps = GRID_STEPS;
  let bestIndex = 0;
  let bestValue = -Infinity;
  for (let i = 0; i <= steps; i++) {
    const value = negativeBinomialGridProfile(sample, rows, i); // r = exp(lowLog + (highLog − lowLog)·i/steps)
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

/** The binomial profile log-likelihood at N = trials: p = min(1, mean/N). */
function binomialProfile(sample: Sample, trials: number): number {
  return binomialLogLikelihood(sample, trials, Math.min(1, sample.mean / trials));
}

/**
 * The binomial log-likelihood at N = trials and p: term by term the expression of familyLogPmf
 * (same bits), with ln N!, ln p and ln(1 − p) computed once instead of once per value, and ln k!
 * from the sample.
 */
function binomialLogLikelihood(sample: Sample, trials: number, p: number): number {
  const logFactorialN = logFactorial(trials);
  const logP = Math.log(p);
  const logQ = Math.log1p(-p);
  let sum = 0;
  for (let j = 0; j < sample.values.length; j++) {
    const k = sample.values[j]!;
    let term: number;
    if (!Number.isInteger(k) || k < 0 || k > trials) term = -Infinity;
    else if (p === 0) term = k === 0 ? 0 : -Infinity;
    else if (p === 1) term = k === trials ? 0 : -Infinity;
    else term = logFactorialN - sample.logFactorials[j]! - logFactorial(trials - k) + k * logP + (trials - k) * logQ;
    sum += sample.counts[j]! * term;
  }
  return sum;
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
  // Plain loops: Float64Array.from with a callback is measurably slower.
  const size = dist.values.length;
  const counts = new Float64Array(size);
  const logFactorials = new Float64Array(size);
  for (let j = 0; j < size; j++) {
    counts[j] = dist.probabilities[j]! * total;
    logFactorials[j] = logFactorial(dist.values[j]!);
  }
  const sample: Sample = { values: dist.values, counts, total, mean: dist.mean(), variance: dist.variance(), min: dist.min, max: dist.max, logFactorials };
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
