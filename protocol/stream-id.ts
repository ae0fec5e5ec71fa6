/**
 * Stream identity of a frame: `<job>/<kernel>`, the Kafka key and the `stream` tag.
 */
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
 * @throws RangeError when the id has no '/' or an empty job or kernel
 * @example parseStreamId('job/ns::kernel') // { job: 'job', kernel: 'ns::kernel' }
 */
export function parseStreamId(streamId: string): { job: string; kernel: string } {
  const slash = streamId.indexOf('/');
  if (slash <= 0 || slash === streamId.length - 1) {
    throw new RangeError(`stream id must be '<job>/<kernel>' with both parts non-empty, got '${streamId}'`);
  }
  return { job: streamId.slice(0, slash), kernel: streamId.slice(slash + 1) };
}
