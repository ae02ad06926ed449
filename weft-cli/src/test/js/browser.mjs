// What both browser scripts share: headless Debian Chromium through playwright-core, a page that records script
// errors, and the exit code (0 when the checks passed, 1 with the reason otherwise).
import { chromium } from 'playwright-core';

export const TIMEOUT = 20000;

/** A screenshot of the page down to the end of its content (the header and <main>), not the empty rest. */
export async function shot(page, file) {
  const height = await page.evaluate(() => Math.ceil(document.querySelector('main').getBoundingClientRect().bottom + 8));
  await page.screenshot({ path: file, fullPage: true, clip: { x: 0, y: 0, width: 1400, height: Math.max(200, height) } });
}

/** Runs checks(page) in a fresh page; any thrown error, or any error in the page's own scripts, fails the run. */
export async function run(executablePath, checks) {
  const browser = await chromium.launch({ executablePath: executablePath || '/usr/bin/chromium', args: ['--no-sandbox'] });
  const errors = [];
  let failed = false;
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    page.on('pageerror', e => errors.push(`page error: ${e.message}`));
    // The dashboard asks GET /v1/diagnose and expects a 404 while that route is absent: not an error.
    page.on('console', m => { if (m.type() === 'error' && !m.text().includes('404')) errors.push(`console: ${m.text()}`); });
    await checks(page);
    if (errors.length) throw new Error(errors.join('\n'));
  } catch (e) {
    failed = true;
    console.error(`FAILED: ${e.message}`);
  } finally {
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
}
