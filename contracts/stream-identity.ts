/**
 * The identity of a stream, defined once for every folder (collector, estimator, dashboards,
 * cli): which job and kernel, at which group size, on which device of which host, with which
 * labels. Pure: no I/O, no dependencies.
 *
 * A stream is one kernel of one job at one group size n on one device (by UUID) of one host.
 * Eight identical GPUs of a node are eight streams (their UUIDs differ); runs of one kernel at
 * n = 8 and n = 32 are two streams. Labels (`--label`, `WARPWATCH_LABEL_*`, and in Kubernetes
 * pod, namespace and node) describe where a stream runs but do not split it: they are the
 * labels of the collector that forwarded its frames.
 *
 * Where the parts come from: job, kernel, n, source and the device (UUID and model name) are
 * in every frame (SPEC.md: the recorder reads the GPU's UUID; the CPU backend gives its CPU a
 * host-stable name-based UUID from the machine id and the CPU model); the host and the labels
 * are added by the collector as Kafka headers ({@link KAFKA_HEADERS}).
 */

/** Kafka header names the collector sets on every frames-topic record and the estimator reads. */
export const KAFKA_HEADERS = {
  /** Where the collector read the frame: `socket` | `stdin` | `file`. */
  source: 'ww-source',
  /** Host name of the collector (WARPWATCH_HOST, default the machine's). */
  host: 'ww-host',
  /** Prefix of one header per label: `ww-label-<name>`. */
  labelPrefix: 'ww-label-',
  /** W3C trace context of the frame. */
  traceparent: 'traceparent',
} as const;

/** The nil UUID: the device UUID of frames that do not know theirs. */
export const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** Everything that names a stream. */
export interface StreamIdentity {
  /** `<job>/<kernel>`: the human name of the stream (a tag, and the first part of {@link streamKeyOf}). */
  readonly stream: string;
  readonly job: string;
  readonly kernel: string;
  /** n: lanes per group. */
  readonly groupSize: number;
  readonly source: 'cuda' | 'cpu';
  /** Device model name as the frame gives it (e.g. "NVIDIA H100 80GB HBM3", or the CPU model). */
  readonly device: string;
  /** Device UUID as the frame gives it ({@link NIL_UUID} when unknown). */
  readonly deviceUuid: string;
  /** Host of the collector that forwarded the frames ('' when unknown: frames read without a collector). */
  readonly host: string;
  /** Labels of that collector (pod, namespace, node, and any `--label`). */
  readonly labels: Readonly<Record<string, string>>;
}

/** The parts of an identity that make its key (labels do not). */
export type StreamKeyParts = Pick<StreamIdentity, 'job' | 'kernel' | 'groupSize' | 'source' | 'deviceUuid' | 'host'>;

/**
 * The key of a stream: `<job>/<kernel>|n=<n>|<source>|<device UUID>|<host>`. The Kafka key of
 * its frames (so one stream stays on one partition), the key of its state in the estimator
 * and of its record in the compacted `warpwatch.distributions` topic.
 *
 * @example streamKeyOf({ job: 'train', kernel: 'matpow', groupSize: 32, source: 'cuda', deviceUuid: 'GPU-…', host: 'node7' })
 * // 'train/matpow|n=32|cuda|GPU-…|node7'
 */
export function streamKeyOf(parts: StreamKeyParts): string {
  return `${parts.job}/${parts.kernel}|n=${parts.groupSize}|${parts.source}|${parts.deviceUuid}|${parts.host}`;
}

/**
 * The collector's attribution of a frames-topic record, read from its Kafka headers: the host
 * and the labels (`ww-label-<name>` → `<name>`).
 *
 * @example attributionFromHeaders({ 'ww-host': 'node7', 'ww-label-pod': 'trainer-0' }) // { host: 'node7', labels: { pod: 'trainer-0' } }
 */
export function attributionFromHeaders(headers: Readonly<Record<string, string>> | undefined): Pick<StreamIdentity, 'host' | 'labels'> {
  const labels: Record<string, string> = {};
  let host = '';
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name === KAFKA_HEADERS.host) host = value;
    else if (name.startsWith(KAFKA_HEADERS.labelPrefix)) labels[name.slice(KAFKA_HEADERS.labelPrefix.length)] = value;
  }
  return { host, labels };
}

/**
 * Whether an identity matches filters (each optional; a filter matches exactly): what `advise
 * --stream` selects with.
 *
 * @example matchesStreamFilter(identity, { stream: 'train/matpow', groupSize: 32 })
 */
export function matchesStreamFilter(
  identity: StreamIdentity,
  filter: { readonly stream?: string | undefined; readonly groupSize?: number | undefined; readonly device?: string | undefined; readonly host?: string | undefined },
): boolean {
  if (filter.stream !== undefined && identity.stream !== filter.stream) return false;
  if (filter.groupSize !== undefined && identity.groupSize !== filter.groupSize) return false;
  if (filter.device !== undefined && identity.deviceUuid !== filter.device && identity.device !== filter.device) return false;
  if (filter.host !== undefined && identity.host !== filter.host) return false;
  return true;
}
