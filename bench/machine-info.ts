/**
 * Machine facts recorded with every benchmark result (bench/run.ts, and scripts that write
 * their own result files).
 */
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(fileURLToPath(new URL('.', import.meta.url)), '..');

/**
 * OS, CPU, memory, load, Node version, date, git commit and whether the tree was dirty.
 *
 * @example writeFileSync(file, JSON.stringify({ machine: machineInfo(), cases }))
 */
export function machineInfo(): Record<string, string | number | boolean | null> {
  const cpus = os.cpus();
  let commit: string | null = null;
  let dirty: boolean | null = null;
  try {
    commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    dirty = execFileSync('git', ['status', '--porcelain'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
  } catch {
    // not a git checkout: leave commit null
  }
  return {
    os: `${os.type()} ${os.release()}`,
    platform: process.platform,
    arch: process.arch,
    cpuModel: cpus[0]?.model ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryBytes: os.totalmem(),
    loadAverage1m: Number(os.loadavg()[0]!.toFixed(2)),
    node: process.version,
    date: new Date().toISOString(),
    gitCommit: commit,
    gitDirty: dirty,
  };
}
