// Checks that the dashboard's map marks what GET /v1/diagnose names, for the culprit-finding scenario tests once a
// fault is in place: node culprit.mjs BASE_URL OUT_DIR CHROMIUM_PATH CULPRIT [BACK_PRESSURE...]
// Checks that the map shows the four tiers (entry, a, b, c) and their edges, then waits (up to 40 s: the map asks for a
// diagnosis every 15 s) until the node of CULPRIT is marked CULPRIT and each
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
  // The four-tier topology of DiagnoseScenariosTest: its four services and the three edges between them.
  for (const s of ['entry', 'a', 'b', 'c']) {
    await page.waitForSelector(`svg.map g.node[data-service="${s}"]`, { timeout: 40000 });
  }
  for (const [from, to] of [['entry', 'a'], ['a', 'b'], ['b', 'c']]) {
    await page.waitForSelector(`svg.map g.edge[data-from="${from}"][data-to="${to}"]`, { timeout: 40000 });
  }
  await page.waitForSelector(`svg.map g.node.culprit[data-service="${culprit}"]`, { timeout: 40000 });
  for (const s of backPressure) {
    await page.waitForSelector(`svg.map g.node.backpressure[data-service="${s}"]`, { timeout: 40000 });
  }
  const verdict = await page.textContent('#culprit');
  console.log(`map: services entry, a, b, c; edges entry → a, a → b, b → c; culprit: ${culprit} marked${backPressure.length ? `, back-pressure: ${backPressure.join(', ')}` : ''}; verdict: ${verdict}`);
  await shot(page, path.join(out, `culprit-${culprit}.png`));
});
