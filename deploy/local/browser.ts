import { existsSync } from 'node:fs';
import { DeployError } from '../errors.ts';

/** A Chromium to drive with playwright-core: where it is, the flags to start it with, and where it came from. */
export interface ChromiumExecutable {
  /** Absolute path of the browser binary. */
  readonly executablePath: string;
  /** Command-line flags for a headless run in a sandbox-less test environment. */
  readonly args: readonly string[];
  /** `env` = WARPWATCH_CHROMIUM, `system` = a distribution package, `npm` = the @sparticuz/chromium devDependency. */
  readonly source: 'env' | 'system' | 'npm';
}

/** Distribution packages' Chromium locations, tried in order. */
const SYSTEM_CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];
const HEADLESS_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * Finds a Chromium for the browser tests without anything installed by hand: the binary named
 * by `WARPWATCH_CHROMIUM`, else a distribution package (Debian's `chromium`, which .ci/run
 * installs), else the one shipped inside the `@sparticuz/chromium` npm devDependency (a
 * self-contained Linux x64 build, unpacked to the temp directory on first use, ~3 s).
 *
 * @param env environment (default process.env).
 * @throws DeployError WW_ERR_STACK_TOOL_MISSING when WARPWATCH_CHROMIUM names a missing file, or no
 *   Chromium can be found (not Linux x64 and none installed).
 * @example const { executablePath, args } = await findChromium(); await chromium.launch({ executablePath, args: [...args] });
 */
export async function findChromium(env: Readonly<Record<string, string | undefined>> = process.env): Promise<ChromiumExecutable> {
  const explicit = env['WARPWATCH_CHROMIUM'];
  if (explicit !== undefined && explicit !== '') {
    if (!existsSync(explicit)) throw new DeployError('WW_ERR_STACK_TOOL_MISSING', `WARPWATCH_CHROMIUM=${explicit} does not exist; point it at a Chromium binary or unset it`);
    return { executablePath: explicit, args: HEADLESS_ARGS, source: 'env' };
  }
  const system = SYSTEM_CHROMIUM.find((path) => existsSync(path));
  if (system !== undefined) return { executablePath: system, args: HEADLESS_ARGS, source: 'system' };
  try {
    const { default: packaged } = await import('@sparticuz/chromium');
    const executablePath = await packaged.executablePath();
    return { executablePath, args: [...new Set([...packaged.args, ...HEADLESS_ARGS])], source: 'npm' };
  } catch (error) {
    throw new DeployError(
      'WW_ERR_STACK_TOOL_MISSING',
      `no Chromium found: WARPWATCH_CHROMIUM is unset, none of ${SYSTEM_CHROMIUM.join(', ')} exists, and the @sparticuz/chromium devDependency could not be unpacked (${(error as Error).message}); install Debian's chromium or set WARPWATCH_CHROMIUM`,
      { cause: error },
    );
  }
}
