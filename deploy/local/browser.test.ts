import { chromium } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { findChromium } from './browser.ts';

describe('findChromium', () => {
  it('refuses a WARPWATCH_CHROMIUM that does not exist, with a coded error', async () => {
    await expect(findChromium({ WARPWATCH_CHROMIUM: '/nonexistent/chromium' })).rejects.toMatchObject({ code: 'WW_ERR_STACK_TOOL_MISSING' });
  });

  it('finds a Chromium with nothing set, and it renders a page', async () => {
    const found = await findChromium({});
    expect(['system', 'npm']).toContain(found.source);
    const browser = await chromium.launch({ executablePath: found.executablePath, args: [...found.args] });
    try {
      const page = await browser.newPage();
      await page.setContent('<p id="x">warpwatch</p>');
      expect(await page.textContent('#x')).toBe('warpwatch');
    } finally {
      await browser.close();
    }
  }, 120_000);
});
