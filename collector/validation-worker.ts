/**
 * Body of the validation worker thread (started by frame-intake.ts through
 * validation-worker-entry.mjs): runs {@link createStreamValidator} per stream off the event
 * loop, so splitting and decoding frames does not compete with socket reads and the Kafka
 * client. Messages are handled strictly in arrival order, so per-stream order is kept.
 *
 * In:  { op: 'push', id, chunk } | { op: 'end', id }
 * Out: { id, consumedBytes, ended, kinds ('f' frame / 'r' reject, in stream order),
 *        frames: Uint8Array (all valid frames concatenated), lengths, keys, threadRecords,
 *        rejects: { bytes (a sample, ≤ 64 KiB for a stretch), discardedLength (exact), code, message }[] }
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createStreamValidator, type StreamValidator, type ValidatedItem } from './stream-validator.ts';

/** A request to the worker. */
export type ValidationRequest = { readonly op: 'push'; readonly id: number; readonly chunk: Uint8Array } | { readonly op: 'end'; readonly id: number };

/** The worker's answer to one request. */
export interface ValidationResponse {
  readonly id: number;
  /** Bytes of the request's chunk (0 for 'end'), so the sender can track its backlog. */
  readonly consumedBytes: number;
  /** True for the answer to 'end'. */
  readonly ended: boolean;
  /** One letter per item in stream order: 'f' = next frame, 'r' = next reject. */
  readonly kinds: string;
  /** Valid frames, concatenated; lengths[i] bytes each, in order. */
  readonly frames: Uint8Array;
  readonly lengths: readonly number[];
  readonly keys: readonly string[];
  readonly threadRecords: readonly number[];
  /** Rejects in order: `bytes` is the sample the validator kept, `discardedLength` the exact length rejected. */
  readonly rejects: readonly { readonly bytes: Uint8Array; readonly discardedLength: number; readonly code: string; readonly message: string }[];
}

/**
 * Packs validated items into one response whose frames share a single transferable buffer.
 *
 * @example const response = packValidatedItems(1, chunk.length, false, validator.push(chunk));
 */
export function packValidatedItems(id: number, consumedBytes: number, ended: boolean, items: readonly ValidatedItem[]): ValidationResponse {
  let total = 0;
  for (const item of items) if (item.kind === 'frame') total += item.raw.length;
  const frames = new Uint8Array(total);
  const lengths: number[] = [];
  const keys: string[] = [];
  const threadRecords: number[] = [];
  const rejects: { bytes: Uint8Array; discardedLength: number; code: string; message: string }[] = [];
  let at = 0;
  let kinds = '';
  for (const item of items) {
    kinds += item.kind === 'frame' ? 'f' : 'r';
    if (item.kind === 'frame') {
      frames.set(item.raw, at);
      at += item.raw.length;
      lengths.push(item.raw.length);
      keys.push(item.key);
      threadRecords.push(item.threadRecords);
    } else {
      rejects.push({ bytes: item.bytes, discardedLength: item.discardedLength, code: item.code, message: item.message });
    }
  }
  return { id, consumedBytes, ended, kinds, frames, lengths, keys, threadRecords, rejects };
}

if (parentPort !== null) {
  const port = parentPort;
  const validators = new Map<number, StreamValidator>();
  port.on('message', (request: ValidationRequest) => {
    let validator = validators.get(request.id);
    if (validator === undefined) {
      validator = createStreamValidator({ host: String((workerData as { host?: unknown } | null)?.host ?? '') });
      validators.set(request.id, validator);
    }
    if (request.op === 'push') {
      const response = packValidatedItems(request.id, request.chunk.byteLength, false, validator.push(request.chunk));
      port.postMessage(response, [response.frames.buffer as ArrayBuffer]);
    } else {
      validators.delete(request.id);
      const response = packValidatedItems(request.id, 0, true, validator.end());
      port.postMessage(response, [response.frames.buffer as ArrayBuffer]);
    }
  });
}
