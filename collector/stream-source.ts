import type { Readable } from 'node:stream';
import type { FrameIntake, FrameStream } from './frame-intake.ts';

/**
 * Reads a byte stream (stdin, a recorded frame file) to its end into a frame stream, and
 * resolves once every byte has been validated and submitted.
 * `waitForCapacity`, when given, is awaited between chunks: file replay waits for the
 * pipeline instead of filling the spool, while stdin (a live job's pipe) passes none and
 * is read as fast as it arrives, pausing only while the validation worker (when enabled) is
 * over its backlog bound (`intake`).
 *
 * @returns the number of bytes read.
 * @throws the stream's own error (e.g. ENOENT for a missing file).
 * @example await readFrameStream(createReadStream('run.wwf'), intake.openStream('file', Infinity), () => pipeline.flush(1000));
 */
export async function readFrameStream(
  readable: Readable,
  stream: FrameStream,
  waitForCapacity?: () => Promise<void>,
  intake?: Pick<FrameIntake, 'overloaded' | 'relieved'>,
): Promise<number> {
  let bytes = 0;
  for await (const chunk of readable as AsyncIterable<Buffer | string>) {
    const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    bytes += data.length;
    stream.push(data);
    // The validation worker is behind: stop reading until it catches up (nothing is dropped).
    if (intake?.overloaded === true) await intake.relieved();
    if (waitForCapacity !== undefined) await waitForCapacity();
  }
  await stream.end();
  return bytes;
}
