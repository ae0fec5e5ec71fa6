import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
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

describe('demo report in a real browser', () => {
  it('prints the summary, the report path and the JSON path', () => {
    expect(stdout).toMatch(/loss_predicted\s+loss_counts\s+loss_measured/);
    expect(stdout).toContain(`report:  ${join(outDir, 'report.html')}`);
    expect(stdout).toContain(`results: ${join(outDir, 'results.json')}`);
    expect(stdout).toMatch(/not GPU numbers/);
    const results = JSON.parse(readFileSync(join(outDir, 'results.json'), 'utf8')) as DemoResults;
    expect(results.runs).toHaveLength(14);
  });

  it('renders every chart non-empty, loads nothing from the network, and saves a screenshot', async () => {
    if (browser === undefined) throw new Error('no browser');
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
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
    const screenshot = join(outDir, 'report.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    expect(existsSync(screenshot)).toBe(true);
    await page.close();
  });
});
