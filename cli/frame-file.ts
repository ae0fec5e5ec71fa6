/**
 * Reading a recorded frame file in the CLI's readers (`analyze`, `advise --frames`, `compare`,
 * `bound --frame`, `collect --replay`): one tolerant reader for all (protocol/decode-frames.ts scanFrameFile,
 * the collector's resynchronisation), one way to report damage (a line per damaged stretch on
 * stderr, an object for --json) and one flag to accept it (`--accept-damage`).
 */
import { readFileSync } from 'node:fs';
import { scanFrameFile, type DamagedStretch, type Frame } from '../protocol/index.ts';
import { UsageError } from './usage-error.ts';

/** Error codes of the frame-file readers; docs/errors.md lists each one (a test keeps them in sync). */
export const FRAME_FILE_ERROR_CODES = ['WW_ERR_FRAME_FILE_DAMAGED'] as const;

/** The flag every reader of frame files takes to exit 0 although damaged stretches were skipped. */
export const ACCEPT_DAMAGE_FLAG = '--accept-damage';

/** The --help text of {@link ACCEPT_DAMAGE_FLAG}, the same in every reader. */
export const ACCEPT_DAMAGE_HELP =
  'exit 0 although damaged stretches of a frame file were skipped (they are skipped and reported either way; without this flag the exit code is 1, WW_ERR_FRAME_FILE_DAMAGED); a cut-off last frame is a warning only';

/** A frame file as read by {@link readFrameFile}. Lengths in bytes. */
export interface FrameFileRead {
  readonly file: string;
  /** The frames read, in file order. */
  readonly frames: Frame[];
  readonly fileBytes: number;
  /** Bytes of the frames read. */
  readonly frameBytes: number;
  /** One entry per contiguous damaged stretch skipped. */
  readonly damaged: readonly DamagedStretch[];
  readonly damagedBytes: number;
  /** Bytes of a cut-off last frame (a warning, not damage); 0 when none. */
  readonly truncatedTailBytes: number;
}

/** What a reader's --json says about its input file (see {@link frameFileJson}). */
export interface FrameFileJson {
  readonly file: string;
  readonly fileBytes: number;
  readonly framesRead: number;
  readonly frameBytes: number;
  readonly damagedBytes: number;
  readonly damagedStretches: readonly { readonly offset: number; readonly length: number; readonly code: string; readonly message: string }[];
  readonly truncatedTailBytes: number;
}

/**
 * Thrown after a reader's output when damaged stretches were skipped and --accept-damage was
 * not given: exit code 1 with one line naming the files, stretches and bytes.
 */
export class FrameFileDamagedError extends Error {
  readonly code = 'WW_ERR_FRAME_FILE_DAMAGED';
  constructor(message: string) {
    super(message);
    this.name = 'FrameFileDamagedError';
  }
}

/**
 * Reads a frame file with resynchronisation: damaged stretches are skipped up to the next valid
 * frame and each is said on stderr (one line: offset, exact length, first problem); a cut-off
 * last frame is one warning line. Call {@link failOnFrameFileDamage} after the output.
 *
 * @param file - path of the frame file
 * @param label - how the lines name it (default the path; e.g. `--frames file 'x.wwf'`)
 * @returns the frames and the damage accounting (frameBytes + damagedBytes + truncatedTailBytes = fileBytes)
 * @throws UsageError (exit 2) when the file cannot be read, or holds damaged bytes and not one valid frame (not a frame file)
 * @example const read = readFrameFile('matpow.wwf'); analyze(read.frames); failOnFrameFileDamage([read], acceptDamage);
 */
export function readFrameFile(file: string, label = file): FrameFileRead {
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(file));
  } catch (error) {
    throw new UsageError(`cannot read frame file '${file}': ${(error as Error).message}`);
  }
  const scan = scanFrameFile(bytes);
  const first = scan.damaged[0];
  if (scan.frames.length === 0 && first !== undefined) {
    throw new UsageError(`'${file}' is not a valid frame file: no valid frame in its ${bytes.length} byte(s) (first problem at byte ${first.offset}: ${first.code}: ${first.message})`);
  }
  for (const stretch of scan.damaged) {
    process.stderr.write(
      `warpwatch: ${label}: skipped a damaged stretch of ${stretch.length} byte(s) at byte offset ${stretch.offset}, up to the next valid frame (${stretch.code}: ${stretch.message})\n`,
    );
  }
  if (scan.truncatedTailBytes > 0) {
    process.stderr.write(
      `warpwatch: ${label}: the last ${scan.truncatedTailBytes} byte(s) are a frame cut off (a writer stopped mid-frame); using the ${scan.frames.length} whole frame(s) before them\n`,
    );
  }
  return {
    file,
    frames: scan.frames,
    fileBytes: bytes.length,
    frameBytes: scan.frameBytes,
    damaged: scan.damaged,
    damagedBytes: scan.damagedBytes,
    truncatedTailBytes: scan.truncatedTailBytes,
  };
}

/**
 * The damage accounting of a read file for a reader's --json output.
 *
 * @example JSON.stringify({ input: frameFileJson(read), streams })
 */
export function frameFileJson(read: FrameFileRead): FrameFileJson {
  return {
    file: read.file,
    fileBytes: read.fileBytes,
    framesRead: read.frames.length,
    frameBytes: read.frameBytes,
    damagedBytes: read.damagedBytes,
    damagedStretches: read.damaged.map(({ offset, length, code, message }) => ({ offset, length, code, message })),
    truncatedTailBytes: read.truncatedTailBytes,
  };
}

/**
 * Ends a reader's run: when any file had damaged stretches skipped and `acceptDamage` is false,
 * throws so that the CLI exits 1 (after the output, which covers the frames read).
 *
 * @throws FrameFileDamagedError (WW_ERR_FRAME_FILE_DAMAGED) naming each damaged file, its stretches and bytes
 * @example failOnFrameFileDamage([readA, readB], flags.acceptDamage === true);
 */
export function failOnFrameFileDamage(reads: readonly Pick<FrameFileRead, 'file' | 'damaged' | 'damagedBytes'>[], acceptDamage: boolean): void {
  const damaged = reads.filter((r) => r.damaged.length > 0);
  if (damaged.length === 0 || acceptDamage) return;
  const parts = damaged.map((r) => `'${r.file}': ${r.damaged.length} damaged stretch(es), ${r.damagedBytes} byte(s) skipped`);
  throw new FrameFileDamagedError(`${parts.join('; ')}; the frames around them were read; pass ${ACCEPT_DAMAGE_FLAG} to accept the damage and exit 0`);
}
