/**
 * The transit figure (docs/model.md §6) as a self-contained SVG string: memory supply f(k),
 * compute demand g(n − k) (and g_H with the predicted loss), the operating points and the
 * bound class. Presentation of model/ transit-model.ts: returns text, writes nothing.
 */
import { computeDemand, memorySupply, solveTransit, type TransitParameters, type TransitSolution } from '../../model/index.ts';

/** Size of the figure in SVG user units (pixels). */
export interface TransitSvgOptions {
  readonly widthPixels?: number;
  readonly heightPixels?: number;
  /** Title line; default describes the parameters. */
  readonly title?: string;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

function formatNumber(value: number): string {
  if (value === 0) return '0';
  const magnitude = Math.abs(value);
  if (magnitude >= 1e4 || magnitude < 1e-3) return value.toExponential(2);
  return Number(value.toPrecision(4)).toString();
}

/**
 * Renders the transit figure. x axis: k, outstanding memory requests (0..n); y axis: requests
 * per cycle. Curves are drawn through their exact break points (both are piecewise linear).
 * Elements carry ids: `memory-supply`, `compute-demand`, `compute-demand-loss` (H > 1 only),
 * `operating-point`, `shifted-operating-point` (H > 1 only), `bound-class`.
 *
 * @throws RangeError for invalid parameters (see normaliseTransitParameters) or sizes < 200 px
 * @example renderTransitSvg({ lanes: 32, peakRequestsPerCycle: 1, latencyCycles: 400, intensityCyclesPerRequest: 20, threads: 1024, loss: 1.5 }).startsWith('<svg') // → true
 */
export function renderTransitSvg(parameters: TransitParameters | TransitSolution, options: TransitSvgOptions = {}): string {
  const solution = 'balanced' in parameters ? parameters : solveTransit(parameters);
  const p = solution.parameters;
  const width = options.widthPixels ?? 720;
  const height = options.heightPixels ?? 440;
  if (!(width >= 200 && height >= 200)) throw new RangeError(`figure size must be ≥ 200×200 px, got ${String(width)}×${String(height)}`);
  const left = 70;
  const right = 190;
  const top = 40;
  const bottom = 50;
  const plotWidth = width - left - right;
  const plotHeight = height - top - bottom;
  const n = p.threads;
  const yMax = 1.1 * Math.max(p.peakRequestsPerCycle, computeDemand(n, p, 1), 1e-12);
  const sx = (k: number): number => left + (k / n) * plotWidth;
  const sy = (y: number): number => top + plotHeight - (y / yMax) * plotHeight;
  const point = (k: number, y: number): string => `${sx(k).toFixed(2)},${sy(y).toFixed(2)}`;
  const unique = (values: number[]): number[] => [...new Set(values.filter((v) => v >= 0 && v <= n))].sort((a, b) => a - b);

  const supplyKs = unique([0, Math.min(p.transitionRequests, n), n]);
  const demandKs = unique([0, Math.max(0, n - p.lanes), n]);
  const supply = supplyKs.map((k) => point(k, memorySupply(k, p))).join(' ');
  const demand = (loss: number): string => demandKs.map((k) => point(k, computeDemand(n - k, p, loss))).join(' ');
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`);
  const title =
    options.title ??
    `transit model: M=${formatNumber(p.lanes)}, R=${formatNumber(p.peakRequestsPerCycle)}, L=${formatNumber(p.latencyCycles)}, Z=${formatNumber(p.intensityCyclesPerRequest)}, n=${formatNumber(n)}, δ=${formatNumber(p.transitionRequests)}`;
  parts.push(`<title>${escapeXml(title)}</title>`);
  parts.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="white"/>`);
  parts.push(`<text x="${left}" y="20" font-size="13">${escapeXml(title)}</text>`);
  // Axes and ticks.
  parts.push(`<g id="axes" stroke="black" fill="none"><line x1="${left}" y1="${top + plotHeight}" x2="${left + plotWidth}" y2="${top + plotHeight}"/><line x1="${left}" y1="${top}" x2="${left}" y2="${top + plotHeight}"/></g>`);
  const ticks: string[] = [];
  for (let i = 0; i <= 4; i += 1) {
    const k = (n * i) / 4;
    const y = (yMax * i) / 4;
    ticks.push(`<text x="${sx(k).toFixed(2)}" y="${(top + plotHeight + 16).toFixed(2)}" text-anchor="middle">${formatNumber(k)}</text>`);
    ticks.push(`<text x="${left - 6}" y="${(sy(y) + 4).toFixed(2)}" text-anchor="end">${formatNumber(y)}</text>`);
  }
  parts.push(`<g id="ticks" fill="black">${ticks.join('')}</g>`);
  parts.push(`<text x="${left + plotWidth / 2}" y="${height - 10}" text-anchor="middle">k: outstanding memory requests (x = n − k computing)</text>`);
  parts.push(`<text x="16" y="${top + plotHeight / 2}" text-anchor="middle" transform="rotate(-90 16 ${top + plotHeight / 2})">requests per cycle</text>`);
  // Curves.
  parts.push(`<polyline id="memory-supply" fill="none" stroke="#1f77b4" stroke-width="2" points="${supply}"/>`);
  parts.push(`<polyline id="compute-demand" fill="none" stroke="#d62728" stroke-width="2" points="${demand(1)}"/>`);
  const shifted = p.loss > 1;
  if (shifted) parts.push(`<polyline id="compute-demand-loss" fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4" points="${demand(p.loss)}"/>`);
  const b = solution.balanced;
  parts.push(
    `<circle id="operating-point" cx="${sx(b.outstandingRequests).toFixed(2)}" cy="${sy(b.memoryThroughputRequestsPerCycle).toFixed(2)}" r="5" fill="black"/>`,
  );
  if (shifted) {
    const s = solution.shifted;
    parts.push(
      `<circle id="shifted-operating-point" cx="${sx(s.outstandingRequests).toFixed(2)}" cy="${sy(s.memoryThroughputRequestsPerCycle).toFixed(2)}" r="5" fill="white" stroke="black" stroke-width="2"/>`,
    );
  }
  // Legend and class label.
  const lx = left + plotWidth + 14;
  const legend: string[] = [
    `<line x1="${lx}" y1="${top + 8}" x2="${lx + 24}" y2="${top + 8}" stroke="#1f77b4" stroke-width="2"/><text x="${lx + 30}" y="${top + 12}">f(k) memory supply</text>`,
    `<line x1="${lx}" y1="${top + 28}" x2="${lx + 24}" y2="${top + 28}" stroke="#d62728" stroke-width="2"/><text x="${lx + 30}" y="${top + 32}">g(n − k) compute demand</text>`,
  ];
  if (shifted) {
    legend.push(
      `<line x1="${lx}" y1="${top + 48}" x2="${lx + 24}" y2="${top + 48}" stroke="#d62728" stroke-width="2" stroke-dasharray="6 4"/><text x="${lx + 30}" y="${top + 52}">${escapeXml(`g with loss H=${formatNumber(p.loss)}`)}</text>`,
    );
  }
  parts.push(`<g id="legend">${legend.join('')}</g>`);
  const lines = [
    `${b.boundClass}-bound`,
    `MS ${formatNumber(b.memoryThroughputRequestsPerCycle)} req/cycle`,
    `CS ${formatNumber(b.computeThroughputLanes)} lanes`,
  ];
  if (shifted) {
    const s = solution.shifted;
    lines.push(`with H=${formatNumber(p.loss)}: ${s.boundClass}-bound`, `MS ${formatNumber(s.memoryThroughputRequestsPerCycle)} req/cycle`, `CS ${formatNumber(s.computeThroughputLanes)} lanes`);
  }
  parts.push(
    `<text id="bound-class" x="${lx}" y="${top + 90}" font-weight="bold">${lines.map((line, i) => `<tspan x="${lx}" dy="${i === 0 ? 0 : 16}">${escapeXml(line)}</tspan>`).join('')}</text>`,
  );
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
