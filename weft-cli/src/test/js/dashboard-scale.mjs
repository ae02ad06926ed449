// The dashboard with 200 services and 2,000 endpoints registered (synthetic registrations, no traffic), in headless
// Chromium: the map draws the 60 it keeps by default and says how many it hid, the filter finds hidden ones, the
// sidecars page shows 200 rows of 2,000 and pages on. Run by DashboardScaleBrowserTest:
//   node dashboard-scale.mjs BASE_URL OUT_DIR CHROMIUM_PATH
import path from 'node:path';
import { run, shot, TIMEOUT } from './browser.mjs';

const [base, out, executablePath] = process.argv.slice(2);
await run(executablePath, async (page) => {
  await page.goto(`${base}/ui/#/map`);
  await page.waitForFunction(() => document.querySelectorAll('svg.map g.node').length === 60, null, { timeout: TIMEOUT });
  const info = await page.textContent('.toolbar .note');
  if (!info.includes('60 of 200 services shown') || !info.includes('140 quieter ones hidden')) {
    throw new Error(`the map does not say what it hid: '${info}'`);
  }
  const box = await page.$eval('svg.map', s => ({ w: s.width.baseVal.value, h: s.height.baseVal.value }));
  if (box.h > 1200) throw new Error(`the map is ${box.h} px tall: columns should wrap`);
  console.log(`map: 60 of 200 services drawn in ${box.w}x${box.h} px; ${info}`);
  await shot(page, path.join(out, 'map-200-services.png'));
  await page.fill('#map-filter', 'svc-19');
  await page.waitForFunction(() => document.querySelectorAll('svg.map g.node').length === 10, null, { timeout: TIMEOUT });
  console.log('filter: svc-19 shows its 10 services');
  await page.goto(`${base}/ui/#/sidecars`);
  await page.waitForFunction(() => document.querySelectorAll('#sidecar-list tr[data-instance]').length === 200, null, { timeout: TIMEOUT });
  await page.click('button:has-text("show more")');
  await page.waitForFunction(() => document.querySelectorAll('#sidecar-list tr[data-instance]').length === 400, null, { timeout: TIMEOUT });
  console.log('sidecars: 200 of 2000 shown, then 400 after "show more"');
});
