/**
 * Transit model (docs/model.md §6): flow balance between a compute system of M lanes and a memory
 * system of peak throughput R and latency L, for n resident threads of arithmetic intensity Z.
 *
 * - Memory supply f(k) = R·min(k, δ)/δ requests per cycle with k requests outstanding
 *   (roofline-shaped; transition δ defaults to R·L, Little's law: f(k) = k/L below it).
 * - Compute demand on memory g(x) = min(x, M)/(Z·H) requests per cycle with x threads
 *   computing; H ≥ 1 is the predicted imbalance loss (useful lanes = occupied lanes / H).
 * - Steady state: k + x = n and f(k) = g(n − k). MS throughput = f(k), CS throughput = Z·f(k)
 *   (useful lane-cycles per cycle).
 */

/** Parameters of the transit model (units in the names). */
export interface TransitParameters {
  /** M: compute lanes. */
  readonly lanes: number;
  /** R: peak memory throughput, requests per cycle. */
  readonly peakRequestsPerCycle: number;
  /** L: memory latency, cycles. */
  readonly latencyCycles: number;
  /** Z: compute cycles per memory request (arithmetic intensity). */
  readonly intensityCyclesPerRequest: number;
  /** n: resident threads. */
  readonly threads: number;
  /** δ: outstanding requests at which supply reaches R; default R·L. */
  readonly transitionRequests?: number;
  /** H: predicted imbalance loss ≥ 1; default 1 (no loss). */
  readonly loss?: number;
}

/**
 * What limits the operating point:
 * `thread` — neither curve on its plateau (k < δ, x < M): more threads raise throughput;
 * `memory` — supply at its peak (k ≥ δ) while lanes are free (x < M): only a faster memory helps;
 * `compute` — all lanes occupied (x ≥ M) while supply is below peak (k < δ): only more lanes (or more work per request) help;
 * `capacity` — both plateaus reached (k ≥ δ and x ≥ M, i.e. R = M/(Z·H)): the machine is balanced and full.
 */
export type TransitBoundClass = 'thread' | 'memory' | 'compute' | 'capacity';

/** One steady state. */
export interface TransitOperatingPoint {
  /** Loss H the point was computed with. */
  readonly loss: number;
  /** k: outstanding memory requests (threads waiting on memory). */
  readonly outstandingRequests: number;
  /** x = n − k: threads computing or waiting for a lane. */
  readonly computingThreads: number;
  /** MS throughput f(k), requests per cycle. */
  readonly memoryThroughputRequestsPerCycle: number;
  /** CS throughput Z·f(k), useful lane-cycles per cycle. */
  readonly computeThroughputLanes: number;
  /** min(x, M). */
  readonly occupiedLanes: number;
  /** f(k)/R. */
  readonly memoryUtilisation: number;
  /** Z·f(k)/M: useful share of all lanes. */
  readonly laneUtilisation: number;
  readonly boundClass: TransitBoundClass;
}

/** Result of {@link solveTransit}. */
export interface TransitSolution {
  /** Parameters with defaults filled in (δ, H). */
  readonly parameters: Required<TransitParameters>;
  /** Operating point without imbalance (H = 1). */
  readonly balanced: TransitOperatingPoint;
  /** Operating point with the given loss H; equals `balanced` when H = 1. */
  readonly shifted: TransitOperatingPoint;
}

function positive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a finite number > 0, got ${String(value)}`);
}

/**
 * Validates parameters and fills defaults (δ = R·L, H = 1).
 *
 * @throws RangeError for non-finite or non-positive values, or H < 1
 * @example normaliseTransitParameters({ lanes: 32, peakRequestsPerCycle: 1, latencyCycles: 400, intensityCyclesPerRequest: 20, threads: 1024 }).transitionRequests // → 400
 */
export function normaliseTransitParameters(parameters: TransitParameters): Required<TransitParameters> {
  positive('lanes', parameters.lanes);
  positive('peakRequestsPerCycle', parameters.peakRequestsPerCycle);
  positive('latencyCycles', parameters.latencyCycles);
  positive('intensityCyclesPerRequest', parameters.intensityCyclesPerRequest);
  positive('threads', parameters.threads);
  const transitionRequests = parameters.transitionRequests ?? parameters.peakRequestsPerCycle * parameters.latencyCycles;
  positive('transitionRequests', transitionRequests);
  const loss = parameters.loss ?? 1;
  if (!Number.isFinite(loss) || loss < 1) throw new RangeError(`loss must be a finite number ≥ 1, got ${String(loss)}`);
  return { ...parameters, transitionRequests, loss };
}

/**
 * Memory supply f(k) = R·min(k, δ)/δ, requests per cycle.
 *
 * @throws RangeError for k < 0 or NaN
 * @example memorySupply(100, normaliseTransitParameters({ lanes: 32, peakRequestsPerCycle: 1, latencyCycles: 400, intensityCyclesPerRequest: 20, threads: 1024 })) // → 0.25
 */
export function memorySupply(outstandingRequests: number, parameters: Required<TransitParameters>): number {
  if (!(outstandingRequests >= 0)) throw new RangeError(`outstanding requests must be ≥ 0, got ${String(outstandingRequests)}`);
  return (parameters.peakRequestsPerCycle * Math.min(outstandingRequests, parameters.transitionRequests)) / parameters.transitionRequests;
}

/**
 * Compute demand on memory g(x) = min(x, M)/(Z·H), requests per cycle.
 *
 * @throws RangeError for x < 0 or NaN, or H < 1
 * @example computeDemand(64, p, 1) // with M = 32, Z = 20 → 1.6
 */
export function computeDemand(computingThreads: number, parameters: Required<TransitParameters>, loss = parameters.loss): number {
  if (!(computingThreads >= 0)) throw new RangeError(`computing threads must be ≥ 0, got ${String(computingThreads)}`);
  if (!(loss >= 1)) throw new RangeError(`loss must be ≥ 1, got ${String(loss)}`);
  return Math.min(computingThreads, parameters.lanes) / (parameters.intensityCyclesPerRequest * loss);
}

/**
 * Steady state for a given loss H: the smallest k ∈ [0, n] with f(k) ≥ g(n − k). The
 * difference f(k) − g(n − k) is continuous and non-decreasing, negative or zero at 0 and
 * non-negative at n, so bisection (200 halvings, far below double precision) always converges;
 * taking the smallest root makes the flat case R = M/(Z·H) deterministic.
 *
 * @param saturationTolerance relative tolerance for "on the plateau"; default 1e-9
 * @throws RangeError for invalid parameters
 * @example transitOperatingPoint(p, 1).boundClass
 */
export function transitOperatingPoint(parameters: Required<TransitParameters>, loss: number, saturationTolerance = 1e-9): TransitOperatingPoint {
  const n = parameters.threads;
  const difference = (k: number): number => memorySupply(k, parameters) - computeDemand(n - k, parameters, loss);
  let low = 0;
  let high = n;
  if (difference(0) >= 0) high = 0;
  for (let i = 0; i < 200 && high - low > 0; i += 1) {
    const mid = low + (high - low) / 2;
    if (mid <= low || mid >= high) break;
    if (difference(mid) >= 0) high = mid;
    else low = mid;
  }
  const k = high;
  const x = n - k;
  // Average the two sides: at the returned k they agree to rounding, and the mean is symmetric.
  const throughput = (memorySupply(k, parameters) + computeDemand(x, parameters, loss)) / 2;
  const memorySaturated = k >= parameters.transitionRequests * (1 - saturationTolerance);
  const computeSaturated = x >= parameters.lanes * (1 - saturationTolerance);
  const boundClass: TransitBoundClass = memorySaturated ? (computeSaturated ? 'capacity' : 'memory') : computeSaturated ? 'compute' : 'thread';
  return {
    loss,
    outstandingRequests: k,
    computingThreads: x,
    memoryThroughputRequestsPerCycle: throughput,
    computeThroughputLanes: parameters.intensityCyclesPerRequest * throughput,
    occupiedLanes: Math.min(x, parameters.lanes),
    memoryUtilisation: throughput / parameters.peakRequestsPerCycle,
    laneUtilisation: (parameters.intensityCyclesPerRequest * throughput) / parameters.lanes,
    boundClass,
  };
}

/**
 * Solves the transit model: the balanced operating point (H = 1) and the one shifted by the
 * predicted imbalance loss H (effective busy lanes min(x, M)/H).
 *
 * @throws RangeError for invalid parameters (see normaliseTransitParameters)
 * @example
 * solveTransit({ lanes: 32, peakRequestsPerCycle: 1, latencyCycles: 400, intensityCyclesPerRequest: 20, threads: 1024 }).balanced.boundClass // → 'memory'
 */
export function solveTransit(parameters: TransitParameters, options: { saturationTolerance?: number } = {}): TransitSolution {
  const normalised = normaliseTransitParameters(parameters);
  const tolerance = options.saturationTolerance ?? 1e-9;
  if (!(tolerance >= 0 && tolerance < 1)) throw new RangeError(`saturationTolerance must be in [0, 1), got ${String(tolerance)}`);
  const balanced = transitOperatingPoint(normalised, 1, tolerance);
  const shifted = normalised.loss === 1 ? balanced : transitOperatingPoint(normalised, normalised.loss, tolerance);
  return { parameters: normalised, balanced, shifted };
}
