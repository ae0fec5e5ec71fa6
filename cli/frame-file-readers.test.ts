// The readers of frame files (analyze, compare, advise --frames, bound --frame) on the two kinds of damage of
// cli/testing/damaged-frame-files.ts: each resynchronises on the next valid frame, says each
// damaged stretch with its exact length on stderr and in --json, exits 1
// (WW_ERR_FRAME_FILE_DAMAGED) unless --accept-damage is given; a cut-off last frame stays a
// warning with exit 0. `collect --replay` is covered against the real broker
// (test/integration/collector-replay-damage.int.test.ts).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eightFrames, withFakeHeader, withLengthCorrupted } from './testing/damaged-frame-files.ts';
import { runCli } from './testing/run-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'ww-frame-file-readers-'));
const frames = eightFrames();
const intact = join(dir, 'intact.wwf');
writeFileSync(intact, Buffer.concat(frames));
const FRAME_2_AT = frames[0]!.length; // the first LaunchSummary
const FRAME_2_BYTES = frames[1]!.length; // its GroupSamples

/** The two damaged files, and what each reader must see in them. */
const cases = [
  {
    name: 'a length field corrupted upwards in frame 2 of 8',
    bytes: withLengthCorrupted(frames, 1),
    framesRead: 7,
    stretch: { offset: FRAME_2_AT, length: FRAME_2_BYTES },
  },
  {
    name: 'a fake 16-byte header claiming 4 MiB in front of an intact file',
    bytes: withFakeHeader(frames),
    framesRead: 8,
    stretch: { offset: 0, length: 16 },
  },
].map((c, i) => {
  const file = join(dir, `damaged-${i}.wwf`);
  writeFileSync(file, c.bytes);
  return { ...c, file };
});

interface InputJson {
  readonly fileBytes: number;
  readonly framesRead: number;
  readonly frameBytes: number;
  readonly damagedBytes: number;
  readonly damagedStretches: readonly { offset: number; length: number; code: string }[];
  readonly truncatedTailBytes: number;
}

/** Checks a reader's "input" object: the stretch, and frames + damage = the file. */
function expectInput(input: InputJson, c: (typeof cases)[number]): void {
  expect(input.framesRead).toBe(c.framesRead);
  expect(input.damagedStretches).toHaveLength(1);
  expect(input.damagedStretches[0]).toMatchObject(c.stretch);
  expect(input.damagedBytes).toBe(c.stretch.length);
  expect(input.truncatedTailBytes).toBe(0);
  expect(input.frameBytes + input.damagedBytes).toBe(c.bytes.length);
  expect(input.fileBytes).toBe(c.bytes.length);
}

function expectStderr(stderr: string, c: (typeof cases)[number], label: string): void {
  expect(stderr).toContain(`warpwatch: ${label}: skipped a damaged stretch of ${c.stretch.length} byte(s) at byte offset ${c.stretch.offset}, up to the next valid frame (WW_ERR_FRAME_TRUNCATED: `);
  expect(stderr).toContain(`warpwatch: WW_ERR_FRAME_FILE_DAMAGED: '${c.file}': 1 damaged stretch(es), ${c.stretch.length} byte(s) skipped;`);
}

describe.each(cases)('$name', (c) => {
  it('analyze reads every intact frame: 4 launches, 4,096 groups; exit 1 with the stretch on stderr and in --json', async () => {
    const result = await runCli('analyze', c.file, '--json');
    expect(result.status, result.stderr).toBe(1);
    expectStderr(result.stderr, c, c.file);
    const parsed = JSON.parse(result.stdout) as { frames: number; input: InputJson; streams: { launches: number; groups: number }[] };
    expect(parsed.frames).toBe(c.framesRead);
    expectInput(parsed.input, c);
    expect(parsed.streams).toMatchObject([{ launches: 4, groups: 4096 }]);
    const accepted = await runCli('analyze', c.file, '--accept-damage');
    expect(accepted.status, accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain(`${c.framesRead} frame(s) (1 damaged stretch(es), ${c.stretch.length} byte(s) skipped), 1 stream(s)`);
    expect(accepted.stdout).toContain('launches 4, groups 4096');
  });

  it('compare reads every intact frame of the damaged run; exit 1 unless --accept-damage', async () => {
    const result = await runCli('compare', intact, c.file, '--json');
    expect(result.status, result.stderr).toBe(1);
    expectStderr(result.stderr, c, c.file);
    const parsed = JSON.parse(result.stdout) as { inputs: { a: InputJson; b: InputJson }; streams: { launchesA: number; launchesB: number }[] };
    expect(parsed.inputs.a).toMatchObject({ framesRead: 8, damagedBytes: 0, damagedStretches: [] });
    expectInput(parsed.inputs.b, c);
    expect(parsed.streams).toMatchObject([{ launchesA: 4, launchesB: 4 }]);
    expect((await runCli('compare', intact, c.file, '--accept-damage')).status).toBe(0);
  });

  it('bound --frame takes rep_cnt from every intact frame; exit 1 unless --accept-damage', async () => {
    const result = await runCli('bound', '--threads', '64', '--frame', c.file, '--json');
    expect(result.status, result.stderr).toBe(1);
    expectStderr(result.stderr, c, `--frame file '${c.file}'`);
    const parsed = JSON.parse(result.stdout) as { input: InputJson; bounds: { stream: string; maxObservedCount: number }[] };
    expectInput(parsed.input, c);
    // Lane counts ((lane·7 + group·13 + launch) mod 97) + 1 reach 97 in every launch's summary.
    expect(parsed.bounds).toMatchObject([{ stream: 'job/k', maxObservedCount: 97 }]);
    expect((await runCli('bound', '--threads', '64', '--frame', c.file, '--accept-damage')).status).toBe(0);
  });

  it('advise --frames reads every intact frame (4 launches); exit 1 unless --accept-damage', async () => {
    const result = await runCli('advise', '--frames', c.file, '--json');
    expect(result.status, result.stderr).toBe(1);
    expectStderr(result.stderr, c, `--frames file '${c.file}'`);
    const parsed = JSON.parse(result.stdout) as { source: string; input: InputJson };
    expect(parsed.source).toContain('(4 launches)');
    expectInput(parsed.input, c);
    expect((await runCli('advise', '--frames', c.file, '--accept-damage')).status).toBe(0);
  });
});

describe('a cut-off last frame', () => {
  it('is a warning with exit 0 in every reader, counted as truncatedTailBytes', async () => {
    const file = join(dir, 'cut.wwf');
    writeFileSync(file, Buffer.concat([...frames.slice(0, 7), frames[7]!.subarray(0, 50)]));
    const warning = `the last 50 byte(s) are a frame cut off (a writer stopped mid-frame); using the 7 whole frame(s) before them\n`;
    const analyzed = await runCli('analyze', file, '--json');
    expect(analyzed.status, analyzed.stderr).toBe(0);
    expect(analyzed.stderr).toBe(`warpwatch: ${file}: ${warning}`);
    expect((JSON.parse(analyzed.stdout) as { input: InputJson }).input).toMatchObject({ framesRead: 7, damagedBytes: 0, truncatedTailBytes: 50 });
    const compared = await runCli('compare', intact, file);
    expect(compared.status, compared.stderr).toBe(0);
    const advised = await runCli('advise', '--frames', file);
    expect(advised.status, advised.stderr).toBe(0);
    expect(advised.stderr).toContain(`warpwatch: --frames file '${file}': ${warning}`);
  });
});

describe('--accept-damage', () => {
  it('is refused where no frame file is read', async () => {
    const result = await runCli('advise', '--dist', 'pois(5)', '--accept-damage');
    expect(result.status).toBe(2);
    expect(result.stderr).toBe('warpwatch: --accept-damage applies to --frames only\n');
    const bound = await runCli('bound', '--threads', '64', '--rep-cnt', '3', '--accept-damage');
    expect(bound.status).toBe(2);
    expect(bound.stderr).toBe('warpwatch: --accept-damage applies to --frame only\n');
  });
});
