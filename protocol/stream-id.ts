/**
 * Stream identity of a frame: `<job>/<kernel>`, the Kafka key and the `stream` tag.
 */
import { parseStreamName } from '../contracts/index.ts';
import type { FrameIdentity } from './types.ts';

/**
 * The stream id of a frame. A job never contains '/', so the id splits unambiguously at its
 * first '/' (see parseStreamId).
 *
 * @example streamIdOf(frame) === 'training-run-7/matpow'
 */
export function streamIdOf(frame: Pick<FrameIdentity, 'job' | 'kernel'>): string {
  return `${frame.job}/${frame.kernel}`;
}

/**
 * Splits a stream id into job and kernel.
 *
 * @throws StreamIdentityError (a RangeError, WW_ERR_STREAM_IDENTITY) when the id breaks the
 *   stream-name rule of contracts/stream-identity.ts (no '/', an empty or too long part)
 * @example parseStreamId('job/ns::kernel') // { job: 'job', kernel: 'ns::kernel' }
 */
export function parseStreamId(streamId: string): { job: string; kernel: string } {
  const { job, kernel } = parseStreamName('stream id', streamId);
  return { job, kernel };
}
