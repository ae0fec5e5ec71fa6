// The collector's own counters in InfluxDB (warpwatch_pipeline, service=collector), against
// the real Kafka and InfluxDB 1.8 of the shared local stack: the real CLI replays a few
// frames with --influx-url, then every query of the "Pipeline health" dashboard and of the
// "Pipeline stalled" alert rule (Grafana's macros and variables substituted the way Grafana
// does, dashboards/grafana-macros.ts) must return the collector's series with the right values.
// Everything goes to a scratch database and scratch topics, dropped afterwards.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createInfluxMetricsWriter } from '../../collector/index.ts';
import { Secret } from '../../service/index.ts';
import { fixtureFrameBytes } from '../../collector/testing/frame-fixtures.ts';
import { PIPELINE_HEALTH_UID, generateArtifacts, interpolateInfluxQl, type CatalogedQuery, type GrafanaQueryContext } from '../../dashboards/index.ts';
import { FIELDS, MEASUREMENTS, PIPELINE_SERVICES, TAGS } from '../../contracts/index.ts';
import { requiredEnv, type InfluxResult } from './stack-env.ts';


const run = randomUUID().slice(0, 8);
const database = `ww_cm_${run}`;
const instance = `ww-cm-${run}:replay`;
const topic = `warpwatch.it.cm-frames-${run}`;
const dlqTopic = `warpwatch.it.cm-dlq-${run}`;
const VALID_FRAMES = 20;
const p = FIELDS.pipeline;

let influxUrl = '';
let directory = '';
let runStartMillis = 0;
let runEndMillis = 0;
let stderr = '';

async function influx(text: string, db = database): Promise<InfluxResult> {
  const response = await fetch(`${influxUrl}/query`, { method: 'POST', body: new URLSearchParams({ db, q: text, epoch: 'ms' }) });
  expect(response.status, `InfluxDB answered ${response.status} to ${text}`).toBe(200);
  const body = (await response.json()) as { results: InfluxResult[] };
  const result = body.results[0] ?? {};
  expect(result.error, text).toBeUndefined();
  return result;
}

/** Runs `warpwatch collect --replay FILE` with the Influx flags; resolves with its exit code. */
function runCollector(file: string): Promise<number | null> {
  const child = spawn(
    process.execPath,
    [
      'bin/warpwatch.mjs',
      'collect',
      '--replay',
      file,
      // The file ends in a frame with a broken CRC on purpose (one rejected frame to the DLQ).
      '--accept-damage',
      '--brokers',
      requiredEnv('WARPWATCH_KAFKA_BROKERS'),
      '--partitions',
      '1',
      '--spool-dir',
      join(directory, 'spool'),
      '--metrics-port',
      'off',
      '--influx-url',
      influxUrl,
      '--influx-database',
      database,
      '--pipeline-interval-millis',
      '200',
      '--instance',
      instance,
    ],
    { env: { ...process.env, WARPWATCH_FRAMES_TOPIC: topic, WARPWATCH_DLQ_TOPIC: dlqTopic }, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

const generated = generateArtifacts();
const pipelineQueries = (placement: CatalogedQuery['placement']): CatalogedQuery[] =>
  generated.catalog.entries.filter((e) => e.document === PIPELINE_HEALTH_UID && e.placement === placement);

/**
 * The dashboard as a user would open it on this collector: Service = collector, Instance =
 * ours. Time is compressed: the run lasts well under a second, so `$__interval` is 1 ms (one
 * bucket per stored point) instead of the panel minimum of 15 s; the statements are the
 * same, only the bucket width differs.
 */
const context = (): GrafanaQueryContext => ({
  fromMillis: runStartMillis - 60_000,
  toMillis: runEndMillis + 60_000,
  intervalMillis: 1,
  variables: { [TAGS.service]: { value: [PIPELINE_SERVICES.collector] }, [TAGS.instance]: { value: [instance] } },
});

describe('collector self-metrics in the real InfluxDB', () => {
  beforeAll(async () => {
    influxUrl = requiredEnv('WARPWATCH_INFLUX_URL');
    directory = mkdtempSync(join(tmpdir(), 'ww-collector-metrics-it-'));
    await influx(`CREATE DATABASE "${database}"`, requiredEnv('WARPWATCH_INFLUX_DATABASE'));
    const frames = Array.from({ length: VALID_FRAMES }, (_, s) => Buffer.from(fixtureFrameBytes({ job: `ww-cm-${run}`, kernel: `k${s % 2}`, sequence: s })));
    const broken = Buffer.from(frames[0] ?? Buffer.alloc(0));
    broken[broken.length - 1] = (broken[broken.length - 1] ?? 0) ^ 0xff; // CRC mismatch: one frame rejected to the DLQ
    const file = join(directory, 'run.wwf');
    writeFileSync(file, Buffer.concat([...frames, broken]));
    runStartMillis = Date.now();
    const code = await runCollector(file);
    runEndMillis = Date.now();
    expect(code, stderr).toBe(0);
  });

  afterAll(async () => {
    if (influxUrl !== '') await influx(`DROP DATABASE "${database}"`, requiredEnv('WARPWATCH_INFLUX_DATABASE'));
    if (directory !== '') rmSync(directory, { recursive: true, force: true });
    const admin = new Kafka({ clientId: 'warpwatch-collector-metrics-it', brokers: requiredEnv('WARPWATCH_KAFKA_BROKERS').split(','), logLevel: logLevel.NOTHING }).admin();
    await admin.connect();
    try {
      const existing = new Set(await admin.listTopics());
      const ours = [topic, dlqTopic].filter((t) => existing.has(t));
      if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 30_000 });
    } finally {
      await admin.disconnect();
    }
  });

  it('the CLI reports its points as written, and the last point holds the final totals as floats', async () => {
    expect(stderr).toMatch(/influx=http:\/\/127\.0\.0\.1:\d+ bucket=ww_cm_\w+\/autogen instance=ww-cm-\w+:replay every 200 ms/);
    expect(stderr).toMatch(/read 21 \(frames 20, rejected 1\) = delivered 21 \(frames 20, DLQ 1\) \+ dropped 0 \+ held 0; everything delivered; pipeline points to InfluxDB: \d+ written, 0 dropped, 0 write error\(s\)/);
    const written = Number(/pipeline points to InfluxDB: (\d+) written/.exec(stderr)?.[1]);
    expect(written).toBeGreaterThanOrEqual(2); // one at start, one at stop, one per 200 ms between

    const all = await influx(`SELECT * FROM "${MEASUREMENTS.pipeline}" WHERE "${TAGS.instance}" = '${instance}'`);
    const series = all.series?.[0];
    expect(all.series).toHaveLength(1);
    expect(series?.values).toHaveLength(written);
    const rows = (series?.values ?? []).map((row) => Object.fromEntries((series?.columns ?? []).map((c, i) => [c, row[i]])));
    expect(rows.every((row) => row[TAGS.service] === PIPELINE_SERVICES.collector)).toBe(true);
    expect(rows[0]).toMatchObject({ [p.framesIn]: 0, [p.framesOut]: 0, [p.framesRejected]: 0 });
    // Write-ahead: every record (the frames and the DLQ record) is taken into the spool.
    expect(rows[rows.length - 1]).toMatchObject({ [p.framesIn]: VALID_FRAMES, [p.framesOut]: VALID_FRAMES, [p.framesRejected]: 1, [p.framesSpooled]: VALID_FRAMES + 1, [p.framesDropped]: 0, [p.influxWriteErrors]: 0 });
    for (const row of rows) expect(Number(row['time'])).toBeGreaterThanOrEqual(runStartMillis - 1_000);
    // Cumulative: never decreasing within one process.
    for (let i = 1; i < rows.length; i += 1) expect(Number(rows[i]?.[p.framesIn])).toBeGreaterThanOrEqual(Number(rows[i - 1]?.[p.framesIn]));

    const fieldKeys = await influx(`SHOW FIELD KEYS FROM "${MEASUREMENTS.pipeline}"`);
    const types = Object.fromEntries((fieldKeys.series?.[0]?.values ?? []).map(([key, type]) => [String(key), String(type)]));
    expect(types).toEqual({
      [p.framesIn]: 'float',
      [p.framesOut]: 'float',
      [p.framesRejected]: 'float',
      [p.framesSpooled]: 'float',
      [p.framesDropped]: 'float',
      [p.influxWriteErrors]: 'float',
    });
  });

  it('the Service and Instance variables list the collector', async () => {
    const variables = pipelineQueries('variable');
    expect(variables.map((v) => v.owner).sort()).toEqual([TAGS.instance, TAGS.service]);
    for (const entry of variables) {
      const result = await influx(interpolateInfluxQl(entry.text, context()));
      const values = (result.series ?? []).flatMap((s) => s.values.map((row) => String(row[1])));
      expect(values).toContain(entry.owner === TAGS.service ? PIPELINE_SERVICES.collector : instance);
    }
  });

  describe('panel queries', () => {
    const collectorFields = new Set<string>([p.framesIn, p.framesOut, p.framesRejected, p.framesSpooled, p.framesDropped, p.influxWriteErrors]);
    it.each(pipelineQueries('panel').map((e) => [e.owner, e] as const))('%s', async (_owner, entry) => {
      const text = interpolateInfluxQl(entry.text, context());
      expect(text).not.toMatch(/\$\w/);
      const result = await influx(text);
      const statement = entry.statement;
      if (statement.statement !== 'select') throw new Error('panels hold SELECT statements');
      if (!statement.fields.some((f) => collectorFields.has(f.field))) {
        // Consumer lag and window latency are estimator gauges: the collector has none.
        expect(result.series ?? []).toEqual([]);
        return;
      }
      expect(result.series, text).toHaveLength(1);
      const series = result.series?.[0];
      expect(series?.tags).toEqual({ [TAGS.service]: PIPELINE_SERVICES.collector, [TAGS.instance]: instance });
      expect(series?.columns).toEqual(['time', ...statement.fields.map((f) => f.alias)]);
      expect(series?.values.length).toBeGreaterThan(0);
      for (let column = 1; column < (series?.columns.length ?? 0); column += 1) {
        expect(series?.values.some((row) => typeof row[column] === 'number'), `${series?.columns[column]} in ${text}`).toBe(true);
      }
    });

    it('rates add up to the counters: Σ rate·Δt over the buckets = last − first', async () => {
      const entry = pipelineQueries('panel').find((e) => e.owner === 'Frames in / out per second');
      if (entry === undefined) throw new Error('frames panel missing from the catalog');
      const rates = (await influx(interpolateInfluxQl(entry.text, context()))).series?.[0]?.values ?? [];
      // Bucket times of the same GROUP BY, from a plain max() query (the derivative divides by their distance).
      const buckets = (
        await influx(
          interpolateInfluxQl(
            `SELECT max("${p.framesIn}") FROM "${MEASUREMENTS.pipeline}" WHERE "${TAGS.instance}" = '${instance}' AND $timeFilter GROUP BY time($__interval) fill(none)`,
            context(),
          ),
        )
      ).series?.[0]?.values ?? [];
      expect(rates).toHaveLength(buckets.length - 1);
      let totalIn = 0;
      let totalOut = 0;
      rates.forEach((row, k) => {
        const deltaSeconds = (Number(buckets[k + 1]?.[0]) - Number(buckets[k]?.[0])) / 1000;
        expect(Number(row[0])).toBe(Number(buckets[k + 1]?.[0]));
        totalIn += Number(row[1]) * deltaSeconds;
        totalOut += Number(row[2]) * deltaSeconds;
      });
      expect(totalIn).toBeCloseTo(VALID_FRAMES, 6);
      expect(totalOut).toBeCloseTo(VALID_FRAMES, 6);
    });

    it('losses in the time range: one rejected frame, nothing dropped, no write errors', async () => {
      const entry = pipelineQueries('panel').find((e) => e.owner === 'Losses in the time range');
      if (entry === undefined) throw new Error('totals panel missing from the catalog');
      const series = (await influx(interpolateInfluxQl(entry.text, context()))).series?.[0];
      expect(series?.columns).toEqual(['time', p.framesRejected, p.framesDropped, p.influxWriteErrors]);
      expect(series?.values[0]?.slice(1)).toEqual([1, 0, 0]);
    });
  });

  it('the "Pipeline stalled" rule sees frames in and out for this collector (healthy)', async () => {
    const rule = generated.catalog.entries.filter((e) => e.placement === 'alert-rule' && e.owner === 'Pipeline stalled');
    expect(rule).toHaveLength(2);
    for (const entry of rule) {
      const result = await influx(interpolateInfluxQl(entry.text, context()));
      const ours = result.series?.find((s) => s.tags?.[TAGS.instance] === instance);
      expect(ours?.tags?.[TAGS.service]).toBe(PIPELINE_SERVICES.collector);
      expect(ours?.values[0]?.[1]).toBe(VALID_FRAMES);
    }
  });

  it('a database InfluxDB does not have: the writer drops and counts the points, logs once, never throws', async () => {
    const logs: string[] = [];
    const writer = createInfluxMetricsWriter(
      {
        url: influxUrl,
        database: `${database}_missing`,
        retentionPolicy: 'autogen',
        org: '-',
        token: new Secret(''),
        maxBufferPoints: 100,
        requestTimeoutMillis: 10_000,
      },
      (_level, message) => logs.push(message),
    );
    const point = (frames: number) => ({
      measurement: MEASUREMENTS.pipeline,
      tags: { [TAGS.service]: PIPELINE_SERVICES.collector, [TAGS.instance]: instance },
      fields: { [p.framesIn]: frames },
      timestampMillis: Date.now(),
    });
    writer.write([point(1)]);
    writer.write([point(2)]);
    const stats = await writer.close(10_000);
    expect(stats.pointsWritten).toBe(0);
    expect(stats.pointsDropped).toBe(2);
    expect(stats.dropped.rejected).toBe(2);
    expect(stats.writeErrors).toBeGreaterThanOrEqual(1);
    expect(logs.filter((l) => l.includes('WW_ERR_COLLECTOR_INFLUX_WRITE'))).toHaveLength(1);
    expect(logs[0]).toMatch(/HTTP 404/);
  });
});
