// Flags that do not apply are errors everywhere: every combination each command's
// rule table names, through the real CLI: exit 2 and one line naming the flag, where it
// applies and what the input is instead. Each case fails before any file is read or server asked.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from './testing/run-cli.ts';

const directory = mkdtempSync(join(tmpdir(), 'ww-flag-rules-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const out = join(directory, 'never-written.wwf');
const frames = join(process.cwd(), 'protocol', 'vectors', 'cpp-stream.bin');
const spool = ['--spool-dir', join(directory, 'spool'), '--metrics-port', 'off'];
const noServers = ['--influx-url', 'off', '--metrics-port', 'off'];

const CASES: readonly (readonly [string, readonly string[], string])[] = [
  ['run --dist on escape', ['run', 'escape', '--dist', 'pois(3)', '--out', out], '--dist applies to the matpow workload only (escape takes its iteration counts from the workload itself)'],
  ['run --seed on escape', ['run', 'escape', '--seed', '3', '--out', out], '--seed applies to the matpow, relax and banded workloads only (escape draws nothing at random)'],
  ['run --launches on divergence', ['run', 'divergence', '--launches', '2', '--out', out], '--launches applies to the matpow, escape, relax and banded workloads only (divergence repeats each pattern --repetitions times)'],
  ['run --sorted on matpow', ['run', 'matpow', '--sorted', '--out', out], '--sorted applies to the escape and banded workloads only (the workload is matpow)'],
  ['run --max-iter on matpow', ['run', 'matpow', '--max-iter', '9', '--out', out], '--max-iter applies to the escape and relax workloads only (the workload is matpow)'],
  ['run --width on divergence', ['run', 'divergence', '--width', '9', '--out', out], '--width applies to the escape and relax workloads only (the workload is divergence)'],
  ['run --height on matpow', ['run', 'matpow', '--height', '9', '--out', out], '--height applies to the escape and relax workloads only (the workload is matpow)'],
  ['run --sorted on relax', ['run', 'relax', '--sorted', '--out', out], '--sorted applies to the escape and banded workloads only (the workload is relax)'],
  ['run --width on banded', ['run', 'banded', '--width', '9', '--out', out], '--width applies to the escape and relax workloads only (the workload is banded)'],
  ['run --repetitions on escape', ['run', 'escape', '--repetitions', '9', '--out', out], '--repetitions applies to the divergence workload only (the workload is escape)'],
  ['run --csv on matpow', ['run', 'matpow', '--csv', join(directory, 'x.csv'), '--out', out], '--csv applies to the divergence workload only (the workload is matpow)'],
  ['run --clock on cuda', ['run', 'matpow', '--backend', 'cuda', '--clock', 'thread', '--out', out], '--clock applies to --backend cpu only (the backend is cuda: the GPU clock is fixed)'],
  ['run --probe on cpu', ['run', 'matpow', '--probe', 'off', '--out', out], '--probe applies to the matpow workload on --backend cuda only (matpow on cpu)'],
  ['run --block-groups without block selection', ['run', 'matpow', '--block-groups', '4', '--out', out], '--block-groups applies to --selection block only (the selection is hash)'],
  ['run --selection with --sample-rate 0', ['run', 'matpow', '--sample-rate', '0', '--selection', 'stride', '--out', out], '--selection applies to a --sample-rate above 0 only (--sample-rate 0 samples no group)'],
  ['demo --quick with --sizes and --launches', ['demo', '--quick', '--sizes', '8', '--launches', '1'], '--quick applies to group sizes or launches not given by --sizes and --launches only (both are given: --quick would change nothing)'],
  [
    'run: every misplaced flag in one line',
    ['run', 'matpow', '--width', '9', '--csv', 'x.csv', '--out', out],
    '--width applies to the escape and relax workloads only (the workload is matpow); --csv applies to the divergence workload only (the workload is matpow)',
  ],
  ['advise --groups without --workload', ['advise', '--dist', 'pois(3)', '--groups', '8'], '--groups applies to --workload only'],
  ['advise --seed without --workload', ['advise', '--dist', 'pois(3)', '--seed', '8'], '--seed applies to --workload only'],
  ['advise --sorted with matpow', ['advise', '--workload', 'matpow', '--sorted'], '--sorted applies to --workload escape only'],
  ['advise --basis with --frames', ['advise', '--frames', frames, '--stream', 'a/b', '--basis', 'window'], '--basis applies to --stream read from Kafka only'],
  ['advise --device with --counts', ['advise', '--counts', 'x.csv', '--device', 'gpu'], '--device applies to --stream read from Kafka only'],
  ['advise --host with --dist', ['advise', '--dist', 'pois(3)', '--host', 'node7'], '--host applies to --stream read from Kafka only'],
  ['model --epsilon with --counts', ['model', '--counts', 'x.csv', '--epsilon', '1e-3'], '--epsilon applies to the unbounded --dist families geo, pois and nbinom only (the input is --counts: nothing is cut)'],
  ['model --epsilon on a bounded family', ['model', '--dist', 'unif(0,5)', '--epsilon', '1e-3'], '--epsilon applies to the unbounded --dist families geo, pois and nbinom only (unif has a finite support: nothing is cut)'],
  ['model --seed without --quantiles', ['model', '--dist', 'geo(0.5)', '--seed', '5'], '--seed applies to --quantiles only (the seed of Monte Carlo quantiles)'],
  ['estimate --half-life-launches in last-n', ['estimate', ...noServers, '--current', 'last-n', '--half-life-launches', '4'], '--half-life-launches applies to --current decay only (the current mode is last-n)'],
  ['estimate --last-launches in decay', ['estimate', ...noServers, '--last-launches', '5'], '--last-launches applies to --current last-n only (the current mode is decay)'],
  ['estimate --influx-database without InfluxDB', ['estimate', ...noServers, '--influx-database', 'x'], '--influx-database applies to an InfluxDB in use only (the InfluxDB URL is off)'],
  ['collect --socket-mode without a socket', ['collect', ...spool, '--replay', frames, '--socket-mode', '0600'], '--socket-mode applies to a served socket only (the sources are --stdin/--replay without --socket)'],
  ['collect --influx-database without --influx-url', ['collect', ...spool, '--replay', frames, '--influx-url', 'off', '--influx-database', 'x'], '--influx-database applies to --influx-url only (no InfluxDB is written)'],
  ['collect --pipeline-interval-millis without --influx-url', ['collect', ...spool, '--replay', frames, '--influx-url', 'off', '--pipeline-interval-millis', '5000'], '--pipeline-interval-millis applies to --influx-url only (no InfluxDB is written)'],
  ['collect --instance without --influx-url', ['collect', ...spool, '--replay', frames, '--influx-url', 'off', '--instance', 'x'], '--instance applies to --influx-url only (no InfluxDB is written)'],
  ['analyze --divergence-arch under --delta and --spill', ['analyze', frames, '--divergence-arch', 'kepler', '--delta', '1', '--spill', '2'], '--divergence-arch applies to costs not given by both --delta and --spill only (both are given: the preset would set nothing)'],
  ['divergence fit --residuals with --json', ['divergence', 'fit', 'x.csv', '--residuals', '--json'], '--residuals applies to the text output only (--json always lists every residual)'],
  ['divergence predict --inner-bounds without nested', ['divergence', 'predict', '--k', '3', '--inner-bounds', '1,2'], '--inner-bounds applies to --loop nested only (the loop is single)'],
  ['divergence predict --arch under --delta and --spill', ['divergence', 'predict', '--k', '3', '--arch', 'kepler', '--delta', '1', '--spill', '2'], '--arch applies to costs not given by both --delta and --spill only (both are given: the preset would set nothing)'],
];

describe('flags that do not apply', () => {
  it.each(CASES)('%s', async (_name, args, message) => {
    const result = await runCli(...args);
    expect(result.stderr).toBe(`warpwatch: ${message}\n`);
    expect(result.status).toBe(2);
  });

  it('the same flags are accepted where they apply', async () => {
    const accepted: (readonly string[])[] = [
      ['model', '--dist', 'geo(0.5)', '--epsilon', '1e-3', '--n', '4'],
      ['model', '--dist', 'geo(0.5)', '--quantiles', '0.5', '--seed', '5', '--n', '4'],
      ['divergence', 'predict', '--k', '3', '--loop', 'nested', '--inner-bounds', '1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1'],
      ['divergence', 'predict', '--k', '3', '--arch', 'kepler', '--delta', '1'],
      ['analyze', frames, '--divergence-arch', 'kepler', '--delta', '1'],
    ];
    for (const args of accepted) {
      const result = await runCli(...args);
      expect(result.status, `${args.join(' ')}: ${result.stderr}`).toBe(0);
    }
  });
});
