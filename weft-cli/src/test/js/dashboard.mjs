// Drives the control plane's dashboard in headless Chromium (Debian's chromium, through playwright-core) against a
// running mesh, and fails (exit 1) unless: the map shows the services and their edges, clicking an edge opens its
// latency chart, a trace's waterfall renders with its critical path, the sidecars page reads a /config, and the
// map refreshes by itself. Screenshots go to the output folder. Run by DashboardTest:
//   node dashboard.mjs BASE_URL OUT_DIR CHROMIUM_PATH
import path from 'node:path';
import { run, shot, TIMEOUT } from './browser.mjs';

const [base, out, executablePath] = process.argv.slice(2);
if (!base || !out) {
  console.error('usage: node dashboard.mjs BASE_URL OUT_DIR [CHROMIUM_PATH]');
  process.exit(2);
}
await run(executablePath, async (page) => {
  let mapPolls = 0;
  page.on('response', r => { if (r.url().includes('/v1/ui/map')) mapPolls++; });
  // The last GET /v1/diagnose answer the page itself got (null when not 200): what its map marks come from.
  let pageDiagnosis;
  page.on('response', async r => {
    if (!r.url().includes('/v1/diagnose')) return;
    try { pageDiagnosis = r.ok() ? await r.json() : null; } catch { pageDiagnosis = null; }
  });

  // The map: the three services and the two edges between them.
  await page.goto(`${base}/ui/#/map`);
  for (const s of ['gateway', 'consumer', 'provider']) {
    await page.waitForSelector(`svg.map g.node[data-service="${s}"]`, { timeout: TIMEOUT });
  }
  await page.waitForSelector('svg.map g.edge[data-from="gateway"][data-to="consumer"]', { timeout: TIMEOUT });
  await page.waitForSelector('svg.map g.edge[data-from="consumer"][data-to="provider"][data-health="ok"]', { timeout: TIMEOUT });
  console.log('map: services gateway, consumer, provider; edges gateway → consumer, consumer → provider');
  // The culprits the map marks are the ones GET /v1/diagnose named in the answer the map got (none in this healthy
  // mesh; the scenarios with a fault are DiagnoseScenariosTest's, through culprit.mjs). Not a second request of the
  // script's own: on a busy machine a later answer can name what the map's, a moment before, rightly did not.
  const since = Date.now();
  while (pageDiagnosis === undefined && Date.now() - since < TIMEOUT) await page.waitForTimeout(50);
  if (pageDiagnosis === undefined) throw new Error('the map never asked GET /v1/diagnose');
  const diag = pageDiagnosis;
  const marked = await page.$$eval('svg.map g.node.culprit', ns => ns.map(n => n.dataset.service));
  if (diag) {
    const named = (diag.culprits || []).map(c => c.service).filter(s => ['gateway', 'consumer', 'provider'].includes(s));
    for (const s of named) if (!marked.includes(s)) throw new Error(`culprit ${s} from /v1/diagnose not marked (marked: ${marked})`);
    console.log(`culprit: /v1/diagnose names [${named}], map marks [${marked}]`);
  } else {
    if (marked.length) throw new Error(`no /v1/diagnose, yet the map marks ${marked}`);
    console.log('culprit: /v1/diagnose absent, none marked');
  }
  await shot(page, path.join(out, 'map.png'));

  // Live: the map polls again without a reload (every 5 s): waited for until it does, 6 s at most.
  const before = mapPolls;
  const from = Date.now();
  while (mapPolls <= before && Date.now() - from < 6000) await page.waitForTimeout(100);
  if (mapPolls <= before) throw new Error(`the map did not refresh by itself in 6 s (${mapPolls} polls)`);
  console.log(`live: map refreshed by itself ${Date.now() - from} ms later`);

  // Clicking an edge opens its latency chart, with a p99 line drawn.
  await page.click('svg.map g.edge[data-from="consumer"][data-to="provider"] path.hit', { force: true });
  await page.waitForSelector('#edge-charts svg.chart[data-title^="Latency"] path[data-series="p99"]', { timeout: TIMEOUT });
  const d = await page.getAttribute('#edge-charts svg.chart[data-title^="Latency"] path[data-series="p99"]', 'd');
  if (!d || !d.includes('L')) throw new Error(`the edge's p99 line is empty: '${d}'`);
  console.log('edge chart: consumer → provider latency drawn');
  await shot(page, path.join(out, 'edge.png'));

  // A service page: its endpoints and mesh tax.
  await page.goto(`${base}/ui/#/service/provider`);
  await page.waitForSelector('svg.chart[data-title^="Mesh tax"]', { timeout: TIMEOUT });
  await shot(page, path.join(out, 'service.png'));

  // Traces: search through the gateway, open the first, and see its waterfall with a critical path.
  await page.goto(`${base}/ui/#/traces?service=gateway`);
  await page.waitForSelector('#trace-list tbody tr a', { timeout: TIMEOUT });
  await shot(page, path.join(out, 'traces.png'));
  // The newest traces may still miss spans whose batch is on its way: search until 5 s ago (the 'until' field) and
  // open one that has all four spans.
  await page.evaluate(() => {
    const d = new Date(Date.now() - 5000);
    const pad = n => String(n).padStart(2, '0');
    const until = document.querySelector('#trace-until');
    until.value = `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
    until.dispatchEvent(new Event('change'));
  });
  const whole = await page.waitForFunction(() => {
    const row = [...document.querySelectorAll('#trace-list tbody tr')].find(r => Number(r.children[3].textContent) >= 4);
    return row ? row.querySelector('a').textContent : null;
  }, null, { timeout: TIMEOUT });
  const id = await whole.jsonValue();
  // Followed as a click would (the list redraws every 5 s, so the row's element may be replaced under the mouse).
  await page.evaluate(traceId => { location.hash = `#/trace/${traceId}`; }, id);
  await page.waitForSelector('#waterfall .wf-row .wf-seg', { timeout: TIMEOUT });
  const rows = await page.$$eval('#waterfall .wf-row', rs => rs.length);
  const crit = await page.$$eval('#waterfall .wf-row.crit', rs => rs.length);
  const kinds = await page.$$eval('#waterfall .wf-seg', ss => [...new Set(ss.map(s => s.className.replace('wf-seg seg-', '')))]);
  // The whole path: gateway → consumer (CLIENT, SERVER) and consumer → provider (CLIENT, SERVER); the example consumer
  // passes the trace context on.
  if (rows < 4) throw new Error(`the waterfall has ${rows} spans, expected the four of gateway → consumer → provider`);
  if (crit < 1) throw new Error('no span on the critical path');
  for (const k of ['queue', 'upstream', 'app']) if (!kinds.includes(k)) throw new Error(`no ${k} segment (have ${kinds})`);
  console.log(`waterfall: ${rows} spans, ${crit} on the critical path, segments ${kinds.join(', ')}`);
  await shot(page, path.join(out, 'waterfall.png'));

  // Sidecars: all four, ready, and one /config opened.
  await page.goto(`${base}/ui/#/sidecars`);
  await page.waitForSelector('#sidecar-list tr[data-instance="consumer-1"] button', { timeout: TIMEOUT });
  const ready = await page.$$eval('#sidecar-list tr[data-instance] .ok', es => es.length);
  if (ready < 4) throw new Error(`${ready} sidecars shown ready, expected 4`);
  await page.click('#sidecar-list tr[data-instance="consumer-1"] button');
  await page.waitForFunction(() => document.querySelector('pre[data-config="consumer-1"]')?.textContent.includes('"listeners"'), null, { timeout: TIMEOUT });
  console.log('sidecars: 4 ready, /config of consumer-1 shown');
  await shot(page, path.join(out, 'sidecars.png'));

  await page.goto(`${base}/ui/#/policies`);
  await page.waitForSelector('#policy-sidecars table', { timeout: TIMEOUT });
  await shot(page, path.join(out, 'policies.png'));
  console.log('policies: shown');
});
