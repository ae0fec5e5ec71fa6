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
 *
 * The rules each part must follow are defined here once ({@link jobProblem} … {@link
 * sourceProblem}): the frame codec (protocol/) checks frames with these limits, the collector its
 * host and labels, and every CLI flag that names a part of an identity is read with the
 * `parse*` functions below (a {@link StreamIdentityError}, WW_ERR_STREAM_IDENTITY, exit 2).
 */
import { StreamIdentityError } from './errors.ts';

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
 * and the labels (`ww-label-<name>` → `<name>`). Each must follow the identity rules below
 * ({@link hostProblem}, {@link labelNameProblem}, {@link labelValueProblem}; a missing host is
 * '': a frame that did not pass a collector), as a collector checks its own: a record written
 * by anything else is refused rather than written into InfluxDB (a newline in a tag would split
 * its line).
 *
 * @throws StreamIdentityError (WW_ERR_STREAM_IDENTITY) naming the header, the rule and the value
 * @example attributionFromHeaders({ 'ww-host': 'node7', 'ww-label-pod': 'trainer-0' }) // { host: 'node7', labels: { pod: 'trainer-0' } }
 */
export function attributionFromHeaders(headers: Readonly<Record<string, string>> | undefined): Pick<StreamIdentity, 'host' | 'labels'> {
  const labels: Record<string, string> = {};
  let host = '';
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (name === KAFKA_HEADERS.host) {
      if (value !== '' && lastValidHeaders.get(name) !== value) checkHeader(name, value, hostProblem(value));
      host = value;
    } else if (name.startsWith(KAFKA_HEADERS.labelPrefix)) {
      const label = name.slice(KAFKA_HEADERS.labelPrefix.length);
      if (lastValidHeaders.get(name) !== value) {
        check(`Kafka header ${name}: label name`, label, labelNameProblem(label), label);
        checkHeader(name, value, labelValueProblem(value));
      }
      labels[label] = value;
    }
  }
  return { host, labels };
}

/**
 * A function giving what {@link attributionFromHeaders} gives, remembering its last answer:
 * headers whose ww-host and ww-label-* values are those of the last call get the same object
 * again, frozen (a collector sends the same host and labels on every record; its traceparent,
 * which changes per record, plays no part). The per-frame path of the estimator: one object per
 * collector instead of two per frame. Throws as attributionFromHeaders does.
 *
 * @example
 * const attributionOf = createAttributionReader();
 * attributionOf({ 'ww-host': 'node7' }) === attributionOf({ 'ww-host': 'node7', traceparent: '00-…' }); // true
 */
export function createAttributionReader(): (headers: Readonly<Record<string, string>> | undefined) => Pick<StreamIdentity, 'host' | 'labels'> {
  let last: Pick<StreamIdentity, 'host' | 'labels'> | undefined;
  const lastValues = new Map<string, string>();
  const unchanged = (headers: Readonly<Record<string, string>>): boolean => {
    let count = 0;
    for (const name in headers) {
      if (!Object.hasOwn(headers, name) || (name !== KAFKA_HEADERS.host && !name.startsWith(KAFKA_HEADERS.labelPrefix))) continue;
      if (lastValues.get(name) !== headers[name]) return false;
      count += 1;
    }
    return count === lastValues.size;
  };
  return (headers) => {
    const given = headers ?? {};
    if (last !== undefined && unchanged(given)) return last;
    const attribution = attributionFromHeaders(given);
    lastValues.clear();
    for (const [name, value] of Object.entries(given)) if (name === KAFKA_HEADERS.host || name.startsWith(KAFKA_HEADERS.labelPrefix)) lastValues.set(name, value);
    Object.freeze(attribution.labels);
    last = Object.freeze(attribution);
    return last;
  };
}

/**
 * The last value of each attribution header that passed the rules: a collector sends the same
 * host and labels on every record, so each is checked once, not once per frame.
 */
const lastValidHeaders = new Map<string, string>();

function checkHeader(name: string, value: string, problem: string | undefined): void {
  check(`Kafka header ${name}`, value, problem, value);
  if (lastValidHeaders.size >= 1024) lastValidHeaders.clear();
  lastValidHeaders.set(name, value);
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

/** Longest job, kernel, device name, host or label value, in UTF-8 bytes (the frame's one-byte length prefix). */
export const MAX_IDENTITY_TEXT_BYTES = 255;

/** Smallest and largest group size n of a stream (lanes per group: at most a warp of 32). */
export const MIN_GROUP_SIZE = 1;
export const MAX_GROUP_SIZE = 32;

/** The sources a frame can come from: the CUDA recorder or the CPU lockstep backend. */
export const STREAM_SOURCES = ['cuda', 'cpu'] as const;

/** A device UUID as frames carry it: lowercase `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
export const DEVICE_UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A label name: a letter or `_`, then up to 63 letters, digits, `_`, `.`, `-` (a Kafka header suffix and an InfluxDB tag key). */
export const LABEL_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * The control characters no part of an identity may contain: C0 (U+0000–U+001F, newline and tab
 * among them), DEL (U+007F) and C1 (U+0080–U+009F). A newline in a tag value would split a line
 * of InfluxDB line protocol and start a new point (docs/estimator.md "Tags").
 */
// eslint-disable-next-line no-control-regex -- the rule is exactly "no control characters"
export const CONTROL_CHARACTER_PATTERN = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A backslash InfluxDB 1.8 cannot store in a tag value: one right before `,`, `=` or a space, or
 * at the end. Line protocol escapes those three characters with a backslash and has no escape
 * for the backslash itself, so such a value cannot be written unchanged (measured on InfluxDB
 * 1.8.10: a tag value ending in `\` is refused as "invalid tag format", and `\,` is stored with
 * the backslash doubled; docs/estimator.md "Tags").
 */
export const INFLUX_UNSAFE_BACKSLASH_PATTERN = /\\(?=[,= ]|$)/;

// eslint-disable-next-line no-control-regex -- finds the control characters to show them escaped
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f-\u009f]/g;

/** `U+000A`: a code point as the rules' messages name it. */
function codePointName(char: string): string {
  return `U+${(char.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
}

/** UTF-8 length of a well-formed string, without allocating. */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/**
 * The rule every identity text follows: well-formed Unicode of 1..255 UTF-8 bytes (0.. when
 * `mayBeEmpty`), without control characters ({@link CONTROL_CHARACTER_PATTERN}) and without a
 * backslash InfluxDB cannot store ({@link INFLUX_UNSAFE_BACKSLASH_PATTERN}).
 */
function textProblem(text: string, mayBeEmpty = false): string | undefined {
  if (!mayBeEmpty && text === '') return 'must not be empty';
  if (LONE_SURROGATE.test(text)) return 'must be well-formed Unicode (it has a lone surrogate)';
  const bytes = utf8Length(text);
  if (bytes > MAX_IDENTITY_TEXT_BYTES) return `must be at most ${MAX_IDENTITY_TEXT_BYTES} UTF-8 bytes (it has ${bytes})`;
  return identityCharactersProblem(text);
}

/**
 * What is wrong with the characters of an identity text, or undefined: no control character
 * ({@link CONTROL_CHARACTER_PATTERN}) and no backslash right before `,`, `=`, a space or the end
 * ({@link INFLUX_UNSAFE_BACKSLASH_PATTERN}). Part of every text rule below; the frame codecs
 * (protocol/, kernels/include/warpwatch/frame.hpp) check the same on the bytes of a frame.
 *
 * @example identityCharactersProblem('k\nzz') // 'must not contain control characters (U+000A at character 2)'
 * @example identityCharactersProblem('hostB\\') // "must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at character 6"
 */
export function identityCharactersProblem(text: string): string | undefined {
  const control = CONTROL_CHARACTER_PATTERN.exec(text);
  if (control !== null) return `must not contain control characters (${codePointName(control[0])} at character ${control.index + 1})`;
  const backslash = INFLUX_UNSAFE_BACKSLASH_PATTERN.exec(text);
  if (backslash !== null) return `must not have a '\\' before ',', '=', a space or at its end (InfluxDB cannot store it), at character ${backslash.index + 1}`;
  return undefined;
}

/**
 * What is wrong with a job name, or undefined when it is valid: 1..255 UTF-8 bytes of
 * well-formed Unicode without `/` (the stream name splits at its first `/`), control characters
 * or a backslash InfluxDB cannot store ({@link identityCharactersProblem}).
 *
 * @example jobProblem('train/7') // "must not contain '/'"
 */
export function jobProblem(job: string): string | undefined {
  return textProblem(job) ?? (job.includes('/') ? "must not contain '/'" : undefined);
}

/**
 * What is wrong with a kernel name, or undefined: 1..255 UTF-8 bytes of well-formed Unicode
 * (`/` allowed: `ns::k/v2`) without control characters or a backslash InfluxDB cannot store
 * ({@link identityCharactersProblem}).
 *
 * @example kernelProblem('') // 'must not be empty'
 * @example kernelProblem('k\nzz') // 'must not contain control characters (U+000A at character 2)'
 */
export function kernelProblem(kernel: string): string | undefined {
  return textProblem(kernel);
}

/**
 * What is wrong with a device model name as a frame carries it, or undefined: 0..255 UTF-8
 * bytes of well-formed Unicode without control characters or a backslash InfluxDB cannot store
 * ({@link identityCharactersProblem}); empty when the recorder does not know it.
 *
 * @example deviceNameProblem('NVIDIA H100 80GB HBM3') // undefined
 */
export function deviceNameProblem(name: string): string | undefined {
  return textProblem(name, true);
}

/**
 * What is wrong with a stream name `<job>/<kernel>`, or undefined: split at its first `/`,
 * both parts follow {@link jobProblem} and {@link kernelProblem}.
 *
 * @example streamNameProblem('noslash') // "must be '<job>/<kernel>' (no '/' found)"
 */
export function streamNameProblem(stream: string): string | undefined {
  const slash = stream.indexOf('/');
  if (slash < 0) return "must be '<job>/<kernel>' (no '/' found)";
  const job = jobProblem(stream.slice(0, slash));
  if (job !== undefined) return `must be '<job>/<kernel>': its job ${job}`;
  const kernel = kernelProblem(stream.slice(slash + 1));
  return kernel === undefined ? undefined : `must be '<job>/<kernel>': its kernel ${kernel}`;
}

/**
 * What is wrong with a group size n, or undefined: an integer {@link MIN_GROUP_SIZE}..{@link MAX_GROUP_SIZE}.
 *
 * @example groupSizeProblem(64) // 'must be an integer 1..32'
 */
export function groupSizeProblem(n: number): string | undefined {
  return Number.isInteger(n) && n >= MIN_GROUP_SIZE && n <= MAX_GROUP_SIZE ? undefined : `must be an integer ${MIN_GROUP_SIZE}..${MAX_GROUP_SIZE}`;
}

/**
 * What is wrong with a source, or undefined: one of {@link STREAM_SOURCES}.
 *
 * @example sourceProblem('gpu') // 'must be cuda or cpu'
 */
export function sourceProblem(source: string): string | undefined {
  return (STREAM_SOURCES as readonly string[]).includes(source) ? undefined : `must be ${STREAM_SOURCES.join(' or ')}`;
}

/**
 * What is wrong with a device UUID, or undefined: lowercase 8-4-4-4-12 hex ({@link DEVICE_UUID_PATTERN}).
 *
 * @example deviceUuidProblem('GPU-1234') // 'must be a lowercase UUID xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx'
 */
export function deviceUuidProblem(uuid: string): string | undefined {
  return DEVICE_UUID_PATTERN.test(uuid) ? undefined : 'must be a lowercase UUID xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';
}

/**
 * What is wrong with a host name, or undefined: 1..255 UTF-8 bytes, no whitespace, no control
 * characters, no `|` (the separator of {@link streamKeyOf}) and no backslash InfluxDB cannot
 * store ({@link identityCharactersProblem}).
 *
 * @example hostProblem('node 7') // 'must not contain whitespace, control characters or |'
 */
export function hostProblem(host: string): string | undefined {
  return textProblem(host) ?? (/[\s|]/.test(host) ? 'must not contain whitespace, control characters or |' : undefined);
}

/**
 * What is wrong with a label name, or undefined: {@link LABEL_NAME_PATTERN}.
 *
 * @example labelNameProblem('9pod') // 'must match [A-Za-z_][A-Za-z0-9_.-]{0,63}'
 */
export function labelNameProblem(name: string): string | undefined {
  return LABEL_NAME_PATTERN.test(name) ? undefined : 'must match [A-Za-z_][A-Za-z0-9_.-]{0,63}';
}

/**
 * What is wrong with a label value, or undefined: 0..255 UTF-8 bytes of well-formed Unicode
 * without control characters or a backslash InfluxDB cannot store (it travels as a Kafka
 * header and an InfluxDB tag value; {@link identityCharactersProblem}).
 *
 * @example labelValueProblem('a\nb') // 'must not contain control characters (U+000A at character 2)'
 */
export function labelValueProblem(value: string): string | undefined {
  return textProblem(value, true);
}

/** Throws the one-line error of an argument whose text breaks a rule (control characters in the text shown as `\\uXXXX`, so it stays one line). */
function check<T>(what: string, text: string, problem: string | undefined, value: T): T {
  if (problem !== undefined) throw new StreamIdentityError(`${what} ${problem}, got '${text.replace(CONTROL_CHARACTERS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}'`);
  return value;
}

/**
 * Reads a job name argument.
 *
 * @throws StreamIdentityError (WW_ERR_STREAM_IDENTITY) when it breaks {@link jobProblem}'s rule
 * @example parseJob('--job', 'train-7') // 'train-7'
 */
export function parseJob(what: string, text: string): string {
  return check(what, text, jobProblem(text), text);
}

/**
 * Reads a kernel name argument.
 *
 * @throws StreamIdentityError when it breaks {@link kernelProblem}'s rule
 * @example parseKernel('--kernel', 'matpow') // 'matpow'
 */
export function parseKernel(what: string, text: string): string {
  return check(what, text, kernelProblem(text), text);
}

/**
 * Reads a stream name argument `<job>/<kernel>` (split at the first `/`).
 *
 * @throws StreamIdentityError when it breaks {@link streamNameProblem}'s rule
 * @example parseStreamName('--stream', 'train/ns::k/v2') // { stream: 'train/ns::k/v2', job: 'train', kernel: 'ns::k/v2' }
 */
export function parseStreamName(what: string, text: string): { readonly stream: string; readonly job: string; readonly kernel: string } {
  const slash = text.indexOf('/');
  return check(what, text, streamNameProblem(text), { stream: text, job: text.slice(0, slash), kernel: text.slice(slash + 1) });
}

/**
 * Reads a group-size argument: a plain decimal integer 1..32 (no sign, spaces, exponent or hex).
 *
 * @throws StreamIdentityError when it is not
 * @example parseGroupSize('--n', '32') // 32
 */
export function parseGroupSize(what: string, text: string): number {
  const n = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
  return check(what, text, groupSizeProblem(n), n);
}

/**
 * Reads a source argument (`cuda` or `cpu`).
 *
 * @throws StreamIdentityError when it is neither
 * @example parseSource('--source', 'cpu') // 'cpu'
 */
export function parseSource(what: string, text: string): StreamIdentity['source'] {
  return check(what, text, sourceProblem(text), text as StreamIdentity['source']);
}

/**
 * Reads a device argument that picks a stream by its device: a UUID (any case, with or without
 * the `GPU-` prefix nvidia-smi prints; returned as frames carry it, lowercase without prefix)
 * or else a device model name (the rule of a frame's device name: 1..255 UTF-8 bytes).
 *
 * @throws StreamIdentityError when it is neither
 * @example parseDeviceSelector('--device', 'GPU-5F2C…') // '5f2c…' (the UUID in frame form)
 */
export function parseDeviceSelector(what: string, text: string): string {
  const uuid = /^(?:GPU-)?([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$/.exec(text);
  if (uuid !== null) return (uuid[1] as string).toLowerCase();
  const problem = textProblem(text);
  return check(what, text, problem === undefined ? undefined : `must be a device UUID or model name: it ${problem}`, text);
}

/**
 * Reads a host argument.
 *
 * @throws StreamIdentityError when it breaks {@link hostProblem}'s rule
 * @example parseHost('--host', 'node7') // 'node7'
 */
export function parseHost(what: string, text: string): string {
  return check(what, text, hostProblem(text), text);
}

/**
 * Reads a label argument `name=value` (the value may be empty; spaces around either are trimmed).
 *
 * @throws StreamIdentityError when it has no `=` or its name or value breaks the rules
 * @example parseLabel('--label', 'pod=trainer-0') // ['pod', 'trainer-0']
 */
export function parseLabel(what: string, text: string): readonly [string, string] {
  return check(what, text, labelProblem(text), labelOf(text));
}

/** The name and value of `name=value` (trimmed). */
function labelOf(text: string): readonly [string, string] {
  const eq = text.indexOf('=');
  return eq < 0 ? [text.trim(), ''] : [text.slice(0, eq).trim(), text.slice(eq + 1).trim()];
}

/**
 * What is wrong with a label `name=value`, or undefined.
 *
 * @example labelProblem('pod') // 'must be name=value'
 */
export function labelProblem(text: string): string | undefined {
  if (!text.includes('=')) return 'must be name=value';
  const [name, value] = labelOf(text);
  const nameProblem = labelNameProblem(name);
  if (nameProblem !== undefined) return `must be name=value: its name ${nameProblem}`;
  const valueProblem = labelValueProblem(value);
  return valueProblem === undefined ? undefined : `must be name=value: its value ${valueProblem}`;
}
