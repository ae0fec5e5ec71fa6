import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findChromium } from '../../deploy/local/index.ts';
import type { DemoResults } from './demo-results.ts';

// A real `warpwatch demo --quick` (CPU workloads → in-process estimator → report), then the
// report is opened in headless Chromium (found by deploy/local/browser.ts) and every chart is checked.
const root = fileURLToPath(new URL('../..', import.meta.url));
const outDir = join(root, 'test-output', 'report-browser');
let stdout = '';
let browser: Browser | undefined;

beforeAll(async () => {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  // Asynchronous on purpose: a blocking spawnSync would starve the test worker's RPC while the kernels build.
  const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'demo', '--quick', '--no-progress', '--out', outDir], { cwd: root });
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`warpwatch demo --quick exited ${code}: ${stderr}`);
  // WARPWATCH_CHROMIUM, else the system's Chromium, else the one inside the @sparticuz/chromium devDependency: never skipped.
  const found = await findChromium();
  browser = await chromium.launch({ executablePath: found.executablePath, args: [...found.args] });
}, 900_000);

afterAll(async () => {
  await browser?.close();
});

/**
 * Layout problems inside every chart of the page (empty when none): text (legends, tick labels,
 * axis labels) outside its SVG box, overlapping x tick labels, a marker-only series' ring hidden
 * under something else, a line series without a drawn path. The viewport must hold the whole
 * page (elementFromPoint sees only the viewport).
 */
async function chartProblems(page: Page): Promise<string[]> {
  return page.$$eval('svg.ww-chart', (elements) =>
    elements.flatMap((svg) => {
      const title = svg.getAttribute('aria-label') ?? '';
      const svgBox = svg.getBoundingClientRect();
      const found: string[] = [];
      for (const text of svg.querySelectorAll('text')) {
        const r = text.getBoundingClientRect();
        const outside = r.left < svgBox.left - 0.5 || r.right > svgBox.right + 0.5 || r.top < svgBox.top - 0.5 || r.bottom > svgBox.bottom + 0.5;
        if (outside) found.push(`${title}: text '${text.textContent}' cut (${r.left.toFixed(0)}..${r.right.toFixed(0)} outside ${svgBox.left.toFixed(0)}..${svgBox.right.toFixed(0)})`);
      }
      const ticks = [...svg.querySelectorAll('text.ww-xtick')].map((t) => ({ label: t.textContent ?? '', r: t.getBoundingClientRect() })).sort((a, b) => a.r.left - b.r.left);
      for (let i = 1; i < ticks.length; i += 1) {
        const previous = ticks[i - 1];
        const current = ticks[i];
        if (previous !== undefined && current !== undefined && current.r.left < previous.r.right) found.push(`${title}: tick labels '${previous.label}' and '${current.label}' overlap`);
      }
      // Marker-only series (loss_counts) are hollow rings: each must be the topmost element on
      // its own stroke (left edge + 1 px), i.e. not hidden under a line or another series' dot.
      for (const circle of svg.querySelectorAll('circle.ww-point[fill="none"]')) {
        const r = circle.getBoundingClientRect();
        const hit = document.elementFromPoint(r.left + 1, (r.top + r.bottom) / 2);
        if (hit !== circle && hit?.parentElement !== circle) found.push(`${title}: point of ${circle.getAttribute('data-series')} hidden under ${hit?.tagName} ${hit?.getAttribute('data-series') ?? ''}`);
      }
      // Lines are present: a drawn path of visible length for each line series.
      for (const path of svg.querySelectorAll('path.ww-series')) {
        if (!((path as SVGPathElement).getTotalLength() > 10)) found.push(`${title}: line ${path.getAttribute('data-series')} not drawn`);
      }
      return found;
    }),
  );
}

describe('demo report in a real browser', () => {
  it('prints the summary, the report path and the JSON path', () => {
    // The summary leads with the answer: one headline per workload variant before the table.
    const firstLine = stdout.split('\n').find((line) => /warps idle/.test(line));
    expect(firstLine).toMatch(/^matpow \S+, n = 32: warps idle \d+\.\d% of lane time/);
    expect(stdout.indexOf('warps idle')).toBeLessThan(stdout.indexOf('loss_measured  loss_counts'));
    expect(stdout).toMatch(/idle lane time\s+loss_measured\s+loss_counts\s+loss_locality\s+indep\. lanes \(ref\.\)/);
    expect(stdout).toMatch(/escape plain, n = 32: warps idle/);
    expect(stdout).toMatch(/what to change: /);
    expect(stdout).toContain(`report:  ${join(outDir, 'report.html')}`);
    expect(stdout).toContain(`results: ${join(outDir, 'results.json')}`);
    expect(stdout).toMatch(/not GPU numbers/);
    const results = JSON.parse(readFileSync(join(outDir, 'results.json'), 'utf8')) as DemoResults;
    expect(results.runs).toHaveLength(14);
  });

  it('renders every chart non-empty, loads nothing from the network, and saves a screenshot', async () => {
    if (browser === undefined) throw new Error('no browser');
    // 1400 px: the window in which the summary table used to be 1670 px wide.
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const requests: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith('file://')) requests.push(request.url());
    });
    await page.goto(`file://${join(outDir, 'report.html')}`);
    const charts = await page.$$eval('svg.ww-chart', (elements) =>
      elements.map((svg) => {
        const box = svg.getBoundingClientRect();
        return {
          title: svg.getAttribute('aria-label') ?? '',
          items: Number(svg.getAttribute('data-items')),
          drawn: svg.querySelectorAll('rect.ww-bar, circle.ww-point').length,
          paths: svg.querySelectorAll('path.ww-series').length,
          width: box.width,
          height: box.height,
        };
      }),
    );
    // 7 histograms, 7 loss-per-n charts, the sweep, the sorting chart.
    expect(charts).toHaveLength(16);
    for (const chart of charts) {
      expect(chart.items, chart.title).toBeGreaterThan(0);
      expect(chart.drawn, chart.title).toBe(chart.items);
      expect(chart.width * chart.height, chart.title).toBeGreaterThan(10_000);
    }
    expect(charts.find((c) => c.title.startsWith('Granularity sweep'))?.paths).toBeGreaterThan(0);
    expect(requests).toEqual([]);

    // The answer comes first: the headlines are the first section, one per workload variant.
    const layout = await page.evaluate(() => {
      const firstH2 = document.querySelector('h2');
      const headlines = [...document.querySelectorAll('#headlines li')].map((li) => li.textContent ?? '');
      const box = document.querySelector('#results-box');
      const table = document.querySelector('#results');
      const boxRect = box?.getBoundingClientRect();
      return {
        firstSection: firstH2?.textContent ?? '',
        headlines,
        whatToChange: document.querySelectorAll('#what-to-change h3').length,
        pageScrollWidth: document.documentElement.scrollWidth,
        viewportWidth: window.innerWidth,
        boxRight: boxRect?.right ?? Number.NaN,
        boxClientWidth: box?.clientWidth ?? 0,
        boxOverflowX: box === null ? '' : getComputedStyle(box).overflowX,
        tableWidth: table?.getBoundingClientRect().width ?? 0,
      };
    });
    expect(layout.firstSection).toMatch(/How much the warps idle/);
    expect(layout.headlines).toHaveLength(7);
    for (const headline of layout.headlines) expect(headline).toMatch(/warps idle \d+\.\d% of lane time.*What to change: \S/s);
    expect(layout.whatToChange).toBe(7);
    // The table fits or scrolls inside its own box; the page never scrolls sideways.
    expect(layout.boxRight).toBeLessThanOrEqual(layout.viewportWidth);
    expect(layout.pageScrollWidth).toBeLessThanOrEqual(layout.viewportWidth);
    if (layout.tableWidth > layout.boxClientWidth) expect(layout.boxOverflowX).toBe('auto');

    // The first screen as a reader sees it (headlines, summary table), for a person to look at.
    await page.screenshot({ path: join(outDir, 'report-top.png') });
    // elementFromPoint sees only the viewport: make it as tall as the page (width unchanged).
    const pageHeight = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: 1400, height: pageHeight });
    // Inside every chart: legend texts and x tick labels inside the SVG box, tick labels apart,
    // rings on top, lines drawn.
    const problems = await chartProblems(page);
    expect(problems).toEqual([]);
    const lossCharts = await page.$$eval('svg.ww-chart[aria-label$="predicted vs measured"]', (elements) =>
      elements.map((svg) => ({
        lines: [...svg.querySelectorAll('path.ww-series')].map((p) => p.getAttribute('data-series')),
        rings: svg.querySelectorAll('circle.ww-point[data-series="loss_counts"]').length,
        yLabel: [...svg.querySelectorAll('text')].some((t) => t.textContent === 'loss ×, 1 = no idle lanes'),
      })),
    );
    expect(lossCharts).toHaveLength(7);
    for (const chart of lossCharts) expect(chart).toEqual({ lines: ['loss_locality', 'independent lanes (reference)', 'loss_measured'], rings: 2, yLabel: true });
    const screenshot = join(outDir, 'report.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(existsSync(screenshot)).toBe(true);
    // Close-ups of the charts the issue named (histogram ticks, lines, legends), for a person to look at.
    for (const [file, selector] of [
      ['histograms.png', 'h2:has-text("Iteration-count distributions") + .grid'],
      ['loss-per-n.png', 'h2:has-text("Predicted vs measured") + .grid'],
      ['sweep.png', 'svg[aria-label^="Granularity sweep"]'],
    ] as const) {
      await page.locator(selector).first().screenshot({ path: join(outDir, file) });
    }
    await page.close();
  });

  it('advise --html shows the observed loss and the ICC beside the model, laid out within the window', async () => {
    if (browser === undefined) throw new Error('no browser');
    const html = join(outDir, 'advice.html');
    const child = spawn(process.execPath, ['bin/warpwatch.mjs', 'advise', '--workload', 'escape', '--n', '32', '--html', html], { cwd: root });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, stderr).toBe(0);
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`file://${html}`);
    const observed = await page.$$eval('#observed tbody tr', (rows) => rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    const model = observed.find((row) => row[0]?.startsWith('model, independent lanes'));
    const counts = observed.find((row) => row[0]?.startsWith('observed loss_counts'));
    const icc = observed.find((row) => row[0]?.startsWith('ICC(counts)'));
    // escape's neighbouring pixels: the counts lose far less than independent lanes would, and correlate.
    expect(Number(model?.[1])).toBeGreaterThan(3);
    expect(Number(counts?.[1])).toBeGreaterThan(1);
    expect(Number(counts?.[1])).toBeLessThan(0.8 * Number(model?.[1]));
    expect(Number(icc?.[1])).toBeGreaterThan(0.3);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(1400);
    await page.setViewportSize({ width: 1400, height: await page.evaluate(() => document.documentElement.scrollHeight) });
    expect(await chartProblems(page)).toEqual([]);
    await page.screenshot({ path: join(outDir, 'advice.png'), fullPage: true });
    await page.close();
  });
});
