// Commander's errors as warpwatch says them: one line under the `warpwatch:` prefix,
// and for an unknown option or command what is allowed there.
import { describe, expect, it } from 'vitest';
import { runCli } from './testing/run-cli.ts';

describe('usage errors', () => {
  it('lists the options a command allows after an unknown one', async () => {
    const result = await runCli('model', '--dist', 'geo(0.5)', '--bogus');
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      "warpwatch: unknown option '--bogus' for 'warpwatch model'; allowed: --dist <spec>, --counts <file>, --pmf <file>, --trace <file>, --n <list>, --method <method>, --quantiles <list>, --epsilon <mass>, --seed <integer>, --json, -h, --help\n",
    );
  });

  it('names nested commands and their own options', async () => {
    const result = await runCli('divergence', 'fit', '--bogus');
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/^warpwatch: unknown option '--bogus' for 'warpwatch divergence fit'; allowed: .*--intercept.*-h, --help\n$/);
  });

  it('lists the commands after an unknown one, and says a missing argument under the prefix', async () => {
    const unknown = await runCli('bogus');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toBe("warpwatch: unknown command 'bogus'; commands: collect, estimate, divergence, bound, transit, demo, advise, model, run, analyze, compare\n");
    const missing = await runCli('analyze');
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe("warpwatch: missing required argument 'file'\n");
  });
});
