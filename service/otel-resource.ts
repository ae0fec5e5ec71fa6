import { hostname } from 'node:os';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';

/** What names one running service in its telemetry. */
export interface ServiceResourceOptions {
  /** service.name, e.g. `warpwatch-collector` or `warpwatch-estimator`. */
  readonly serviceName: string;
  /** service.instance.id: the service's `--instance` (unique per running process). */
  readonly instanceId: string;
  /** service.version, when known. */
  readonly serviceVersion?: string | undefined;
  /** host.name; the machine's host name by default. */
  readonly hostName?: string | undefined;
}

/**
 * The OpenTelemetry resource of a warpwatch service: the SDK defaults (telemetry.sdk.*) merged
 * with service.name, service.instance.id, host.name and, when given, service.version, so that
 * Prometheus' `target_info` (and an OTLP receiver's job/instance labels) name the service and
 * never say `unknown_service`. One definition for the collector and the estimator.
 *
 * @example serviceResource({ serviceName: 'warpwatch-collector', instanceId: 'node-7:4242' }).attributes['service.name']; // 'warpwatch-collector'
 */
export function serviceResource(options: ServiceResourceOptions): Resource {
  return defaultResource().merge(
    resourceFromAttributes({
      'service.name': options.serviceName,
      'service.instance.id': options.instanceId,
      'host.name': options.hostName ?? hostname(),
      ...(options.serviceVersion === undefined ? {} : { 'service.version': options.serviceVersion }),
    }),
  );
}
