// Checks that the dashboard's map marks what GET /v1/diagnose names, for the culprit-finding scenario tests once a
// fault is in place: node culprit.mjs BASE_URL OUT_DIR CHROMIUM_PATH CULPRIT [BACK_PRESSURE...]
// Waits (up to 40 s: the map asks for a diagnosis every 15 s) until the node of CULPRIT is marked CULPRIT and each
// BACK_PRESSURE node is marked back-pressure, then saves culprit-CULPRIT.png. Run through BrowserScript.run.
import path from 'node:path';
import { run, shot } from './browser.mjs';

const [base, out, executablePath, culprit, ...backPressure] = process.argv.slice(2);
if (!culprit) {
  console.error('usage: node culprit.mjs BASE_URL OUT_DIR CHROMIUM_PATH CULPRIT [BACK_PRESSURE...]');
  process.exit(2);
}
await run(executablePath, async (page) => {
  await page.goto(`${base}/ui/#/map`);
  await page.waitForSelector(`svg.map g.node.culprit[data-service="${culprit}"]`, { timeout: 40000 });
  for (const s of backPressure) {
    await page.waitForSelector(`svg.map g.node.backpressure[data-service="${s}"]`, { timeout: 40000 });
  }
  const verdict = await page.textContent('#culprit');
  console.log(`culprit: ${culprit} marked${backPressure.length ? `, back-pressure: ${backPressure.join(', ')}` : ''}; verdict: ${verdict}`);
  await shot(page, path.join(out, `culprit-${culprit}.png`));
});
