import type { EstimatorConfig } from '../../estimator/index.ts';
import { createEstimatorEngine, modelFitter, type EngineTelemetry } from '../../estimator/index.ts';
import { createEstimatorInfluxWriter } from '../../estimator/index.ts';
import type { InfluxWriter } from '../../service/index.ts';
import type { DistributionRecord } from '../../contracts/index.ts';
import type { ParametricFitter } from '../../estimator/index.ts';
import { DemoError } from './errors.ts';
import { streamRefKey, type DemoStreamRef, type DemoTransport } from './demo-transport.ts';

/**
 * The embedded transport: frames go straight into the estimator engine (the same object
 * the `warpwatch estimate` service runs behind its Kafka consumer), and the records the
 * engine publishes for warpwatch.distributions are kept in memory. With an InfluxDB sink in
 * the config, the engine's points are also written there by the estimator's own writer.
 *
 * @example
 * const transport = createInProcessTransport(demoEstimatorConfig(process.env, { influx: false, job }), demoFitter);
 */
export function createInProcessTransport(config: EstimatorConfig, fitter: ParametricFitter | undefined): DemoTransport {
  const records = new Map<string, DistributionRecord[]>();
  const problems: string[] = [];
  let influx: InfluxWriter | undefined;
  if (config.influx !== undefined) {
    influx = createEstimatorInfluxWriter(config.influx, (error) => problems.push(`InfluxDB: ${error.code}: ${error.message}`));
  }
  const telemetry: EngineTelemetry = {
    frame: () => undefined,
    windowClosed: () => undefined,
    modelError: (error, streamKey) => problems.push(`model error on ${streamKey}: ${error instanceof Error ? error.message : String(error)}`),
    alertRaised: () => undefined,
  };
  const engine = createEstimatorEngine(
    // The config's slices are the engine's options as they are; the fitter and the clock are passed in.
    { ...config, fitter: fitter ?? modelFitter, monotonicMillis: () => performance.now() },
    {
      writePoints: (points) => influx?.write(points),
      publishDistribution: (_key, record) => {
        const key = streamRefKey(record.stream, record.groupSize);
        const list = records.get(key) ?? [];
        list.push(record);
        records.set(key, list);
      },
      publishAlert: () => undefined,
    },
    telemetry,
  );
  let offset = 0;
  let rejected = 0;
  return {
    kind: 'in-process',
    deliver(raw) {
      const outcome = engine.handleMessage(0, String(offset), raw, Date.now());
      offset += 1;
      if (outcome === 'rejected') rejected += 1;
    },
    endRun() {
      // End of input for the run: close its window now (the service closes it after idleCloseMillis).
      engine.closeAll();
    },
    async collect(streams: readonly DemoStreamRef[]) {
      engine.closeAll();
      if (influx !== undefined) {
        try {
          await influx.flush();
        } catch (error) {
          throw new DemoError('WW_ERR_DEMO_TRANSPORT', `writing the demo's points to InfluxDB ${config.influx?.url ?? ''} failed: ${(error as Error).message}`, { cause: error, retriable: true });
        }
      }
      return streams.map((stream) => {
        const found = records.get(streamRefKey(stream.stream, stream.groupSize)) ?? [];
        const groups = found.reduce((sum, r) => sum + r.window.groups, 0);
        if (groups !== stream.groups) {
          throw new DemoError(
            'WW_ERR_DEMO_NO_RESULT',
            `the estimator closed windows with ${groups} groups for ${stream.stream} n=${stream.groupSize}, expected ${stream.groups} (frames rejected: ${rejected})`,
          );
        }
        return found;
      });
    },
    problems: () => [...problems, ...(rejected > 0 ? [`${rejected} frames were rejected by the estimator`] : [])],
    async close() {
      if (influx !== undefined) {
        const left = (await influx.close(5_000)).dropped.closed;
        if (left > 0) problems.push(`${left} points could not be written to InfluxDB`);
      }
    },
  };
}
