// The self-telemetry names the alert rules read are the instruments the services create: each
// OpenTelemetry name is a string literal in its service's telemetry module, with the kind the
// Prometheus name implies (counter → `_total`), and documented in the service's docs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { SERVICE_METRICS } from './service-metric-names.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const text = (path: string): string => readFileSync(join(root, path), 'utf8');
const SOURCES = { collector: text('collector/collector-metrics.ts'), estimator: text('estimator/adapters/estimator-telemetry.ts') };
const DOCS = { collector: text('docs/collector.md'), estimator: text('docs/estimator.md') };

describe('SERVICE_METRICS', () => {
  it.each(Object.entries(SERVICE_METRICS))('%s is an instrument its service creates, of the same kind', (_key, metric) => {
    const service = metric.otel.startsWith('warpwatch.collector.') ? 'collector' : 'estimator';
    const creation = new RegExp(`create(Observable)?(Counter|Gauge|ObservableGauge|ObservableCounter)\\('${metric.otel.replaceAll('.', '\\.')}'`).exec(SOURCES[service]);
    expect(creation, `${metric.otel} in ${service}`).not.toBeNull();
    expect(creation?.[2]?.endsWith('Counter') ? 'counter' : 'gauge').toBe(metric.kind);
    expect(metric.prometheus).toBe(`${metric.otel.replaceAll('.', '_')}${metric.kind === 'counter' ? '_total' : ''}`);
    expect(DOCS[service]).toContain(metric.otel);
  });
});
