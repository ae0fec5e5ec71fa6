import { scaleLinear, scaleLog, scaleBand } from 'd3-scale';
import { line } from 'd3-shape';

/** One named series of (x, y) points for {@link renderLineChart}. */
export interface ChartSeries {
  readonly name: string;
  readonly points: readonly (readonly [number, number])[];
  /** Draw dashed (e.g. a prediction next to a measurement). */
  readonly dashed?: boolean;
  /** Draw markers only, no connecting line. */
  readonly markersOnly?: boolean;
}

/** Options of {@link renderLineChart}. Sizes in CSS pixels. */
export interface LineChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly series: readonly ChartSeries[];
  /** 'log2' for group sizes 1..32. Default 'linear'. */
  readonly xScale?: 'linear' | 'log2';
  readonly widthPixels?: number;
  readonly heightPixels?: number;
  /** Lowest y the axis may show (1 for a loss, which is never below 1). Default: none. */
  readonly yFloor?: number;
}

/** One bar group of {@link renderBarChart}: a category label and one value per series. */
export interface BarGroup {
  readonly label: string;
  readonly values: readonly number[];
}

/** Options of {@link renderBarChart}. */
export interface BarChartOptions {
  readonly title: string;
  readonly xLabel: string;
  readonly yLabel: string;
  readonly seriesNames: readonly string[];
  readonly groups: readonly BarGroup[];
  readonly widthPixels?: number;
  readonly heightPixels?: number;
  /** Show at most this many category labels on the x axis (others are skipped). Default 20. */
  readonly maxXLabels?: number;
}

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
const MARGIN = { top: 34, right: 150, bottom: 44, left: 58 };
/** Generous text widths per character (CSS px) used to lay out labels without a browser. */
const LEGEND_CHAR_PIXELS = 7; // font-size 11
const TICK_CHAR_PIXELS = 6.5; // font-size 10

/** The y-axis label of every loss chart: what the number means. */
export const LOSS_AXIS_LABEL = 'loss ×, 1 = no idle lanes';

/** Right margin wide enough for the longest legend entry (line sample 24 px + text + 8 px). */
function rightMargin(names: readonly string[]): number {
  const longest = Math.max(0, ...names.map((name) => [...name].length));
  return Math.max(MARGIN.right, Math.ceil(12 + 24 + longest * LEGEND_CHAR_PIXELS + 8));
}

/** Escapes text for use inside SVG/HTML element content or attribute values. */
export function escapeXml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

function formatTick(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : Number(value.toPrecision(3)).toString();
}

function frame(title: string, xLabel: string, yLabel: string, width: number, height: number, right: number, kind: string, itemCount: number, body: string): string {
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="ww-chart" data-kind="${kind}" data-items="${itemCount}" ` +
    `width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${escapeXml(title)}">` +
    `<rect width="${width}" height="${height}" fill="#fff"/>` +
    `<text x="${MARGIN.left}" y="20" font-size="14" font-weight="600">${escapeXml(title)}</text>` +
    `<text x="${MARGIN.left + (width - MARGIN.left - right) / 2}" y="${height - 8}" font-size="12" text-anchor="middle">${escapeXml(xLabel)}</text>` +
    `<text transform="translate(14 ${MARGIN.top + (height - MARGIN.top - MARGIN.bottom) / 2}) rotate(-90)" font-size="12" text-anchor="middle">${escapeXml(yLabel)}</text>` +
    body +
    `</svg>`
  );
}

function legend(names: readonly string[], width: number, right: number, dashed: readonly boolean[] = [], rings: readonly boolean[] = []): string {
  return names
    .map((name, i) => {
      const y = MARGIN.top + 8 + i * 18;
      const x = width - right + 12;
      const colour = PALETTE[i % PALETTE.length];
      const sample = rings[i]
        ? `<circle cx="${x + 9}" cy="${y}" r="5" fill="none" stroke="${colour}" stroke-width="2"/>`
        : `<line x1="${x}" y1="${y}" x2="${x + 18}" y2="${y}" stroke="${colour}" stroke-width="2.5"${dashed[i] ? ' stroke-dasharray="5 3"' : ''}/>`;
      return `${sample}<text class="ww-legend" x="${x + 24}" y="${y + 4}" font-size="11">${escapeXml(name)}</text>`;
    })
    .join('');
}

/**
 * Renders a line chart as a standalone SVG string (no scripts, no external resources), so
 * that a report opens offline. Axes use d3-scale's "nice" ticks.
 *
 * @throws RangeError when no series has a finite point.
 * @example renderLineChart({ title: 'Loss vs n', xLabel: 'n', yLabel: 'E[X]', xScale: 'log2',
 *   series: [{ name: 'pois(30)', points: [[1, 1], [32, 1.4]] }] })
 */
export function renderLineChart(options: LineChartOptions): string {
  const width = options.widthPixels ?? 640;
  const height = options.heightPixels ?? 320;
  const points = options.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (points.length === 0) throw new RangeError(`chart '${options.title}' has no finite points to draw`);
  const xs = points.map(([x]) => x);
  const ys = points.map(([, y]) => y);
  const right = rightMargin(options.series.map((s) => s.name));
  const innerRight = width - right;
  const innerBottom = height - MARGIN.bottom;
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const x =
    options.xScale === 'log2'
      ? scaleLog().base(2).domain([Math.max(xMin, 1e-9), Math.max(xMax, xMin * 2)]).range([MARGIN.left, innerRight])
      : scaleLinear().domain(xMin === xMax ? [xMin - 1, xMax + 1] : [xMin, xMax]).nice().range([MARGIN.left, innerRight]);
  const yLow = Math.min(...ys);
  const yHigh = Math.max(...ys);
  const pad = (yHigh - yLow) * 0.08 || Math.abs(yHigh) * 0.05 || 1;
  const y = scaleLinear().domain([yLow - pad, yHigh + pad]).nice().range([innerBottom, MARGIN.top]);
  const floor = options.yFloor;
  if (floor !== undefined && floor <= yLow && (y.domain()[0] ?? floor) < floor) y.domain([floor, y.domain()[1] ?? yHigh + pad]);
  const uniqueXs = xs.filter((v, i, all) => all.indexOf(v) === i).sort((a, b) => a - b);
  // Many group sizes (a 1..32 sweep) would overlap: label powers of two only.
  const xTicks = options.xScale === 'log2' ? (uniqueXs.length > 8 ? uniqueXs.filter((v) => Number.isInteger(Math.log2(v))) : uniqueXs) : x.ticks(8);
  let body = '';
  const yFormat = y.tickFormat(6);
  for (const tick of y.ticks(6)) {
    body += `<line x1="${MARGIN.left}" x2="${innerRight}" y1="${y(tick)}" y2="${y(tick)}" stroke="#e5e5e5"/>`;
    body += `<text x="${MARGIN.left - 6}" y="${y(tick) + 4}" font-size="11" text-anchor="end">${yFormat(tick)}</text>`;
  }
  for (const tick of xTicks) {
    body += `<text class="ww-xtick" x="${x(tick)}" y="${innerBottom + 16}" font-size="11" text-anchor="middle">${formatTick(tick)}</text>`;
  }
  body += `<line x1="${MARGIN.left}" x2="${innerRight}" y1="${innerBottom}" y2="${innerBottom}" stroke="#333"/>`;
  body += `<line x1="${MARGIN.left}" x2="${MARGIN.left}" y1="${MARGIN.top}" y2="${innerBottom}" stroke="#333"/>`;
  const path = line<readonly [number, number]>()
    .x(([px]) => x(px))
    .y(([, py]) => y(py));
  // Lines first, then the points of line series, then marker-only series as hollow rings on top:
  // a series that coincides with another stays visible (the ring around the other's dot).
  const finiteOf = (series: ChartSeries): (readonly [number, number])[] => series.points.filter(([px, py]) => Number.isFinite(px) && Number.isFinite(py));
  options.series.forEach((series, i) => {
    const finite = finiteOf(series);
    if (!series.markersOnly && finite.length > 1) {
      body += `<path class="ww-series" data-series="${escapeXml(series.name)}" d="${path(finite) ?? ''}" fill="none" stroke="${PALETTE[i % PALETTE.length]}" stroke-width="2"${series.dashed ? ' stroke-dasharray="5 3"' : ''}/>`;
    }
  });
  const point = (series: ChartSeries, i: number, [px, py]: readonly [number, number]): string => {
    const colour = PALETTE[i % PALETTE.length];
    const paint = series.markersOnly ? `r="5" fill="none" stroke="${colour}" stroke-width="2"` : `r="3" fill="${colour}"`;
    return `<circle class="ww-point" data-series="${escapeXml(series.name)}" cx="${x(px)}" cy="${y(py)}" ${paint}><title>${escapeXml(series.name)}: (${formatTick(px)}, ${py.toFixed(4)})</title></circle>`;
  };
  for (const markersOnly of [false, true]) {
    options.series.forEach((series, i) => {
      if ((series.markersOnly ?? false) === markersOnly) for (const p of finiteOf(series)) body += point(series, i, p);
    });
  }
  body += legend(
    options.series.map((s) => s.name),
    width,
    right,
    options.series.map((s) => s.dashed ?? false),
    options.series.map((s) => s.markersOnly ?? false),
  );
  return frame(options.title, options.xLabel, options.yLabel, width, height, right, 'line', points.length, body);
}

/**
 * Bins (value, weight) pairs into at most `maxBins` equal-width bins for a histogram bar chart:
 * every bin from the smallest to the largest value, empty ones included (weight 0), so the
 * category axis stays linear. Labels are '7' (width 1) or '121–124'. Weights are summed, not
 * normalised.
 *
 * @example histogramBins([[1, 2], [4, 1]], 60) // [{ label: '1', values: [2] }, { label: '2', values: [0] }, ..., { label: '4', values: [1] }]
 */
export function histogramBins(pairs: readonly (readonly [number, number])[], maxBins: number): BarGroup[] {
  if (pairs.length === 0) return [];
  const values = pairs.map(([value]) => value);
  const low = Math.min(...values);
  const high = Math.max(...values);
  const binWidth = Math.max(1, Math.ceil((high - low + 1) / maxBins));
  const count = Math.floor((high - low) / binWidth) + 1;
  const sums = new Array<number>(count).fill(0);
  for (const [value, weight] of pairs) {
    const i = Math.floor((value - low) / binWidth);
    sums[i] = (sums[i] ?? 0) + weight;
  }
  return sums.map((sum, i) => {
    const start = low + i * binWidth;
    return { label: binWidth === 1 ? `${start}` : `${start}–${start + binWidth - 1}`, values: [sum] };
  });
}

/**
 * Renders a grouped bar chart (one bar per series inside each category) as a standalone SVG string.
 *
 * @throws RangeError when there are no groups or a value is negative or not finite.
 * @example renderBarChart({ title: 'Counts', xLabel: 'iterations', yLabel: 'probability',
 *   seriesNames: ['pmf'], groups: [{ label: '3', values: [0.2] }] })
 */
export function renderBarChart(options: BarChartOptions): string {
  const width = options.widthPixels ?? 640;
  const height = options.heightPixels ?? 280;
  if (options.groups.length === 0) throw new RangeError(`chart '${options.title}' has no bars to draw`);
  for (const group of options.groups) {
    for (const value of group.values) {
      if (!Number.isFinite(value) || value < 0) throw new RangeError(`chart '${options.title}': bar values must be finite and >= 0, got ${value}`);
    }
  }
  const right = rightMargin(options.seriesNames);
  const innerRight = width - right;
  const innerBottom = height - MARGIN.bottom;
  const x = scaleBand<string>()
    .domain(options.groups.map((g, i) => `${i}`))
    .range([MARGIN.left, innerRight])
    .padding(0.12);
  const inner = scaleBand<string>()
    .domain(options.seriesNames.map((_, i) => `${i}`))
    .range([0, x.bandwidth()])
    .padding(0.05);
  const maxValue = Math.max(...options.groups.flatMap((g) => g.values), 0);
  const y = scaleLinear().domain([0, maxValue || 1]).nice().range([innerBottom, MARGIN.top]);
  let body = '';
  const yFormat = y.tickFormat(5);
  for (const tick of y.ticks(5)) {
    body += `<line x1="${MARGIN.left}" x2="${innerRight}" y1="${y(tick)}" y2="${y(tick)}" stroke="#e5e5e5"/>`;
    body += `<text x="${MARGIN.left - 6}" y="${y(tick) + 4}" font-size="11" text-anchor="end">${yFormat(tick)}</text>`;
  }
  // Label every k-th group, k large enough that the widest label fits in k bands with a gap.
  const widestLabel = Math.max(...options.groups.map((g) => [...g.label].length)) * TICK_CHAR_PIXELS + 8;
  const labelEvery = Math.max(1, Math.ceil(options.groups.length / (options.maxXLabels ?? 20)), Math.ceil(widestLabel / Math.max(x.step(), 1e-9)));
  let bars = 0;
  options.groups.forEach((group, gi) => {
    const left = x(`${gi}`) ?? 0;
    group.values.forEach((value, si) => {
      const top = y(value);
      body += `<rect class="ww-bar" x="${left + (inner(`${si}`) ?? 0)}" y="${top}" width="${Math.max(inner.bandwidth(), 0.5)}" height="${innerBottom - top}" fill="${PALETTE[si % PALETTE.length]}"><title>${escapeXml(group.label)} ${escapeXml(options.seriesNames[si] ?? '')}: ${value.toPrecision(4)}</title></rect>`;
      bars += 1;
    });
    if (gi % labelEvery === 0) {
      body += `<text class="ww-xtick" x="${left + x.bandwidth() / 2}" y="${innerBottom + 16}" font-size="10" text-anchor="middle">${escapeXml(group.label)}</text>`;
    }
  });
  body += `<line x1="${MARGIN.left}" x2="${innerRight}" y1="${innerBottom}" y2="${innerBottom}" stroke="#333"/>`;
  body += legend(options.seriesNames, width, right);
  return frame(options.title, options.xLabel, options.yLabel, width, height, right, 'bar', bars, body);
}
