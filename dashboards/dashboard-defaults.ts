/**
 * Settings every warpwatch dashboard shares: editable, crosshair shared between panels, the
 * last hour in the browser's time zone, refreshed every 30 s (the estimator closes windows
 * every 10 s by default, so a faster refresh mostly redraws the same points).
 */
import { DashboardBuilder, DashboardCursorSync } from '@grafana/grafana-foundation-sdk/dashboard';

/** What differs between the warpwatch dashboards. */
export interface DashboardIdentity {
  readonly title: string;
  /** Stable uid: links and alert rules point at it. */
  readonly uid: string;
  readonly description: string;
  readonly tags: readonly string[];
}

/**
 * A dashboard builder with the identity and the shared settings set, ready for variables,
 * annotations and panels.
 *
 * @example
 * const builder = warpwatchDashboard({ title: 'warpwatch · Pipeline health', uid: 'warpwatch-pipeline', description: '...', tags: ['warpwatch', 'pipeline'] });
 */
export function warpwatchDashboard(identity: DashboardIdentity): DashboardBuilder {
  return new DashboardBuilder(identity.title)
    .uid(identity.uid)
    .description(identity.description)
    .tags([...identity.tags])
    .editable()
    .tooltip(DashboardCursorSync.Crosshair)
    .time({ from: 'now-1h', to: 'now' })
    .refresh('30s')
    .timezone('browser');
}
