/**
 * Idle lane time, the one definition every output uses (docs/model.md §2): lockstep holds
 * ΣC_SIMT lane-time (n lanes for as long as the slowest lane of the group) while the work needs
 * ΣC_MIMD, so the share of held lane time in which a lane waits is (ΣC_SIMT − ΣC_MIMD)/ΣC_SIMT =
 * 1 − 1/L with L = ΣC_SIMT/ΣC_MIMD, the workload loss (run-time overhead). Exact for the workload
 * loss; the mean of per-group H is not a share of all lane time.
 *
 * @param workloadLoss L = ΣC_SIMT/ΣC_MIMD (≥ 1), measured or predicted
 * @returns a fraction in [0, 1): loss 1 → 0 (no idle lanes), 1.25 → 0.2, 2 → 0.5; NaN when L is not finite or below 1
 * @example idleLaneShare(11.03) // 0.9093...
 */
export function idleLaneShare(workloadLoss: number): number {
  return Number.isFinite(workloadLoss) && workloadLoss >= 1 ? 1 - 1 / workloadLoss : Number.NaN;
}
