import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { solveTransit, type TransitOperatingPoint } from '../../model/index.ts';
import { renderTransitSvg } from '../report/transit-svg.ts';
import { UsageError } from '../usage-error.ts';
import { formatQuantity, parseNumberOption } from './numeric-options.ts';

interface TransitFlags {
  lanes: string;
  peak: string;
  latency: string;
  intensity: string;
  threads: string;
  transition?: string;
  loss?: string;
  svg?: string;
  json?: boolean;
}

function describePoint(label: string, p: TransitOperatingPoint): string[] {
  return [
    `  ${label}: ${p.boundClass}-bound`,
    `    k = ${formatQuantity(p.outstandingRequests)} outstanding requests, x = ${formatQuantity(p.computingThreads)} computing threads (${formatQuantity(p.occupiedLanes)} lanes occupied)`,
    `    MS throughput ${formatQuantity(p.memoryThroughputRequestsPerCycle)} requests/cycle (${formatQuantity(100 * p.memoryUtilisation)}% of peak)`,
    `    CS throughput ${formatQuantity(p.computeThroughputLanes)} useful lanes (${formatQuantity(100 * p.laneUtilisation)}% of lanes)`,
  ];
}

function runTransit(flags: TransitFlags): void {
  const positive = { min: 0, exclusiveMin: true };
  const parameters = {
    lanes: parseNumberOption('--lanes', flags.lanes, positive),
    peakRequestsPerCycle: parseNumberOption('--peak', flags.peak, positive),
    latencyCycles: parseNumberOption('--latency', flags.latency, positive),
    intensityCyclesPerRequest: parseNumberOption('--intensity', flags.intensity, positive),
    threads: parseNumberOption('--threads', flags.threads, positive),
    ...(flags.transition === undefined ? {} : { transitionRequests: parseNumberOption('--transition', flags.transition, positive) }),
    ...(flags.loss === undefined ? {} : { loss: parseNumberOption('--loss', flags.loss, { min: 1 }) }),
  };
  const solution = solveTransit(parameters);
  if (flags.svg !== undefined) {
    try {
      writeFileSync(flags.svg, renderTransitSvg(solution));
    } catch (error) {
      throw new UsageError(`cannot write SVG '${flags.svg}': ${(error as Error).message}`);
    }
  }
  if (flags.json === true) {
    process.stdout.write(`${JSON.stringify({ ...solution, svg: flags.svg }, null, 2)}\n`);
    return;
  }
  const p = solution.parameters;
  const lines = [
    `transit model: M=${formatQuantity(p.lanes)} lanes, R=${formatQuantity(p.peakRequestsPerCycle)} req/cycle, L=${formatQuantity(p.latencyCycles)} cycles, Z=${formatQuantity(p.intensityCyclesPerRequest)} cycles/request, n=${formatQuantity(p.threads)}, δ=${formatQuantity(p.transitionRequests)}`,
    ...describePoint('balanced (H = 1)', solution.balanced),
  ];
  if (p.loss > 1) lines.push(...describePoint(`with predicted loss H = ${formatQuantity(p.loss)} (useful lanes = occupied / H)`, solution.shifted));
  if (flags.svg !== undefined) lines.push(`  figure written to ${flags.svg}`);
  process.stdout.write(lines.join('\n') + '\n');
}

/**
 * Registers `warpwatch transit` (docs/model.md §6).
 *
 * @example registerTransitCommand(program)
 */
export function registerTransitCommand(program: Command): void {
  program
    .command('transit')
    .description('Transit model: steady state of compute and memory flow, bound class (thread|memory|compute|capacity), optional SVG figure (docs/model.md §6).')
    .requiredOption('--lanes <M>', 'compute lanes')
    .requiredOption('--peak <R>', 'peak memory throughput, requests per cycle')
    .requiredOption('--latency <L>', 'memory latency, cycles')
    .requiredOption('--intensity <Z>', 'compute cycles per memory request')
    .requiredOption('--threads <n>', 'resident threads')
    .option('--transition <δ>', 'outstanding requests where memory supply reaches R (default R·L)')
    .option('--loss <H>', 'predicted imbalance loss H ≥ 1: shows the shifted operating point')
    .option('--svg <file>', 'write the transit figure as SVG')
    .option('--json', 'print JSON')
    .action((flags: TransitFlags) => runTransit(flags));
}
