/**
 * The template variables that select streams on the imbalance dashboard (job, kernel, host,
 * pod, device model, device UUID, group size) and the WHERE filter every panel query applies with them. Each
 * variable lists the tag values of `warpwatch_window`, narrowed by the variables before it.
 */
import { VariableSort } from '@grafana/grafana-foundation-sdk/dashboard';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import type * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import { LABEL_TAGS, TAGS } from '../contracts/index.ts';
import type { QueryCatalog } from './influx-target.ts';
import { multiSelectVariable } from './multi-select-variable.ts';
import { showTagValues, type SelectQueryBuilder, type TagOf } from './influxql-query.ts';

/** Measurements that carry the stream tags (job, kernel, device, n, ...). */
export type StreamSeriesKey = 'window' | 'sweep' | 'histogram' | 'fit' | 'samples' | 'alert';

/** One stream variable: its name (= the tag it filters), label, and the tags it depends on. */
export interface StreamVariable {
  readonly name: string;
  readonly tag: TagOf<'window'>;
  readonly label: string;
  readonly description: string;
}

/**
 * The stream variables in dependency order. Variable names equal the tag keys they filter,
 * so `$job` filters tag `job`; group size is the tag `n` (lanes per group).
 */
export const STREAM_VARIABLES: readonly StreamVariable[] = [
  { name: TAGS.job, tag: TAGS.job, label: 'Job', description: 'GPU job (first half of the stream id).' },
  { name: TAGS.kernel, tag: TAGS.kernel, label: 'Kernel', description: 'Kernel within the job.' },
  { name: TAGS.host, tag: TAGS.host, label: 'Host', description: 'Host of the collector that forwarded the frames (the GPU node).' },
  { name: LABEL_TAGS.pod, tag: LABEL_TAGS.pod, label: 'Pod', description: 'Kubernetes pod (the collector label pod; empty outside Kubernetes).' },
  { name: TAGS.device, tag: TAGS.device, label: 'Device model', description: 'GPU (or CPU backend) device model.' },
  { name: TAGS.deviceUuid, tag: TAGS.deviceUuid, label: 'Device', description: 'The device by UUID: one GPU of the node.' },
  { name: TAGS.n, tag: TAGS.n, label: 'Group size', description: 'Lanes per lockstep group n (32 = a CUDA warp).' },
];

/**
 * Adds `"tag" =~ /^$var$/` for every stream variable to a query on a stream measurement.
 *
 * @example
 * filterByStreamVariables(selectFrom('window').field(FIELDS.window.lossMeasured, { aggregation: 'mean' }));
 */
export function filterByStreamVariables<K extends StreamSeriesKey>(builder: SelectQueryBuilder<K>): SelectQueryBuilder<K> {
  // Every StreamSeriesKey carries all STREAM_TAGS (MEASUREMENT_TAGS); TypeScript cannot see
  // that through the generic K, hence the cast.
  return STREAM_VARIABLES.reduce((b, v) => b.whereVariable(v.tag as TagOf<K>, v.name), builder);
}

/**
 * Query-variable builders for the stream variables (multi-value, "All" = `.*`), their
 * `SHOW TAG VALUES` queries recorded in the catalog.
 *
 * @example
 * for (const v of streamVariableBuilders(catalog, 'warpwatch-imbalance')) dashboard.withVariable(v);
 */
export function streamVariableBuilders(catalog: QueryCatalog, document: string): cog.Builder<dashboard.VariableModel>[] {
  return STREAM_VARIABLES.map((variable, index) =>
    multiSelectVariable(catalog, document, {
      name: variable.name,
      label: variable.label,
      description: variable.description,
      statement: showTagValues('window', variable.tag, STREAM_VARIABLES.slice(0, index).map((v) => [v.tag, v.name] as const)),
      sort: variable.tag === TAGS.n ? VariableSort.NumericalAsc : VariableSort.AlphabeticalAsc,
    }),
  );
}
