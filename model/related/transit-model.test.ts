import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { computeDemand, memorySupply, normaliseTransitParameters, solveTransit, type TransitParameters } from './transit-model.ts';

const base: TransitParameters = { lanes: 32, peakRequestsPerCycle: 1, latencyCycles: 100, intensityCyclesPerRequest: 20, threads: 1024 };

describe('memorySupply and computeDemand', () => {
  it('are roofline-shaped with Little-law default transition δ = R·L', () => {
    const p = normaliseTransitParameters(base);
    expect(p.transitionRequests).toBe(100);
    expect(memorySupply(50, p)).toBeCloseTo(0.5, 15); // k/L below δ
    expect(memorySupply(500, p)).toBe(1);
    expect(computeDemand(16, p)).toBeCloseTo(0.8, 15);
    expect(computeDemand(64, p)).toBeCloseTo(1.6, 15);
    expect(computeDemand(64, p, 2)).toBeCloseTo(0.8, 15);
  });
});

describe('solveTransit', () => {
  // Each class from a parameter set built for it; the expected point is solved by hand.
  it('is thread-bound with few threads: k = n/(1 + R·Z/δ)', () => {
    const s = solveTransit({ ...base, threads: 24 }).balanced; // g linear (x < 32), f linear (k < 100)
    const k = 24 / (1 + (1 * 20) / 100);
    expect(s.boundClass).toBe('thread');
    expect(s.outstandingRequests).toBeCloseTo(k, 9);
    expect(s.memoryThroughputRequestsPerCycle).toBeCloseTo(k / 100, 12);
  });
  it('is memory-bound when M/Z > R and threads are plentiful: x = R·Z', () => {
    const s = solveTransit({ ...base, threads: 1024 }).balanced;
    expect(s.boundClass).toBe('memory');
    expect(s.memoryThroughputRequestsPerCycle).toBeCloseTo(1, 12);
    expect(s.computingThreads).toBeCloseTo(20, 9);
    expect(s.computeThroughputLanes).toBeCloseTo(20, 9);
  });
  it('is compute-bound when M/Z < R: all lanes busy, supply below peak', () => {
    const s = solveTransit({ ...base, intensityCyclesPerRequest: 64, threads: 1024 }).balanced; // M/Z = 0.5 < R = 1
    expect(s.boundClass).toBe('compute');
    expect(s.memoryThroughputRequestsPerCycle).toBeCloseTo(0.5, 12);
    expect(s.outstandingRequests).toBeCloseTo(50, 9); // f(k) = k/100 = 0.5
    expect(s.laneUtilisation).toBeCloseTo(1, 12);
  });
  it('is capacity-bound when R = M/Z and n ≥ δ + M', () => {
    const s = solveTransit({ ...base, intensityCyclesPerRequest: 32, threads: 1024 }).balanced; // M/Z = 1 = R
    expect(s.boundClass).toBe('capacity');
    expect(s.memoryUtilisation).toBeCloseTo(1, 12);
    expect(s.laneUtilisation).toBeCloseTo(1, 12);
  });
  it('shifts the point with the predicted loss H (effective lanes M/H)', () => {
    const s = solveTransit({ ...base, intensityCyclesPerRequest: 32, threads: 1024, loss: 2 });
    expect(s.balanced.boundClass).toBe('capacity');
    expect(s.shifted.boundClass).toBe('compute'); // M/(Z·H) = 0.5 < R
    expect(s.shifted.memoryThroughputRequestsPerCycle).toBeCloseTo(0.5, 12);
    expect(s.shifted.computeThroughputLanes).toBeCloseTo(16, 9);
  });
  it('rejects invalid parameters', () => {
    expect(() => solveTransit({ ...base, lanes: 0 })).toThrow(/lanes must be/);
    expect(() => solveTransit({ ...base, loss: 0.5 })).toThrow(/loss must be/);
    expect(() => solveTransit({ ...base, threads: Number.NaN })).toThrow(/threads/);
  });

  describe('principles (properties)', () => {
    const parameters = fc.record({
      lanes: fc.integer({ min: 1, max: 256 }),
      peakRequestsPerCycle: fc.double({ min: 0.01, max: 8, noNaN: true }),
      latencyCycles: fc.double({ min: 1, max: 1000, noNaN: true }),
      intensityCyclesPerRequest: fc.double({ min: 0.5, max: 200, noNaN: true }),
      threads: fc.integer({ min: 1, max: 4096 }),
      loss: fc.double({ min: 1, max: 32, noNaN: true }),
    });
    const tolerance = (x: number) => 1e-9 * Math.max(1, Math.abs(x));
    it('the operating point lies on both curves', () => {
      fc.assert(
        fc.property(parameters, (p) => {
          const s = solveTransit(p);
          const n = normaliseTransitParameters(p);
          for (const point of [s.balanced, s.shifted]) {
            expect(Math.abs(memorySupply(point.outstandingRequests, n) - computeDemand(point.computingThreads, n, point.loss))).toBeLessThan(1e-9);
          }
        }),
        { numRuns: 300, seed: 1 },
      );
    });
    it('raising the intersection (faster memory or more lanes) raises MS throughput', () => {
      fc.assert(
        fc.property(parameters, fc.double({ min: 1, max: 4, noNaN: true }), (p, factor) => {
          const before = solveTransit(p).shifted.memoryThroughputRequestsPerCycle;
          const fasterMemory = solveTransit({ ...p, peakRequestsPerCycle: p.peakRequestsPerCycle * factor, transitionRequests: p.peakRequestsPerCycle * p.latencyCycles }).shifted;
          const moreLanes = solveTransit({ ...p, lanes: Math.ceil(p.lanes * factor) }).shifted;
          expect(fasterMemory.memoryThroughputRequestsPerCycle).toBeGreaterThanOrEqual(before - tolerance(before));
          expect(moreLanes.memoryThroughputRequestsPerCycle).toBeGreaterThanOrEqual(before - tolerance(before));
        }),
        { numRuns: 300, seed: 2 },
      );
    });
    it('more threads never lower MS or CS throughput', () => {
      fc.assert(
        fc.property(parameters, fc.integer({ min: 1, max: 2048 }), (p, extra) => {
          const a = solveTransit(p).shifted;
          const b = solveTransit({ ...p, threads: p.threads + extra }).shifted;
          expect(b.memoryThroughputRequestsPerCycle).toBeGreaterThanOrEqual(a.memoryThroughputRequestsPerCycle - tolerance(a.memoryThroughputRequestsPerCycle));
          expect(b.computeThroughputLanes).toBeGreaterThanOrEqual(a.computeThroughputLanes - tolerance(a.computeThroughputLanes));
        }),
        { numRuns: 300, seed: 3 },
      );
    });
    it('a loss H > 1 never raises CS throughput, and larger H never helps', () => {
      fc.assert(
        fc.property(parameters, fc.double({ min: 1, max: 4, noNaN: true }), (p, factor) => {
          const s = solveTransit(p);
          const worse = solveTransit({ ...p, loss: p.loss * factor }).shifted;
          expect(s.shifted.computeThroughputLanes).toBeLessThanOrEqual(s.balanced.computeThroughputLanes + tolerance(s.balanced.computeThroughputLanes));
          expect(worse.computeThroughputLanes).toBeLessThanOrEqual(s.shifted.computeThroughputLanes + tolerance(s.shifted.computeThroughputLanes));
        }),
        { numRuns: 300, seed: 4 },
      );
    });
  });
});
