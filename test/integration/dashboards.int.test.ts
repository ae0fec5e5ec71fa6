// Every query of the generated dashboards and alert rules, with Grafana's macros and
// template variables substituted the way Grafana's InfluxQL datasource does
// (dashboards/grafana-macros.ts), runs against the real InfluxDB 1.8 of deploy/local and
// returns the series its panel expects. The data is written by the estimator's own code:
// windowPoints / alertPoint / pipelinePoint (estimator/engine/series-points.ts) through its InfluxDB
// writer (estimator/adapters/influx-writer.ts), so the dashboards are checked against what it writes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alertPoint, createEstimatorInfluxWriter, pipelinePoint, windowPoints, type AlertEvent, type SeriesPoint, type WindowResult } from '../../estimator/index.ts';
import { ALERT_KINDS, FIELDS, MEASUREMENTS, PIPELINE_SERVICES, TAGS, LABEL_TAGS, type AlertKind, type StreamIdentity } from '../../contracts/index.ts';
import {
  ALL_VALUE_MARKER,
  ALERT_DEFINITIONS,
  DRIFT_RELATIVE_ERROR_THRESHOLD,
  generateArtifacts,
  interpolateInfluxQl,
  type CatalogedQuery,
  type TemplateVariableState,
} from '../../dashboards/index.ts';
import { Secret } from '../../service/index.ts';
import { requiredEnv, type InfluxSeries, type InfluxResult } from './stack-env.ts';


const run = randomUUID().slice(0, 8);
const job = `ww-dash-${run}`;
// A dot and a slash (in the stream id) exercise the regex escaping of template variables.
const kernels = ['matpow', 'escape.time'] as const;
const staleKernel = 'stale';
const device = 'Test GPU';
const groupSize = '32';
const instanceLive = `ww-dash-${run}-live`;
const instanceStalled = `ww-dash-${run}-stalled`;
const windowMillis = 10_000;
const pf = FIELDS.pipeline;
/** Which warpwatch_pipeline fields each fixture instance writes (estimator: pipelinePoint; collector: contract). */
const pipelineFieldsByInstance: Record<string, readonly string[]> = {
  [instanceLive]: [pf.framesIn, pf.framesOut, pf.framesRejected, pf.framesDropped, pf.consumerLag, pf.windowLatencyMillis, pf.influxWriteErrors],
  [instanceStalled]: [pf.framesIn, pf.framesOut, pf.framesRejected, pf.framesSpooled, pf.framesDropped],
};
const nowMillis = Date.now();
const dataStartMillis = nowMillis - 10 * 60_000;

let influxUrl = '';
let database = '';

async function influxQuery(text: string): Promise<InfluxResult> {
  const url = `${influxUrl}/query?${new URLSearchParams({ db: database, q: text, epoch: 'ms' }).toString()}`;
  const response = await fetch(url);
  expect(response.status, `InfluxDB answered ${response.status} to ${text}`).toBe(200);
  const body = (await response.json()) as { results: InfluxResult[] };
  expect(body.results).toHaveLength(1);
  return body.results[0] as InfluxResult;
}

async function influxPost(text: string): Promise<void> {
  const response = await fetch(`${influxUrl}/query`, { method: 'POST', body: new URLSearchParams({ db: database, q: text }) });
  expect(response.status, `InfluxDB answered ${response.status} to ${text}`).toBe(200);
}

function identity(kernel: string): StreamIdentity {
  return { stream: `${job}/${kernel}`, job, kernel, device, groupSize: Number(groupSize), source: 'cpu', deviceUuid: '00000000-0000-0000-0000-000000000000', host: 'int-host', labels: { pod: `pod-${kernel}` } };
}

/** A closed window as the estimator computes it (shape of WindowResult, values made up). */
function windowResult(kernel: string, startMillis: number, index: number): WindowResult {
  // The escape.time stream drifts: measured loss far above the prediction (eta = 0.5).
  const predicted = kernel === 'matpow' ? 1.4 + 0.001 * index : 2.0;
  const counts = predicted * 1.01;
  const measured = kernel === 'matpow' ? predicted * 1.02 : predicted * 1.5;
  const locality = counts;
  return {
    identity: identity(kernel),
    startMillis,
    endMillis: startMillis + windowMillis,
    launches: 4,
    groups: 128,
    units: 4096,
    lossPredicted: predicted,
    lossPredictedLow: predicted - 0.05,
    lossPredictedHigh: predicted + 0.05,
    lossPredictedStandardError: 0.025,
    lossCounts: counts,
    lossMeasured: measured,
    workloadLossPredicted: predicted * 0.9,
    workloadLossMeasured: measured * 0.9,
    etaPredictedCounts: Math.abs((predicted - counts) / predicted),
    etaCountsMeasured: Math.abs((counts - measured) / counts),
    etaPredictedMeasured: Math.abs((predicted - measured) / predicted),
    // Locality-aware prediction (model.md §11) from the sampled groups: close to the counts.
    lossLocality: locality,
    lossLocalityLow: locality - 0.04,
    lossLocalityHigh: locality + 0.04,
    localityBenefit: predicted / locality,
    etaDrift: Math.abs((locality - measured) / locality),
    // Two levels (model.md §11a) from block runs: block = warps × warps-in-block.
    lossBlock: locality * 1.2,
    lossBlockLow: locality * 1.2 - 0.05,
    lossBlockHigh: locality * 1.2 + 0.05,
    lossBlockWarps: locality,
    lossWarpInBlock: 1.2,
    lossQ50: predicted,
    lossQ90: predicted + 0.3,
    lossQ99: predicted + 0.6,
    quantileMethod: 'exact',
    binningErrorBound: 0,
    sweep: [1, 2, 4, 8, 16, 32].map((size) => ({
      groupSize: size,
      lossPredicted: 1 + Math.log2(size) * 0.1,
      workloadLossPredicted: 1 + Math.log2(size) * 0.09,
    })),
    fit: { family: 'nbinom', parameters: { r: 5, p: 0.3 }, logLikelihood: -615.25, aic: 1234.5 },
    sampled: {
      groups: 8,
      invalidGroups: 0,
      lossMeasured: measured,
      lossCounts: counts,
      laneIdleFraction: 1 - 1 / measured,
      countIcc: 0.01,
      divergence: { iterationTicks: 40, deltaTicks: 25 + index, deltaStandardError: 4, spillTicks: undefined, overheadTicks: 120, rSquared: 0.95, groups: 8 },
      locality: [1, 2, 4, 8, 16, 32].map((size) => ({ groupSize: size, loss: 1 + Math.log2(size) * 0.05, standardError: 0.01 })),
    },
    histogram: ([[0, 0.1], [4, 0.2], [8, 0.4], [16, 0.2], [32, 0.1]] as const).map(([low, probability]) => ({
      low,
      high: low + 3,
      count: Math.round(probability * 4096),
      probability,
    })),
  };
}

function alertEvent(kind: AlertKind, kernel: string, timeMillis: number): AlertEvent {
  return {
    kind,
    identity: identity(kernel),
    timeMillis,
    series: 'loss_measured',
    oldLevel: 1.4,
    newLevel: 1.7,
    statistic: 12.5,
    evidence: { detector: 'cusum', windowsSinceChange: 3, changeStartMillis: timeMillis - 30_000, baselineSigma: 0.02, threshold: 8, windowMillis },
    message: `${kind} on ${job}/${kernel}`,
  };
}

/**
 * The collector's warpwatch_pipeline point as CONTRACTS.md defines it (the estimator helper
 * exports only its own pipelinePoint); it is the only writer of frames_spooled.
 */
function collectorPipelinePoint(instance: string, index: number, timestampMillis: number): SeriesPoint {
  const f = FIELDS.pipeline;
  return {
    measurement: MEASUREMENTS.pipeline,
    tags: { [TAGS.service]: PIPELINE_SERVICES.collector, [TAGS.instance]: instance },
    timestampMillis,
    fields: {
      [f.framesIn]: 100 * index,
      // The stalled collector takes frames in but produces none.
      [f.framesOut]: 0,
      [f.framesRejected]: index,
      [f.framesSpooled]: 3 * index,
      [f.framesDropped]: Math.floor(index / 10),
    },
  };
}

async function writeFixture(): Promise<void> {
  const errors: Error[] = [];
  const writer = createEstimatorInfluxWriter(
    {
      url: influxUrl,
      database,
      retentionPolicy: 'autogen',
      token: new Secret(''),
      org: '-',
      batchSize: 5_000,
      flushIntervalMillis: 60_000,
      maxBufferLines: 1_000_000,
      minRetryDelayMillis: 100,
      maxRetryDelayMillis: 1_000,
      requestTimeoutMillis: 30_000,
    },
    (error) => errors.push(error),
  );
  for (let time = dataStartMillis, index = 0; time <= nowMillis; time += windowMillis, index += 1) {
    for (const kernel of kernels) writer.write(windowPoints(windowResult(kernel, time, index), { includeHistogram: true, labelTags: [LABEL_TAGS.pod] }));
    writer.write([
      pipelinePoint(
        instanceLive,
        {
          framesIn: 100 * index,
          framesOut: 100 * index,
          framesRejected: index,
          framesDropped: Math.floor(index / 10),
          consumerLag: 5 + (index % 3),
          windowLatencyMillis: 150 + index,
          influxWriteErrors: Math.floor(index / 20),
        },
        time,
      ),
      collectorPipelinePoint(instanceStalled, index, time),
    ]);
  }
  // A stream that was live from 20 min to 6 min ago and then went silent.
  for (let time = nowMillis - 20 * 60_000, index = 0; time <= nowMillis - 6 * 60_000; time += windowMillis, index += 1) {
    writer.write(windowPoints(windowResult(staleKernel, time, index), { includeHistogram: true, labelTags: [LABEL_TAGS.pod] }));
  }
  writer.write([
    alertPoint(alertEvent(ALERT_KINDS.risingImbalance, 'matpow', nowMillis - 3 * 60_000)),
    alertPoint(alertEvent(ALERT_KINDS.drift, 'escape.time', nowMillis - 2 * 60_000)),
  ]);
  await writer.flush();
  const final = await writer.close(10_000);
  expect(errors).toEqual([]);
  expect(final.pointsDropped).toBe(0);
}

const generated = generateArtifacts();
const byPlacement = (placement: CatalogedQuery['placement']) => generated.catalog.entries.filter((e) => e.placement === placement);

/**
 * Dashboard variables as a user would set them: one job, two kernels (multi), the host, All pods
 * (alert points carry no pod tag: All must still match them), a device model, All device UUIDs,
 * All group sizes.
 */
const variables: Record<string, TemplateVariableState> = {
  [TAGS.job]: { value: job },
  [TAGS.kernel]: { value: [...kernels] },
  [TAGS.host]: { value: ['int-host'] },
  [LABEL_TAGS.pod]: { value: ALL_VALUE_MARKER, allValue: '.*' },
  [TAGS.device]: { value: [device] },
  [TAGS.deviceUuid]: { value: ALL_VALUE_MARKER, allValue: '.*' },
  [TAGS.n]: { value: ALL_VALUE_MARKER, allValue: '.*' },
  [TAGS.service]: { value: ALL_VALUE_MARKER, allValue: '.*' },
  [TAGS.instance]: { value: [instanceLive, instanceStalled] },
};
const dashboardContext = { fromMillis: dataStartMillis - 60_000, toMillis: nowMillis + 60_000, intervalMillis: 30_000, variables };

function expectedColumns(entry: CatalogedQuery): string[] {
  if (entry.statement.statement !== 'select') return ['value'];
  return ['time', ...entry.statement.fields.map((f) => f.alias)];
}

describe('dashboards against the real InfluxDB', () => {
  beforeAll(async () => {
    influxUrl = requiredEnv('WARPWATCH_INFLUX_URL');
    database = requiredEnv('WARPWATCH_INFLUX_DATABASE');
    await writeFixture();
  });

  afterAll(async () => {
    // Leave the shared test database as we found it (the job and instance names are unique to this run).
    const streamMeasurements = [MEASUREMENTS.window, MEASUREMENTS.sweep, MEASUREMENTS.histogram, MEASUREMENTS.fit, MEASUREMENTS.alert];
    for (const measurement of streamMeasurements) await influxPost(`DROP SERIES FROM "${measurement}" WHERE "${TAGS.job}" = '${job}'`);
    for (const instance of [instanceLive, instanceStalled]) await influxPost(`DROP SERIES FROM "${MEASUREMENTS.pipeline}" WHERE "${TAGS.instance}" = '${instance}'`);
  });

  describe('panel and annotation queries', () => {
    const entries = [...byPlacement('panel'), ...byPlacement('annotation')];
    it.each(entries.map((e) => [`${e.document} / ${e.owner} / ${e.refId}`, e] as const))('%s returns the series the panel expects', async (_name, entry) => {
      const text = interpolateInfluxQl(entry.text, dashboardContext);
      expect(text).not.toMatch(/\$\w/); // nothing left for Grafana to substitute
      const result = await influxQuery(text);
      expect(result.error, text).toBeUndefined();
      expect(result.series?.length ?? 0, `no series for ${text}`).toBeGreaterThan(0);
      const statement = entry.statement;
      if (statement.statement !== 'select') throw new Error('panels only hold SELECT statements');
      for (const series of result.series ?? []) {
        expect(series.name).toBe(statement.measurement);
        expect(series.columns).toEqual(expectedColumns(entry));
        expect(Object.keys(series.tags ?? {}).sort()).toEqual([...statement.groupByTags].sort());
        expect(series.values.length).toBeGreaterThan(0);
      }
      // Every column carries real values: in each series for stream data (every window writes
      // every field), in some series for pipeline data (each service writes its own fields).
      const columnHasValues = (series: InfluxSeries[], column: number) => series.some((one) => one.values.some((row) => row[column] !== null));
      const groups = statement.seriesKey === 'pipeline' ? [result.series ?? []] : (result.series ?? []).map((one) => [one]);
      for (const group of groups) {
        for (let column = 1; column < expectedColumns(entry).length; column += 1) {
          expect(columnHasValues(group, column), `column ${expectedColumns(entry)[column]} all null in ${text}`).toBe(true);
        }
      }
      // Only the selected streams come back, and both of them.
      if (statement.groupByTags.includes(TAGS.stream)) {
        const streams = new Set(result.series?.map((one) => one.tags?.[TAGS.stream]));
        expect(streams).toEqual(new Set(kernels.map((k) => `${job}/${k}`)));
      }
      // Each selected instance whose service writes one of the selected fields comes back.
      if (statement.seriesKey === 'pipeline') {
        const selected = new Set(statement.fields.map((f) => f.field));
        const expectedInstances = Object.entries(pipelineFieldsByInstance)
          .filter(([, fields]) => fields.some((f) => selected.has(f)))
          .map(([instance]) => instance);
        expect(new Set(result.series?.map((one) => one.tags?.[TAGS.instance]))).toEqual(new Set(expectedInstances));
      }
    });

    it('the kernel filter really filters: one kernel selected, one stream returned', async () => {
      const entry = byPlacement('panel').find((e) => e.owner.startsWith('Loss:'));
      if (entry === undefined) throw new Error('loss panel query missing from the catalog');
      const text = interpolateInfluxQl(entry.text, { ...dashboardContext, variables: { ...variables, [TAGS.kernel]: { value: 'escape.time' } } });
      const result = await influxQuery(text);
      expect(result.series?.map((s) => s.tags?.[TAGS.stream])).toEqual([`${job}/escape.time`]);
    });
  });

  describe('template variable queries', () => {
    const expected: Record<string, string[]> = {
      [TAGS.job]: [job],
      [TAGS.kernel]: [...kernels, staleKernel],
      [TAGS.host]: ['int-host'],
      [LABEL_TAGS.pod]: kernels.map((kernel) => `pod-${kernel}`), // narrowed by $kernel (the two selected)
      [TAGS.device]: [device],
      [TAGS.deviceUuid]: ['00000000-0000-0000-0000-000000000000'],
      [TAGS.n]: [groupSize],
      [TAGS.service]: [PIPELINE_SERVICES.collector, PIPELINE_SERVICES.estimator],
      [TAGS.instance]: [instanceLive, instanceStalled],
    };
    it.each(byPlacement('variable').map((e) => [`${e.document} / $${e.owner}`, e] as const))('%s lists the values written', async (_name, entry) => {
      const text = interpolateInfluxQl(entry.text, dashboardContext);
      const result = await influxQuery(text);
      expect(result.error, text).toBeUndefined();
      const values = (result.series ?? []).flatMap((s) => {
        expect(s.columns).toEqual(['key', 'value']);
        return s.values.map((row) => row[1] as string);
      });
      for (const value of expected[entry.owner] ?? ['<no expectation>']) expect(values).toContain(value);
    });
  });

  describe('alert rule queries', () => {
    const rules = generated.alertRules.groups.flatMap((g) => g.rules);

    /** Label set as Grafana alerting shows it: `k=v` pairs sorted by key. */
    function labelKey(labels: Record<string, string>): string {
      return Object.keys(labels)
        .sort()
        .map((k) => `${k}=${labels[k]}`)
        .join(',');
    }
    const streamKey = (kernel: string) => labelKey({ [TAGS.stream]: `${job}/${kernel}` });

    async function runRuleQuery(uid: string, refId: string): Promise<Map<string, number | null>> {
      const rule = rules.find((r) => r.uid === uid);
      const query = rule?.data.find((d) => d.refId === refId);
      const range = query?.relativeTimeRange;
      if (rule === undefined || query === undefined || range === undefined) throw new Error(`rule ${uid} has no data query ${refId}`);
      const entry = byPlacement('alert-rule').find((e) => e.owner === rule.title && e.refId === refId);
      expect(entry?.text).toBe(query.model['query']);
      const now = Date.now();
      const text = interpolateInfluxQl(String(query.model['query']), {
        fromMillis: now - range.from * 1000,
        toMillis: now - range.to * 1000,
        intervalMillis: Number(query.model['intervalMs']),
      });
      const result = await influxQuery(text);
      expect(result.error, text).toBeUndefined();
      // One value per label set: the rule's reduce step would see exactly these. Per-stream
      // rules group by the whole stream identity; their label sets are keyed by the stream here.
      const values = new Map<string, number | null>();
      for (const series of result.series ?? []) {
        expect(series.values).toHaveLength(1);
        const tags = series.tags ?? {};
        const stream = tags[TAGS.stream];
        if (stream !== undefined) identityTags.set(stream, tags);
        values.set(stream === undefined ? labelKey(tags) : labelKey({ [TAGS.stream]: stream }), (series.values[0] as unknown[])[1] as number | null);
      }
      return values;
    }
    /** The identity tags each per-stream rule query returned, by stream. */
    const identityTags = new Map<string, Record<string, string>>();

    it('rising imbalance: window mean against its baseline stays under the factor for the steady streams, with enough groups', async () => {
      const { factor, minGroups } = ALERT_DEFINITIONS.risingImbalance.params;
      const now = await runRuleQuery('warpwatch-rising-imbalance', 'A');
      const baseline = await runRuleQuery('warpwatch-rising-imbalance', 'B');
      const groups = await runRuleQuery('warpwatch-rising-imbalance', 'C');
      // escape.time is flat at 2.0 × 1.5; matpow creeps up by 0.1 % a window (ratio about 1.02).
      expect(now.get(streamKey('escape.time'))).toBeCloseTo(3, 12);
      expect(baseline.get(streamKey('escape.time'))).toBeCloseTo(3, 12);
      const matpowRatio = (now.get(streamKey('matpow')) ?? NaN) / (baseline.get(streamKey('matpow')) ?? NaN);
      expect(matpowRatio).toBeGreaterThan(1.01);
      expect(matpowRatio).toBeLessThan(factor);
      // 5 min of 10 s windows of 128 groups (±1 window at the edges); the silent stream has none.
      for (const kernel of kernels) expect(groups.get(streamKey(kernel))).toBeGreaterThanOrEqual(29 * 128);
      expect(groups.get(streamKey('matpow'))).toBeGreaterThan(minGroups);
      expect(now.has(streamKey(staleKernel))).toBe(false);
      expect(baseline.has(streamKey(staleKernel))).toBe(true);
      // The alert carries the stream identity (job, kernel, n, host, pod, device UUID).
      expect(identityTags.get(`${job}/matpow`)).toMatchObject({ job, kernel: 'matpow', n: groupSize, host: 'int-host', pod: 'pod-matpow', device_uuid: '00000000-0000-0000-0000-000000000000' });
    });

    it('drift sees the drifting stream above the threshold and the healthy one below, both with enough groups', async () => {
      const eta = await runRuleQuery('warpwatch-drift', 'A');
      expect(eta.get(streamKey('escape.time'))).toBeGreaterThan(DRIFT_RELATIVE_ERROR_THRESHOLD);
      expect(eta.get(streamKey('matpow'))).toBeLessThan(DRIFT_RELATIVE_ERROR_THRESHOLD);
      const groups = await runRuleQuery('warpwatch-drift', 'B');
      for (const kernel of kernels) expect(groups.get(streamKey(kernel))).toBeGreaterThan(ALERT_DEFINITIONS.drift.params.minGroups);
    });

    it('stale stream: A − B is 0 only for the stream that went silent', async () => {
      const lastHour = await runRuleQuery('warpwatch-stream-stale', 'A');
      const untilFiveMinutesAgo = await runRuleQuery('warpwatch-stream-stale', 'B');
      const difference = (kernel: string) => (lastHour.get(streamKey(kernel)) ?? NaN) - (untilFiveMinutesAgo.get(streamKey(kernel)) ?? NaN);
      expect(difference(staleKernel)).toBe(0);
      for (const kernel of kernels) expect(difference(kernel)).toBeGreaterThanOrEqual(29); // ≥ 5 min of 10 s windows
    });

    it('pipeline stalled: frames in grow on both instances, frames out only on the live one', async () => {
      const framesIn = await runRuleQuery('warpwatch-pipeline-stalled', 'A');
      const framesOut = await runRuleQuery('warpwatch-pipeline-stalled', 'B');
      const key = (service: string, instance: string) => labelKey({ [TAGS.service]: service, [TAGS.instance]: instance });
      expect(framesIn.get(key(PIPELINE_SERVICES.collector, instanceStalled))).toBeGreaterThan(0);
      expect(framesOut.get(key(PIPELINE_SERVICES.collector, instanceStalled))).toBe(0);
      expect(framesIn.get(key(PIPELINE_SERVICES.estimator, instanceLive))).toBeGreaterThan(0);
      expect(framesOut.get(key(PIPELINE_SERVICES.estimator, instanceLive))).toBeGreaterThan(0);
    });

    it('every rule data query is covered above', () => {
      const covered = new Set(['warpwatch-rising-imbalance/A', 'warpwatch-rising-imbalance/B', 'warpwatch-rising-imbalance/C', 'warpwatch-drift/A', 'warpwatch-drift/B', 'warpwatch-stream-stale/A', 'warpwatch-stream-stale/B', 'warpwatch-pipeline-stalled/A', 'warpwatch-pipeline-stalled/B']);
      const all = rules.flatMap((r) => r.data.filter((d) => d.datasourceUid !== '__expr__').map((d) => `${r.uid}/${d.refId}`));
      expect(new Set(all)).toEqual(covered);
    });
  });
});
